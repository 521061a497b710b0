package leakcheck_test

import (
	"testing"

	"github.com/drover-sched/drover/internal/leakcheck"
)

// The main loop: Check first, then start what the test needs, each
// stopped by a cleanup registered after Check's, so run before it.
func ExampleCheck() {
	test := func(t *testing.T) {
		leakcheck.Check(t)
		done := make(chan struct{})
		go func() { <-done }()
		t.Cleanup(func() { close(done) })
	}
	_ = test
}
