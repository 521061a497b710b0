package trace_test

import (
	"fmt"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// Replay the embedded default workload under first-fit with Drover's model
// and the embedded fitted profiles.
func Example() {
	w := datasets.Builtin()
	profiles, src, err := trace.Profiles("builtin", "")
	if err != nil {
		panic(err)
	}
	p, err := builtin.Registry().New("first-fit", policies.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	res, err := trace.Run(trace.Options{
		Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
		Nodes: 16, GPUsPerNode: 4, Interval: -1, RestartDelay: -1,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(src)
	fmt.Printf("%d of %d jobs finished\n", res.Summary.Finished, res.Summary.Jobs)
	// Output:
	// builtin (fitted)
	// 400 of 400 jobs finished
}
