package leakcheck_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/internal/leakcheck"
)

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }

// TestWait: a goroutine still running is reported (with the stacks), and
// one that ends within the retries is not.
func TestWait(t *testing.T) {
	defer func(p time.Duration) { *leakcheck.Patience = p }(*leakcheck.Patience)
	*leakcheck.Patience = time.Second // the leak below never ends by itself
	stop := make(chan struct{})
	var r recorder
	r.TB = t
	before := runtime.NumGoroutine()
	go func() { <-stop }()
	leakcheck.Wait(&r, before)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "goroutine leak") {
		t.Fatalf("a goroutine left running: %q, want one leak report", r.errs)
	}
	close(stop)
	r.errs = nil
	leakcheck.Wait(&r, before)
	if len(r.errs) != 0 {
		t.Fatalf("after the goroutine ended: %q, want none", r.errs)
	}
}
