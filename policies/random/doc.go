// Package random implements a random scheduler, the floor any policy must
// beat: at each decision point it takes the pending jobs in a random order
// and starts each one that fits on randomly chosen free GPUs (any node, no
// packing). Jobs are never preempted. Its choices come from a PCG source
// seeded by Config.Seed, so a seed fixes the run.
//
// # Usage
//
//	p, _ := random.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package random
