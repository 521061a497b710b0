// Package fifo implements first-in-first-out scheduling without
// backfilling: jobs start strictly in arrival order, and a job that does not
// fit blocks every job behind it. Each job is packed first-fit (one node if
// any node has room, else nodes in index order). Jobs are never preempted.
//
// # Usage
//
//	p, _ := fifo.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package fifo
