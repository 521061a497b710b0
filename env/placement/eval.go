package placement

import "github.com/drover-sched/drover/env"

// Run plays one episode with seed, choosing actions with act (which gets
// the observation and the action mask), and returns the run's summary.
func (e *Env) Run(seed uint64, act func(obs []float64, mask []bool) int) env.Summary {
	obs, _ := e.Reset(seed)
	mask := make([]bool, 0, e.ActionSpace().N)
	for {
		mask = e.ActionMask(mask)
		var term, trunc bool
		obs, _, term, trunc, _ = e.Step(act(obs, mask))
		if term || trunc {
			return e.Summary()
		}
	}
}

// FirstValid is the baseline action rule: the first group that holds the
// job, else spread.
func FirstValid(_ []float64, mask []bool) int {
	for a, ok := range mask {
		if ok {
			return a
		}
	}
	return len(mask) - 1
}
