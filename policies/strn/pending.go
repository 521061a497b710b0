package strn

import (
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// pendingJobs is the run's pending jobs in the order of View.Active (by
// ID) and the sum of View.Free, kept up to date from View.Changed and
// View.Touched while the Views continue one run, so that a decision
// point costs what changed, not the length of the queue and the cluster.
type pendingJobs struct {
	view  *env.View
	seq   int
	jobs  policies.Pending
	free  []int // View.Free at the last update
	total int   // its sum
}

// update brings p up to v, from its change lists when v follows the last
// View seen (the same View, the next Seq, as many nodes), else from
// scratch.
func (p *pendingJobs) update(v *env.View) {
	next := v == p.view && v.Seq != 0 && v.Seq == p.seq+1 && len(v.Free) == len(p.free)
	p.view, p.seq = v, v.Seq
	if !next {
		p.jobs.Reset(v.Active)
		p.free = append(p.free[:0], v.Free...)
		p.total = 0
		for _, f := range v.Free {
			p.total += f
		}
		return
	}
	for _, n := range v.Touched {
		p.total += v.Free[n] - p.free[n]
		p.free[n] = v.Free[n]
	}
	for _, j := range v.Changed {
		p.jobs.Follow(j)
	}
}

// delegate is env.Delegate with env.FirstCandidate over the pending jobs
// only: the same jobs proposed in the same order, since Delegate skips
// every job that is not pending.
func (s *STRN) delegate(v *env.View) []env.Decision {
	s.pending.update(v)
	s.Begin(v)
	return env.DelegateJobs(s, v, s.pending.jobs.Jobs, s.pending.total, env.FirstCandidate)
}
