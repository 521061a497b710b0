package policies_test

import (
	"fmt"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// The decision loop: the simulator stops at each decision point, the policy
// answers, the simulator applies the answer.
func Example() {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	sim, err := env.New(env.Config{Cluster: env.Homogeneous(2, 4), Model: m}, []env.JobSpec{
		envtest.MakeJob("a").GPUs(4).Duration(100).Obj(),
		envtest.MakeJob("b").GPUs(6).Submit(10).Duration(50).Obj(),
	})
	if err != nil {
		panic(err)
	}
	p, err := builtin.Registry().New("first-fit", policies.Config{})
	if err != nil {
		panic(err)
	}
	for {
		v, err := sim.Next()
		if err == env.ErrDone {
			break
		}
		if err != nil {
			panic(err)
		}
		ds, err := p.Schedule(v)
		if err != nil {
			panic(err)
		}
		if err := sim.Apply(ds); err != nil {
			panic(err)
		}
	}
	for _, j := range sim.Jobs() {
		fmt.Printf("%s: start %.0f, finish %.0f\n", j.Spec.Name, j.FirstStart, j.Finish)
	}
	// Output:
	// a: start 0, finish 100
	// b: start 100, finish 150
}
