package policies

import (
	"cmp"
	"slices"

	"github.com/drover-sched/drover/env"
)

// Pending is the pending jobs of a run in ID order (View.Active's order
// in a simulation, where IDs are arrival indexes), kept up to date from
// the change lists, so that a policy's decision point walks the queue
// without a pass over every active job: Reset from a View's active jobs
// when it cannot follow the run, then Follow each job of View.Changed.
type Pending struct {
	// Jobs are the pending jobs, ascending ID.
	Jobs []*env.Job
}

// Reset sets p to the pending jobs among active (in ID order).
func (p *Pending) Reset(active []*env.Job) {
	clear(p.Jobs)
	p.Jobs = p.Jobs[:0]
	for _, j := range active {
		if j.State == env.Pending {
			p.Jobs = append(p.Jobs, j)
		}
	}
}

// Follow updates p for job j, whose state changed: it joins the queue
// when pending, leaves it otherwise. Repeats are harmless.
func (p *Pending) Follow(j *env.Job) {
	i, in := slices.BinarySearchFunc(p.Jobs, j.ID, func(a *env.Job, id int) int { return cmp.Compare(a.ID, id) })
	switch pend := j.State == env.Pending; {
	case pend && !in:
		p.Jobs = slices.Insert(p.Jobs, i, j)
	case !pend && in:
		p.Jobs = slices.Delete(p.Jobs, i, i+1)
	}
}
