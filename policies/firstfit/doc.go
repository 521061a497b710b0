// Package firstfit implements first-fit scheduling with backfilling: at
// each decision point the pending jobs are taken in arrival order and every
// one that fits starts, packed onto the first node with room for all of its
// GPUs, or, for a job larger than any node's free GPUs, onto nodes in index
// order. Jobs are never preempted.
//
// Over a simulation's views (env.View.Seq, Changed, Touched) it keeps the
// pending jobs in one heap per GPU count and the free GPUs in a max tree,
// so a decision costs O(log) per job it starts instead of a scan of the
// queue and the cluster (1M jobs on 12,500 nodes replay in seconds); any
// other view (the policy server's, a live cluster's) takes the direct
// scan, which decides alike.
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
