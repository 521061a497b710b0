// Package envtest is the simulator's test harness: a model profile whose
// numbers can be worked by hand, and fluent builders for jobs.
//
// # Usage
//
//	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 100, Epochs: 3})}
//	jobs := []env.JobSpec{envtest.MakeJob("a").GPUs(4).Duration(100).Obj()}
//	s, _ := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, jobs)
package envtest
