// Package tiresias implements Tiresias (NSDI'19) as the Pollux simulator
// does (petuum/adaptdl osdi21-artifact, simulator/tiresias.py): discretized
// two-queue least-attained-service. Every job enters queue 0; when its
// executed time times its GPUs reaches the demotion threshold (16 GPU-hours)
// it moves to the back of queue 1. At each decision point the policy walks
// queue 0 then queue 1 and marks a job running if its GPUs still fit in the
// cluster's GPU count, else pending (preempting it if it ran). Running jobs
// keep their allocation; newly running jobs are packed onto the nodes with
// the most free GPUs. Starvation handling is off, as in the reference.
// Executed time is counted in whole seconds between decision points.
//
// # Usage
//
//	p, _ := tiresias.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package tiresias
