// Package firstfit implements first-fit scheduling with backfilling: at
// each decision point the pending jobs are taken in arrival order and every
// one that fits starts, packed onto the first node with room for all of its
// GPUs, or, for a job larger than any node's free GPUs, onto nodes in index
// order. Jobs are never preempted.
//
// # Usage
//
//	p, _ := firstfit.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package firstfit
