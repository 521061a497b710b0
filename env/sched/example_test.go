package sched_test

import (
	"fmt"
	"math"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/env/sched"
)

// Example runs one episode of the scheduling environment with the first
// valid action of every job (the first group's template under BSP) and
// checks the reward's accounting: the return is minus the GPU-held hours.
func Example() {
	prof := envtest.Flat{Step: 0.1, Sync: 0.02, PerEpoch: 0.1, Epochs: 10}
	var jobs []env.JobSpec
	for i := range 8 {
		jobs = append(jobs, env.JobSpec{Name: fmt.Sprint("job", i), Submit: float64(100 * i), GPUs: 1 << (i % 3), Model: envtest.FlatName, Duration: 900})
	}
	e, _ := sched.NewEnv(sched.EnvConfig{Jobs: jobs, Cluster: env.Homogeneous(2, 4), RestartDelay: 10,
		NewModel: func(uint64) env.Model { return &env.Drover{Profiles: envtest.Profiles(prof)} }})
	_, _ = e.Reset(1)
	var mask []bool
	ret, steps := 0.0, 0
	for {
		mask = e.ActionMask(mask)
		a := 0
		for !mask[a] {
			a++
		}
		_, r, done, _, _ := e.Step(a)
		ret, steps = ret+r, steps+1
		if done {
			break
		}
	}
	held := 0.0
	for _, j := range e.Jobs() {
		held += j.Held / 3600
	}
	fmt.Printf("%d decisions, %d actions each (9 slots x 4 strategies); return = minus GPU-held hours: %v\n",
		steps, e.ActionSpace().N, math.Abs(ret+held) < 1e-9)
	// Output:
	// 8 decisions, 36 actions each (9 slots x 4 strategies); return = minus GPU-held hours: true
}
