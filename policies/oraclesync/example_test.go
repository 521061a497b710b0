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
// strategy on that placement. Local SGD reaches the job's target in BSP's
// iterations under the convergence model (it ends a little less
// accurate), so the longest period communicates least: the oracle weighs
// periods 4, 8 and 16 and takes 16. STRN's rule takes only strategies
// that keep the job as accurate as BSP: the flat profile's model falls
// back to ResNet50 on ImageNet for local SGD, where local(8) loses 0.63
// points, and it keeps BSP.
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
	// first-fit+oracle-sync  local(16) TTA 687.50 s
	// first-fit+strn-sync    bsp       TTA 1000.00 s
	// first-fit+local(16)    local(16) TTA 687.50 s
}
