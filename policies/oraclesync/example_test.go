package oraclesync_test

import (
	"fmt"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// One 8-GPU job over two nodes, 1 s of compute and 0.5 s of all-reduce
// per iteration: first-fit places it, and each sync rule picks its
// strategy on that placement. The oracle weighs local SGD with periods 4,
// 8 and 16 and takes 4; STRN's rule knows only period 8.
func Example() {
	for _, name := range []string{"first-fit+oracle-sync", "first-fit+strn-sync", "first-fit+local(16)"} {
		m := &env.Drover{Profiles: envtest.Profiles(flat), GPUsPerNode: 4, Workers: &env.Workers{}}
		sim, err := env.New(env.Config{Cluster: env.Homogeneous(2, 4), Model: m},
			[]env.JobSpec{envtest.MakeJob("a").GPUs(8).Duration(1000).Obj()})
		if err != nil {
			panic(err)
		}
		p, err := builtin.Registry().New(name, policies.Config{Seed: 1})
		if err != nil {
			panic(err)
		}
		if err := sim.Run(p, nil); err != nil {
			panic(err)
		}
		fmt.Printf("%-22s %-9v TTA %.2f s\n", name, sim.Jobs()[0].Sync, sim.Summary().AvgTTA)
	}
	// Output:
	// first-fit+oracle-sync  local(4)  TTA 795.00 s
	// first-fit+strn-sync    local(8)  TTA 807.50 s
	// first-fit+local(16)    local(16) TTA 893.75 s
}
