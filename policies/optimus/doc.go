// Package optimus implements Optimus+Oracle as the Pollux simulator does
// (petuum/adaptdl osdi21-artifact, simulator/optimus.py). Every active job
// gets one GPU while GPUs last; the remaining GPUs go one at a time to the
// job whose remaining time drops the most from one more GPU (remaining
// iterations x the step-time saving, both from the model's oracle), up to
// the job's maximum. Jobs keep their allocation when their GPU count is
// unchanged; the others are (re)packed onto the nodes with the most free
// GPUs, smallest jobs first. The run's model must implement env.Oracle.
//
// # Usage
//
//	p, _ := optimus.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package optimus
