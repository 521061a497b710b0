package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentTokenWithoutTLS: like drover place, drover agent refuses at
// start to send its bearer token in plaintext off loopback (it used to
// start and fail every call).
func TestAgentTokenWithoutTLS(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	err := runAgent([]string{"-server", "10.1.2.3:50051", "-token-file", tok, "-iter-addr", ""}, &o, &e)
	if err == nil || !strings.Contains(err.Error(), "plaintext") || !strings.Contains(err.Error(), "-tls-ca") {
		t.Errorf("runAgent: %v; want a refusal naming -tls-ca", err)
	}
}
