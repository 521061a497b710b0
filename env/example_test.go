package env_test

import (
	"fmt"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// A 4-GPU job and a 2-GPU job on one 4-GPU node, decided every 60 s: the
// second waits for the first.
func Example() {
	m := &env.Pollux{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 100, Epochs: 2})}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: 60, RestartDelay: 30, Log: true},
		[]env.JobSpec{
			{Name: "big", Submit: 0, GPUs: 4, Model: "flat", BatchSize: 128},
			{Name: "small", Submit: 30, GPUs: 2, Model: "flat", BatchSize: 64},
		})
	if err != nil {
		panic(err)
	}
	for {
		v, err := s.Next()
		if err == env.ErrDone {
			break
		}
		if err != nil {
			panic(err)
		}
		ds, _ := startAll{}.Schedule(v)
		if err := s.Apply(ds); err != nil {
			panic(err)
		}
	}
	fmt.Print(env.LogString(s.Events(), s.Jobs()))
	fmt.Printf("avg JCT %.0f s\n", s.Summary().AvgJCT)
	// Output:
	// 0.000 arrive big
	// 30.000 arrive small
	// 60.000 start big 0:4
	// 290.000 finish big
	// 300.000 start small 0:2
	// 530.000 finish small
	// avg JCT 395 s
}
