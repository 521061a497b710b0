package longtest_test

import (
	"testing"

	"github.com/drover-sched/drover/internal/longtest"
)

// A refit compared with the embedded model runs only in make test-long; an
// equivalence run checks fewer seeds in make test.
func Example() {
	refit := func(t *testing.T) {
		longtest.Skip(t, "refits the model on the whole trace")
		// ... fit, then compare with the embedded file byte for byte
	}
	equivalence := func(t *testing.T) {
		seeds := 20
		if longtest.Enabled() {
			seeds = 80
		}
		_ = seeds // ... compare with the reference on each seed
	}
	_, _ = refit, equivalence
}
