package direct_test

import (
	"fmt"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies/direct"
)

// Example loads the shipped strn-rl checkpoint and replays the built-in
// workload with it: every job is placed by the learned policy alone.
func Example() {
	meta, newPolicy, err := direct.Load("../../checkpoints/strn-rl")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := newPolicy().(*direct.Policy)
	prof, _, _ := trace.Profiles("builtin", "")
	w := datasets.Builtin()
	res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: prof, Policy: p,
		Nodes: 16, GPUsPerNode: 4, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	decided, held, invalid := p.Counts()
	fmt.Printf("%s (%s): %d of %d jobs finished; %d placed by the policy, %d held, %d invalid actions\n",
		meta.Env, meta.Algo, res.Summary.Finished, len(w.Jobs), decided, held, invalid)
	// Output:
	// strn-rl (ppo): 400 of 400 jobs finished; 400 placed by the policy, 0 held, 0 invalid actions
}
