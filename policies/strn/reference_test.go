package strn

// The STRN of commit 779d276, before the class index: every node with
// room scored for every one-node job. It is the specification the
// equivalence test holds STRN to, with its names changed and its comments
// left out.

import (
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

func (s *reference) Schedule(v *env.View) ([]env.Decision, error) {
	s.defaults()
	if err := s.check(); err != nil {
		return nil, err
	}
	return env.Delegate(s, v, env.FirstCandidate)
}

func (*reference) CandidateFeatures() int { return numCandidateFeatures }

func (*reference) ProgressBlind() bool { return true }

type reference struct {
	// Overload is the utilisation above which a resource slows its tasks
	// (DefaultOverload).
	Overload float64
	// Uncertainty is the smoothing width of the overload function
	// (DefaultUncertainty).
	Uncertainty float64
	// WorkerCPU and WorkerMemBW are the load one worker is assumed to add
	// to its node (DefaultWorkerCPU, DefaultWorkerMemBW).
	WorkerCPU, WorkerMemBW float64
	// Pack is the best-fit term's weight (DefaultPack; negative: none).
	Pack float64
	// SyncMargin is the gain a sync strategy needs over an earlier one
	// (DefaultSyncMargin; negative: none).
	SyncMargin float64
	// Syncs lists the candidate sync strategies, preferred first
	// (DefaultSyncs).
	Syncs []env.Sync
	// Memo, when set, is asked for every job's sensitivity STRN does not
	// have cached: it returns a stored value, or calls probe (STRN's
	// probing) and may store what it returns. A caller that builds a fresh
	// STRN per decision and knows which jobs probe alike (the policy
	// server: same model, size and batch on the same prober) shares the
	// probes' cost across decisions with it.
	Memo func(j *env.Job, probe func() Sensitivity) Sensitivity

	cache map[int]cached // probed sensitivities by job ID
	free  []int
	load  []env.Usage // per node: telemetry plus this call's placements
	racks []int       // distinct rack indices, ascending
	// rackNodes[i] lists the nodes of rack racks[i], ascending; allNodes
	// is every node index. greedy walks one of them, where it filtered
	// every node by rack once per rack (O(nodes x racks) per decision).
	rackNodes [][]int
	allNodes  []int
	order     []int    // scratch: candidate nodes
	take      []int    // scratch: GPUs per node of a candidate set
	cands     []placed // this job's candidate placements, best first
	top       []int    // scratch of refLeastFirst

	memo     [4]refRiskMemo // risk's last answers, this decision point
	memoNext int

	// Per decision point (Begin).
	tel    env.Telemetry
	pr     env.Prober
	loaded bool // load and racks are read
}

func (s *reference) check() error {
	switch {
	case !(s.Overload > 0 && s.Overload < 1):
		return fmt.Errorf("%w: overload = %v, want in (0, 1)", ErrConfig, s.Overload)
	case !(s.Uncertainty > 0) || math.IsInf(s.Uncertainty, 0):
		return fmt.Errorf("%w: uncertainty = %v, want > 0", ErrConfig, s.Uncertainty)
	case !(s.WorkerCPU >= 0) || !(s.WorkerMemBW >= 0):
		return fmt.Errorf("%w: worker load = %v CPU, %v memory bandwidth, want >= 0", ErrConfig, s.WorkerCPU, s.WorkerMemBW)
	}
	return nil
}

func (s *reference) defaults() {
	if s.Overload == 0 {
		s.Overload = DefaultOverload
	}
	if s.Uncertainty == 0 {
		s.Uncertainty = DefaultUncertainty
	}
	if s.WorkerCPU == 0 {
		s.WorkerCPU = DefaultWorkerCPU
	}
	if s.WorkerMemBW == 0 {
		s.WorkerMemBW = DefaultWorkerMemBW
	}
	if s.Pack == 0 {
		s.Pack = DefaultPack
	}
	if s.SyncMargin == 0 {
		s.SyncMargin = DefaultSyncMargin
	}
	if s.Syncs == nil {
		s.Syncs = DefaultSyncs
	}
	if s.cache == nil {
		s.cache = make(map[int]cached)
	}
}

func (s *reference) Begin(v *env.View) {
	s.defaults()
	s.tel, _ = v.Model.(env.Telemetry)
	s.pr, _ = v.Model.(env.Prober)
	s.free = append(s.free[:0], v.Free...)
	s.loaded = false
	s.memo = [4]refRiskMemo{}
}

func (s *reference) Propose(v *env.View, j *env.Job) []env.Candidate {
	if !s.loaded {
		s.readLoads(v)
		s.loaded = true
	}
	sens := s.Sensitivity(v, j)
	g := j.Spec.GPUs
	if !s.place(v.Cluster, g, sens) {
		return nil
	}
	gpn := 0
	for _, n := range v.Cluster.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	fewest := float64((g + gpn - 1) / gpn)
	var out []env.Candidate
	add := func(pc placed, sy env.Sync, rel float64) {
		alloc := make([]int, 0, g)
		for i, n := range pc.nodes {
			for range pc.take[i] {
				alloc = append(alloc, n)
			}
		}
		f := make([]float64, numCandidateFeatures)
		f[0], f[1] = pc.score, pc.score-s.cands[0].score
		f[2] = float64(len(pc.nodes)) / fewest
		if pc.cross {
			f[3] = 1
		}
		f[4], f[5], f[6], f[7] = pc.worst, pc.mean, pc.sd, rel
		switch sy.Kind {
		case env.BSP:
			f[8] = 1
		case env.SSP:
			f[9] = 1
		case env.ASP:
			f[10] = 1
		case env.LocalSGD:
			f[11] = 1
		}
		out = append(out, env.Candidate{Decision: env.Decision{Job: j.ID, Nodes: alloc, Sync: sy}, Features: f})
	}
	best := s.cands[0]
	var peak env.Usage
	for _, n := range best.nodes {
		u := s.load[n]
		peak = env.Usage{CPU: max(peak.CPU, u.CPU), MemBW: max(peak.MemBW, u.MemBW), Net: max(peak.Net, u.Net)}
	}
	sync, times := s.chooseSync(s.pr, j, best.take, peak)
	add(best, sync, 1)
	chosen := math.NaN()
	for i, sy := range s.Syncs {
		if sy == sync && i < len(times) {
			chosen = times[i]
		}
	}
	for i, t := range times {
		if s.Syncs[i] != sync && usable(t) && usable(chosen) {
			add(best, s.Syncs[i], t/chosen)
		}
	}
	for _, pc := range s.cands[1:min(len(s.cands), MaxPlacements)] {
		add(pc, sync, 1)
	}
	return out
}

func (s *reference) Commit(v *env.View, j *env.Job, c env.Candidate) {
	nodes, take := policies.NodeShares(c.Decision.Nodes)
	for k, n := range nodes {
		s.free[n] -= take[k]
	}
	policies.BookLoad(s.load, nodes, take, s.WorkerCPU, s.WorkerMemBW)
	delete(s.cache, j.ID) // placed for good: STRN never preempts
}

func (s *reference) readLoads(v *env.View) {
	s.load = policies.NodeLoads(v, s.load)
	nodes := v.Cluster.Nodes
	s.racks = s.racks[:0]
	for _, nd := range nodes {
		s.racks = append(s.racks, nd.Rack)
	}
	slices.Sort(s.racks)
	s.racks = slices.Compact(s.racks)
	for i := range s.rackNodes {
		s.rackNodes[i] = s.rackNodes[i][:0]
	}
	if len(s.rackNodes) < len(s.racks) {
		s.rackNodes = append(s.rackNodes, make([][]int, len(s.racks)-len(s.rackNodes))...)
	}
	s.rackNodes = s.rackNodes[:len(s.racks)]
	s.allNodes = s.allNodes[:0]
	ri := 0
	for n, nd := range nodes {
		// Nodes usually come rack by rack: look next to the last rack
		// before searching.
		if s.racks[ri] != nd.Rack {
			ri, _ = slices.BinarySearch(s.racks, nd.Rack)
		}
		s.rackNodes[ri] = append(s.rackNodes[ri], n)
		s.allNodes = append(s.allNodes, n)
	}
}

func (s *reference) Sensitivity(v *env.View, j *env.Job) Sensitivity {
	s.defaults()
	pr, ok := v.Model.(env.Prober)
	if !ok {
		return Fallback
	}
	if c, ok := s.cache[j.ID]; ok && c.name == j.Spec.Name {
		return c.sens
	}
	var sn Sensitivity
	if s.Memo != nil {
		sn = s.Memo(j, func() Sensitivity { return s.probe(v, j, pr) })
	} else {
		sn = s.probe(v, j, pr)
	}
	s.cache[j.ID] = cached{name: j.Spec.Name, sens: sn}
	return sn
}

func (s *reference) probe(v *env.View, j *env.Job, pr env.Prober) Sensitivity {
	var sn Sensitivity
	g := j.Spec.GPUs
	gpn := 0
	for _, n := range v.Cluster.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	job := *j
	job.Sync = env.Sync{Kind: env.BSP}
	probe := func(p []int, u env.Usage, jitter bool) float64 { return pr.Probe(&job, p, u, jitter) }
	p := split(g, (g+gpn-1)/gpn)
	base := probe(p, env.Usage{}, false)
	if usable(base) {
		own := float64(p[0])
		sn.CPU = perUnit(slowdown(probe(p, env.Usage{CPU: probeLoad}, false), base), s.overload(probeLoad+s.WorkerCPU*own))
		sn.MemBW = perUnit(slowdown(probe(p, env.Usage{MemBW: probeLoad}, false), base), s.overload(probeLoad+s.WorkerMemBW*own))
		if g > 1 {
			sn.Straggling = slowdown(probe(p, env.Usage{}, true), base)
		}
		if g > len(p) {
			sn.Spread = slowdown(probe(split(g, len(p)+1), env.Usage{}, false), base)
		}
		q := p
		if len(q) == 1 && g > 1 {
			q = split(g, 2)
		}
		if len(q) > 1 {
			qb := probe(q, env.Usage{}, false)
			sn.Net = slowdown(probe(q, env.Usage{Net: probeLoad}, false), qb) / contention(probeLoad)
		}
	}
	return sn
}

func (s *reference) overload(u float64) float64 {
	return max(0, u-s.Overload) / (1 - s.Overload)
}

func (s *reference) risk(u float64) float64 {
	// Idle telemetry (or none: the job-level model) gives every node the
	// same few utilisations, so the last answers are kept, with the
	// settings they were computed under.
	for i := range s.memo {
		if m := &s.memo[i]; m.set && m.u == u && m.unc == s.Uncertainty && m.over == s.Overload {
			return m.r
		}
	}
	r := s.riskOf(u)
	s.memo[s.memoNext] = refRiskMemo{u: u, r: r, unc: s.Uncertainty, over: s.Overload, set: true}
	s.memoNext = (s.memoNext + 1) % len(s.memo)
	return r
}

// refRiskMemo is one remembered answer of the reference's risk.
type refRiskMemo struct {
	u, r, unc, over float64
	set             bool
}

func (s *reference) riskOf(u float64) float64 {
	tau := s.Uncertainty / (1 - s.Overload)
	x := (u - s.Overload) / (1 - s.Overload) / tau
	if x > 30 {
		return tau * x
	}
	return tau * math.Log1p(math.Exp(x))
}

func (s *reference) nodeRisk(c *env.Cluster, n, k int, sens Sensitivity, multi bool) float64 {
	u := s.load[n]
	r := sens.CPU*s.risk(u.CPU+s.WorkerCPU*float64(k)) + sens.MemBW*s.risk(u.MemBW+s.WorkerMemBW*float64(k))
	if multi {
		r += sens.Net * contention(u.Net)
	}
	if sp := c.Nodes[n].Speed; sp > 0 && sp < 1 {
		r += 1/sp - 1
	}
	return r
}

func (s *reference) pressure(n, k int) float64 {
	u := s.load[n]
	return max(u.CPU+s.WorkerCPU*float64(k), u.MemBW+s.WorkerMemBW*float64(k))
}

func (s *reference) score(c *env.Cluster, g, gpn int, sens Sensitivity) placed {
	nodes, take := s.order, s.take
	multi := len(nodes) > 1
	worst, mean, sq, pack := 0.0, 0.0, 0.0, 0.0
	rack := c.Nodes[nodes[0]].Rack
	cross := false
	for i, n := range nodes {
		worst = max(worst, s.nodeRisk(c, n, take[i], sens, multi))
		p := s.pressure(n, take[i])
		mean += p
		sq += p * p
		pack += float64(s.free[n]-take[i]) / float64(c.Nodes[n].GPUs)
		cross = cross || c.Nodes[n].Rack != rack
	}
	k := float64(len(nodes))
	mean /= k
	sd := math.Sqrt(max(0, sq/k-mean*mean))
	sc := worst + sens.Straggling*(mean+sd) + max(0, s.Pack)*pack
	sc += sens.Spread * float64(len(nodes)-(g+gpn-1)/gpn)
	if cross && c.CrossRackGbps > 0 && c.IntraRackGbps > c.CrossRackGbps {
		sc += sens.Net * (c.IntraRackGbps/c.CrossRackGbps - 1)
	}
	return placed{score: sc, worst: worst, mean: mean, sd: sd, cross: cross}
}

func (s *reference) place(c *env.Cluster, g int, sens Sensitivity) bool {
	gpn := 0
	for _, n := range c.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	s.cands = s.cands[:0]
	consider := func() {
		pc := s.score(c, g, gpn, sens)
		idx := make([]int, len(s.order))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			na, nb := s.order[a], s.order[b]
			if ra, rb := c.Nodes[na].Rack, c.Nodes[nb].Rack; ra != rb {
				return ra - rb
			}
			return na - nb
		})
		for _, i := range idx {
			pc.nodes = append(pc.nodes, s.order[i])
			pc.take = append(pc.take, s.take[i])
		}
		s.cands = append(s.cands, pc)
	}
	// One candidate per node that holds the whole job: scored here, its
	// node lists made only for the few refLeastFirst keeps (a single-GPU job
	// on a large cluster has a candidate per node).
	for n, f := range s.free {
		if f >= g {
			s.order = append(s.order[:0], n)
			s.take = append(s.take[:0], g)
			pc := s.score(c, g, gpn, sens)
			pc.one = n + 1
			s.cands = append(s.cands, pc)
		}
	}
	if len(s.cands) == 0 {
		for ri := -1; ri < len(s.racks); ri++ {
			nodes := s.allNodes
			if ri >= 0 && s.racks[ri] >= 0 { // a negative rack index has always meant any rack here
				nodes = s.rackNodes[ri]
			}
			if s.greedy(c, g, gpn, nodes, sens) {
				consider()
			}
			if ri == -1 && len(s.cands) == 0 {
				return false // not even the whole cluster has room
			}
		}
	}
	s.cands, s.top = refLeastFirst(s.cands, MaxPlacements, s.top)
	for i := range s.cands {
		if pc := &s.cands[i]; pc.one > 0 {
			pc.nodes, pc.take, pc.one = []int{pc.one - 1}, []int{g}, 0
		}
	}
	return len(s.cands) > 0
}

func refByScore(a, b placed) int {
	switch {
	case a.score < b.score:
		return -1
	case b.score < a.score:
		return 1
	}
	return 0
}

func refLeastFirst(cands []placed, m int, top []int) ([]placed, []int) {
	nan := false
	for i := range cands {
		if math.IsNaN(cands[i].score) {
			nan = true
			break
		}
	}
	if nan || len(cands) <= m {
		slices.SortStableFunc(cands, refByScore)
		return cands, top
	}
	top = top[:0]
	for i := range cands {
		sc := cands[i].score
		if len(top) == m && !(sc < cands[top[m-1]].score) {
			continue
		}
		j := len(top)
		for j > 0 && sc < cands[top[j-1]].score {
			j--
		}
		top = slices.Insert(top, j, i)
		if len(top) > m {
			top = top[:m]
		}
	}
	// The chosen indices ascend in the order they must take only by
	// chance; gather them before writing over the front of cands.
	var keep [8]placed
	sel := keep[:0]
	for _, i := range top {
		sel = append(sel, cands[i])
	}
	return append(cands[:0], sel...), top
}

func (s *reference) greedy(c *env.Cluster, g, gpn int, nodes []int, sens Sensitivity) bool {
	room := 0
	for _, n := range nodes {
		room += s.free[n]
	}
	if room < g {
		return false
	}
	s.order, s.take = s.order[:0], s.take[:0]
	for left := g; left > 0; {
		pick, pickK, pickKey := -1, 0, math.Inf(1)
		for _, n := range nodes {
			f := s.free[n]
			if f == 0 || slices.Contains(s.order, n) {
				continue
			}
			k := min(f, left)
			key := s.nodeRisk(c, n, k, sens, true) + sens.Spread*(1-float64(k)/float64(min(left, gpn)))
			if pick < 0 || key < pickKey {
				pick, pickK, pickKey = n, k, key
			}
		}
		s.order = append(s.order, pick)
		s.take = append(s.take, pickK)
		left -= pickK
	}
	return true
}

func (s *reference) chooseSync(pr env.Prober, j *env.Job, placement []int, load env.Usage) (env.Sync, []float64) {
	return ChooseSync(pr, j, placement, load, s.Syncs, s.SyncMargin)
}
