package themis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "themis"

// DefaultFilter is the default fairness knob f: the 1-f = 20% of the
// competing jobs with the largest rho are offered GPUs first. Themis
// (NSDI 2020, §5) leaves f to the operator, 0 for efficiency (every job
// bids) and towards 1 for fairness (only the worst-off bid); 0.8 is
// Drover's choice, fair-leaning, as a finish-time-fairness baseline
// should be.
const DefaultFilter = 0.8

// DefaultLease is the default lease, in seconds, for which a started job
// keeps its GPUs before it competes again: 10 minutes. Themis allocates
// GPUs for leases of minutes (its arbiter re-auctions at lease expiry);
// the length is Drover's choice, long enough that a job pays its restart
// delay (30 s by default) for a lease many times longer.
const DefaultLease = 600.0

// Themis is the finish-time fair scheduler (see the package doc). Its
// zero value is not usable: use New, or set Filter and Lease.
type Themis struct {
	// Filter is the fairness knob f in [0, 1): the share of the competing
	// jobs (the smallest rho first) left out of the first offer.
	Filter float64
	// Lease is the seconds a started job keeps its GPUs before competing
	// again.
	Lease float64

	info  []jobInfo // by job ID
	cands []cand    // scratch
	free  []int     // scratch: free GPUs per node
}

// jobInfo is what Themis remembers of a job between decision points.
type jobInfo struct {
	seen   bool
	leased bool    // started (or first seen running) by this policy
	start  float64 // when its current lease began
	sumN   float64 // active jobs summed over the decision points it saw
	points float64 // decision points it saw
	step   float64 // seconds per iteration at its demand (0: not asked yet)
}

// cand is a job competing for GPUs at a decision point.
type cand struct {
	pos    int     // index in View.Active
	rho    float64 // its finish-time fairness
	chosen bool
}

var _ policies.Policy = (*Themis)(nil)

// New returns a Themis policy with the default filter and lease.
func New(policies.Config) (policies.Policy, error) {
	return &Themis{Filter: DefaultFilter, Lease: DefaultLease}, nil
}

// Rho returns Themis's finish-time fairness T_sh / T_id of a job that
// arrived at submit, needs remaining more seconds at its demand of gpus
// GPUs and total seconds at that demand from start to end, on a cluster
// of clusterGPUs GPUs contended by contention jobs on average, at time
// now: T_sh = now - submit + remaining; T_id = total x max(1, gpus x
// contention / clusterGPUs), its time alone in a 1/contention share of
// the cluster.
func Rho(now, submit, remaining, total float64, gpus, clusterGPUs int, contention float64) float64 {
	share := float64(clusterGPUs) / max(contention, 1)
	tid := total * max(1, float64(gpus)/share)
	return (now - submit + remaining) / tid
}

// Schedule implements policies.Policy. When v.Done is closed it stops
// before the next job and returns env.ErrCancelled; the jobs it went
// through have this decision point counted in their average contention.
func (t *Themis) Schedule(v *env.View) ([]env.Decision, error) {
	if len(v.Active) == 0 {
		return nil, nil
	}
	if v.Cancelled() {
		return nil, env.ErrCancelled
	}
	if !(t.Filter >= 0 && t.Filter < 1) || !(t.Lease >= 0) {
		return nil, fmt.Errorf("themis: filter %v, lease %v: want a filter in [0, 1) and a lease >= 0", t.Filter, t.Lease)
	}
	o, ok := v.Model.(env.Oracle)
	if !ok {
		return nil, fmt.Errorf("themis: model %s has no oracle", v.Model.Name())
	}
	gpn := 0
	for _, n := range v.Cluster.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	C := v.Cluster.TotalGPUs()
	n := float64(len(v.Active))
	avail := C
	t.cands = t.cands[:0]
	for i, j := range v.Active {
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		if j.ID < 0 {
			return nil, fmt.Errorf("themis: job %d: negative ID", j.ID)
		}
		if j.ID >= len(t.info) {
			t.info = slices.Grow(t.info, j.ID+1-len(t.info))[:j.ID+1]
		}
		in := &t.info[j.ID]
		if !in.seen {
			*in = jobInfo{seen: true}
		}
		in.sumN += n
		in.points++
		running := len(j.Alloc) > 0
		if running && !in.leased {
			// Running before this policy saw it (a live cluster, a server
			// restart): its lease starts now.
			in.leased, in.start = true, v.Now
		}
		if running && v.Now-in.start < t.Lease {
			avail -= len(j.Alloc)
			continue
		}
		g := j.Spec.GPUs
		if in.step == 0 {
			// A job's step time at its demand does not change: ask once.
			in.step = o.StepTime(j, g, gpn)
		}
		rem := o.RemainingIterations(j) * in.step
		total := rem / max(1-j.Progress, 1e-12)
		t.cands = append(t.cands, cand{pos: i, rho: Rho(v.Now, j.Spec.Submit, rem, total, g, C, in.sumN/in.points)})
	}
	// The offer: the ceil((1-f) x n) jobs with the largest rho (ties in
	// arrival order), in that order; then the rest in arrival order.
	slices.SortStableFunc(t.cands, func(a, b cand) int {
		if a.rho != b.rho && !math.IsNaN(a.rho) && !math.IsNaN(b.rho) {
			return cmp.Compare(b.rho, a.rho)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	k := min(len(t.cands), max(1, int(math.Ceil((1-t.Filter)*float64(len(t.cands))))))
	slices.SortFunc(t.cands[k:], func(a, b cand) int { return cmp.Compare(a.pos, b.pos) })
	for i := range t.cands {
		c := &t.cands[i]
		if g := v.Active[c.pos].Spec.GPUs; g <= avail {
			c.chosen = true
			avail -= g
		}
	}
	// Free GPUs per node once the losers that hold GPUs release them.
	nodes := v.Cluster.Nodes
	t.free = slices.Grow(t.free[:0], len(nodes))[:len(nodes)]
	if len(v.Free) == len(nodes) {
		copy(t.free, v.Free)
	} else {
		for i, nd := range nodes {
			t.free[i] = nd.GPUs
		}
		for _, j := range v.Active {
			for _, nd := range j.Alloc {
				t.free[nd]--
			}
		}
	}
	var ds []env.Decision
	for _, c := range t.cands {
		j := v.Active[c.pos]
		if c.chosen || len(j.Alloc) == 0 {
			continue
		}
		for _, nd := range j.Alloc {
			t.free[nd]++
		}
		t.info[j.ID].leased = false
		ds = append(ds, env.Decision{Job: j.ID})
	}
	for _, c := range t.cands {
		j := v.Active[c.pos]
		if !c.chosen {
			continue
		}
		in := &t.info[j.ID]
		in.leased, in.start = true, v.Now // a new lease; a winner keeps its nodes
		if len(j.Alloc) > 0 {
			continue
		}
		if nodes := env.PackMostFree(t.free, j.Spec.GPUs); nodes != nil {
			ds = append(ds, env.Decision{Job: j.ID, Nodes: nodes})
		}
	}
	return ds, nil
}
