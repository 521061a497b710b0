package serve

import (
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/strn"
)

// The serving fast path of the default heuristics. A Place request holds
// one pending job and no model to probe, so STRN's answer (Schedule on a
// fresh policy, through env.Delegate, Propose and the env.FirstCandidate chooser)
// reduces to: the sensitivity is strn.Fallback, the sync strategy BSP, and
// the placement the first of least score among STRN's candidates.
// fastSTRN computes exactly that, with STRN's own arithmetic in STRN's
// order, on the request's scratch memory: no env.View, no policy, no
// per-candidate slices, nothing sorted but the winner. TestPlaceMatchesReference
// and TestFastSTRNMatchesSTRN check it against policies/strn itself (a
// change to STRN that this file does not follow fails them).

// strnParams are STRN's settings. They are variables, not constants, so
// that the arithmetic below rounds as STRN's (on fields) does.
type strnParams struct {
	overload, uncertainty, workerCPU, workerMemBW, pack float64
	sens                                                strn.Sensitivity
}

var defaultSTRN = strnParams{
	overload:    strn.DefaultOverload,
	uncertainty: strn.DefaultUncertainty,
	workerCPU:   strn.DefaultWorkerCPU,
	workerMemBW: strn.DefaultWorkerMemBW,
	pack:        strn.DefaultPack,
	sens:        strn.Fallback,
}

// fastScratch is fastSTRN's working memory, part of a request's scratch.
type fastScratch struct {
	all         []int // 0 .. nodes-1
	byRack      []int // node indices by rack, then index
	order, take []int // the candidate being built: nodes and GPUs on each
	best, bestT []int // the best candidate so far
	idx         []int
	memoK       []int // per node: k of the memoised multi-node risk (-1: none)
	memoR       []float64
	picked      []bool // per node: in order, the candidate being built
	alloc       []int
	risk        strn.RiskMemo // kept from request to request
}

// contention is strn's contention.
func contention(u float64) float64 {
	const probeLoad = 0.95
	u = min(max(u, 0), probeLoad)
	return u / (1 - u)
}

// nodeRisk is strn.(*STRN).nodeRisk.
func (p *strnParams) nodeRisk(s *snapshot, f *fastScratch, n, k int, multi bool) float64 {
	sens := &p.sens
	u := s.state.Load[n]
	r := sens.CPU*f.risk.Risk(p.overload, p.uncertainty, u.CPU+p.workerCPU*float64(k)) +
		sens.MemBW*f.risk.Risk(p.overload, p.uncertainty, u.MemBW+p.workerMemBW*float64(k))
	if multi {
		r += sens.Net * contention(u.Net)
	}
	if sp := s.cluster.Nodes[n].Speed; sp > 0 && sp < 1 {
		r += 1/sp - 1
	}
	return r
}

// multiRisk is nodeRisk(s, f, n, k, true), memoised per node for the last k:
// the greedy passes ask the same nodes the same question.
func (p *strnParams) multiRisk(s *snapshot, f *fastScratch, n, k int) float64 {
	if f.memoK[n] == k {
		return f.memoR[n]
	}
	r := p.nodeRisk(s, f, n, k, true)
	f.memoK[n], f.memoR[n] = k, r
	return r
}

// pressure is strn.(*STRN).pressure.
func (p *strnParams) pressure(s *snapshot, n, k int) float64 {
	u := s.state.Load[n]
	return max(u.CPU+p.workerCPU*float64(k), u.MemBW+p.workerMemBW*float64(k))
}

// score is the score part of strn.(*STRN).score for the candidate in
// f.order and f.take.
func (p *strnParams) score(s *snapshot, f *fastScratch, g, gpn int) float64 {
	c := &s.cluster
	sens := &p.sens
	nodes, take := f.order, f.take
	multi := len(nodes) > 1
	worst, mean, sq, pack := 0.0, 0.0, 0.0, 0.0
	rack := c.Nodes[nodes[0]].Rack
	cross := false
	for i, n := range nodes {
		if multi {
			worst = max(worst, p.multiRisk(s, f, n, take[i]))
		} else {
			worst = max(worst, p.nodeRisk(s, f, n, take[i], multi))
		}
		pr := p.pressure(s, n, take[i])
		mean += pr
		sq += pr * pr
		pack += float64(s.state.Free[n]-take[i]) / float64(c.Nodes[n].GPUs)
		cross = cross || c.Nodes[n].Rack != rack
	}
	k := float64(len(nodes))
	mean /= k
	sd := math.Sqrt(max(0, sq/k-mean*mean))
	sc := worst + sens.Straggling*(mean+sd) + max(0, p.pack)*pack
	sc += sens.Spread * float64(len(nodes)-(g+gpn-1)/gpn)
	if cross && c.CrossRackGbps > 0 && c.IntraRackGbps > c.CrossRackGbps {
		sc += sens.Net * (c.IntraRackGbps/c.CrossRackGbps - 1)
	}
	return sc
}

// greedy is strn.(*STRN).greedy, over members (node indices, ascending:
// the whole cluster's, or one rack's).
func (p *strnParams) greedy(s *snapshot, f *fastScratch, g, gpn int, members []int) bool {
	room := 0
	for _, n := range members {
		room += s.state.Free[n]
	}
	if room < g {
		return false
	}
	f.order, f.take = f.order[:0], f.take[:0]
	// f.picked marks the nodes in f.order (slices.Contains made a pick
	// O(picks) per node: 4,096 workers on 4,096 nodes took seconds), and
	// is all false again when greedy returns.
	defer func() {
		for _, n := range f.order {
			f.picked[n] = false
		}
	}()
	for left := g; left > 0; {
		// Each pick scans every member: the request's deadline is looked
		// at once per pick.
		if s.cancelled() {
			return false
		}
		pick, pickK, pickKey := -1, 0, math.Inf(1)
		for _, n := range members {
			fr := s.state.Free[n]
			if fr == 0 || f.picked[n] {
				continue
			}
			k := min(fr, left)
			key := p.multiRisk(s, f, n, k) + p.sens.Spread*(1-float64(k)/float64(min(left, gpn)))
			if pick < 0 || key < pickKey {
				pick, pickK, pickKey = n, k, key
			}
		}
		f.order = append(f.order, pick)
		f.take = append(f.take, pickK)
		f.picked[pick] = true
		left -= pickK
	}
	return true
}

// fastSTRN returns STRN's placement of the snapshot's job (the node of
// each worker, in f.alloc; nil when it does not fit) and sync strategy
// (always BSP: nothing to probe).
func fastSTRN(s *snapshot, f *fastScratch) ([]int, env.Sync) {
	return fastSTRNWith(&defaultSTRN, s, f)
}

// fastSTRNWith is fastSTRN with p's settings (the stateful server's: the
// job's probed sensitivity). The winner's nodes are left in f.best and
// f.bestT, in the order of f.idx (rack, then index: STRN's order), for
// the sync choice.
func fastSTRNWith(p *strnParams, s *snapshot, f *fastScratch) ([]int, env.Sync) {
	c := &s.cluster
	g := s.job.GPUs
	gpn := 0
	for _, n := range c.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	nn := len(c.Nodes)
	f.memoK = slices.Grow(f.memoK[:0], nn)[:nn]
	f.memoR = slices.Grow(f.memoR[:0], nn)[:nn]
	for i := range f.memoK {
		f.memoK[i] = -1
	}
	f.picked = slices.Grow(f.picked[:0], nn)[:nn]
	clear(f.picked)
	found, bestScore := false, 0.0
	consider := func() {
		sc := p.score(s, f, g, gpn)
		if !found || sc < bestScore { // the first of least score: STRN's stable sort
			found, bestScore = true, sc
			f.best = append(f.best[:0], f.order...)
			f.bestT = append(f.bestT[:0], f.take...)
		}
	}
	for n, fr := range s.state.Free {
		if fr >= g {
			f.order = append(f.order[:0], n)
			f.take = append(f.take[:0], g)
			consider()
		}
	}
	if !found {
		// The whole cluster, then each rack in ascending order (STRN's
		// candidates), each pass over its own nodes only.
		f.all = f.all[:0]
		for n := range nn {
			f.all = append(f.all, n)
		}
		if !p.greedy(s, f, g, gpn, f.all) {
			return nil, env.Sync{} // not even the whole cluster has room
		}
		consider()
		f.byRack = append(f.byRack[:0], f.all...)
		slices.SortStableFunc(f.byRack, func(a, b int) int { return c.Nodes[a].Rack - c.Nodes[b].Rack })
		for lo := 0; lo < nn; {
			hi := lo + 1
			for hi < nn && c.Nodes[f.byRack[hi]].Rack == c.Nodes[f.byRack[lo]].Rack {
				hi++
			}
			if p.greedy(s, f, g, gpn, f.byRack[lo:hi]) {
				consider()
			}
			lo = hi
		}
	}
	// The winner's nodes in rack, then index order, each repeated for its
	// GPUs (STRN's consider and Propose).
	f.idx = f.idx[:0]
	for i := range f.best {
		f.idx = append(f.idx, i)
	}
	slices.SortFunc(f.idx, func(a, b int) int {
		na, nb := f.best[a], f.best[b]
		if ra, rb := c.Nodes[na].Rack, c.Nodes[nb].Rack; ra != rb {
			return ra - rb
		}
		return na - nb
	})
	f.alloc = f.alloc[:0]
	for _, i := range f.idx {
		for range f.bestT[i] {
			f.alloc = append(f.alloc, f.best[i])
		}
	}
	return f.alloc, env.Sync{}
}

// fastFirstFit is first-fit's answer for the snapshot's job (its
// Schedule on a fresh policy with one pending job), in f.alloc.
func fastFirstFit(s *snapshot, f *fastScratch) ([]int, env.Sync) {
	free := append(f.take[:0], s.state.Free...)
	f.take = free
	g := s.job.GPUs
	left := 0
	for _, n := range free {
		left += n
	}
	if left == 0 || g > left {
		return nil, env.Sync{}
	}
	a := env.PackFirstFit(free, g)
	if a == nil {
		return nil, env.Sync{}
	}
	f.alloc = append(f.alloc[:0], a...)
	return f.alloc, env.Sync{}
}
