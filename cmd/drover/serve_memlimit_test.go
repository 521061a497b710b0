package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestServeMemLimitRefused: a negative -memlimit-mib is refused, naming
// the flag, before anything listens.
func TestServeMemLimitRefused(t *testing.T) {
	var o, e bytes.Buffer
	code := run([]string{"serve", "-addr", "127.0.0.1:0", "-metrics-addr", "", "-memlimit-mib", "-1"}, &o, &e)
	if code == 0 || !strings.Contains(e.String(), "-memlimit-mib") {
		t.Errorf("exit %d, stderr %q; want a refusal naming -memlimit-mib", code, e.String())
	}
}
