package envtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/drover-sched/drover/env"
)

// Chaos wraps a scheduler and, from its own random stream, sometimes does
// not consult it (Skip), drops one of its decisions (Drop) or preempts a
// running job (Preempt): what a composed policy or a live cluster may do
// to a policy's incremental state. With HideFree it shows the scheduler a
// View without the free GPUs (one not made by the simulator). Two runs
// with equal settings and streams disturb alike, so an incremental policy
// and its reference can be held to the same event log.
type Chaos struct {
	// P is the scheduler disturbed.
	P env.Scheduler
	// R is the chaos's own random stream.
	R *rand.Rand
	// Skip, Drop and Preempt are the probabilities, per decision point,
	// of not consulting P, of dropping one of its decisions and of
	// preempting the first running job.
	Skip, Drop, Preempt float64
	// HideFree shows P the View without its free GPUs.
	HideFree bool
}

// Schedule implements env.Scheduler. Each call draws one number for Skip,
// one for Drop when the scheduler decided something, and one for Preempt.
func (c *Chaos) Schedule(v *env.View) ([]env.Decision, error) {
	if c.R.Float64() < c.Skip {
		return nil, nil
	}
	sv := v
	if c.HideFree {
		w := *v
		w.Free = nil
		sv = &w
	}
	ds, err := c.P.Schedule(sv)
	if err != nil {
		return nil, err
	}
	if len(ds) > 0 && c.R.Float64() < c.Drop {
		k := c.R.IntN(len(ds))
		ds = append(ds[:k], ds[k+1:]...)
	}
	if c.R.Float64() < c.Preempt {
		for _, j := range v.Active {
			if j.State == env.Running {
				ds = append(ds, env.Decision{Job: j.ID})
				break
			}
		}
	}
	return ds, nil
}

// RandomScenario draws a small random cluster (1-12 nodes of 1-8 GPUs,
// racks of 4) and up to 200 jobs of the Flat model (mostly 1-4 GPUs, one
// in five up to the whole cluster, submitted within 3,000 s, running up
// to 2,000 s) from r: the workloads on which incremental policies are
// checked against their references.
func RandomScenario(r *rand.Rand) (env.Cluster, []env.JobSpec) {
	c := env.Cluster{IntraRackGbps: 100, CrossRackGbps: 40}
	for i := range 1 + r.IntN(12) {
		c.Nodes = append(c.Nodes, env.Node{Name: fmt.Sprint(i), GPUs: 1 + r.IntN(8), Speed: 1, NICGbps: 100, Rack: i / 4})
	}
	total := c.TotalGPUs()
	var specs []env.JobSpec
	for i := range 1 + r.IntN(200) {
		g := 1 + r.IntN(min(total, 4))
		if r.IntN(5) == 0 {
			g = 1 + r.IntN(total)
		}
		specs = append(specs, env.JobSpec{Name: fmt.Sprint("j", i), Submit: float64(r.IntN(3000)), GPUs: g,
			Duration: float64(1 + r.IntN(2000)), Model: FlatName})
	}
	return c, specs
}
