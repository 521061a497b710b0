// Package gandiva implements Gandiva-style packing (OSDI'18): pending jobs
// are taken in arrival order with backfilling, and each is placed to keep
// nodes whole and jobs of a size together. A job that fits on one node goes
// to the node with the fewest free GPUs that can hold it, preferring nodes
// already running jobs of the same GPU count (Gandiva's affinity); a larger
// job takes fully free nodes first, then the nodes with the most free GPUs.
// Gandiva's time-slicing, migration and introspection are not modelled:
// jobs are never preempted.
//
// # Usage
//
//	p, _ := gandiva.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package gandiva
