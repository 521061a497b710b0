package sas

// The SAS implementation as of commit 28b2fec, before its per-decision
// work was made incremental (a recount of every running job's workers, a
// copy of the free GPUs, and a scan of every node of every group per
// proposal): the specification TestMatchesReference holds SAS to. Only the
// type's name differs; the helpers it shares with SAS (jobInfo,
// candidate, ratio, distinctNodes, Group) are unchanged.

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// refSAS is SAS as it was (see above).
type refSAS struct {
	SamplePeriod  float64
	History       int
	RegroupPeriod float64
	Groups        int
	Overload      float64
	WorkerLoad    env.Usage
	FlowLoad      float64
	SpreadPenalty float64
	RackPenalty   float64
	Resolution    float64
	Forecaster    *forecast.Model
	EvenPS        bool

	pred      *Predictor
	groups    [][]int
	regrouped float64
	fresh     bool
	gpn       int

	free  []int
	occ   []int
	flows []float64
	loads []env.Usage
	stamp []int
	jobs  map[int]*jobInfo

	tel     env.Telemetry
	prober  env.Prober
	counted bool
}

// newRef returns the reference with s's settings.
func newRef(s *SAS) *refSAS {
	return &refSAS{SamplePeriod: s.SamplePeriod, History: s.History, RegroupPeriod: s.RegroupPeriod, Groups: s.Groups,
		Overload: s.Overload, WorkerLoad: s.WorkerLoad, FlowLoad: s.FlowLoad, SpreadPenalty: s.SpreadPenalty,
		RackPenalty: s.RackPenalty, Resolution: s.Resolution, Forecaster: s.Forecaster, EvenPS: s.EvenPS, regrouped: math.NaN()}
}

// Schedule implements policies.Policy: env.Delegate with the
// heuristic's own choices.
func (s *refSAS) Schedule(v *env.View) ([]env.Decision, error) {
	return env.Delegate(s, v, env.FirstCandidate)
}

// Begin implements env.Proposer: it samples the telemetry when a
// sample is due, regroups the nodes when the regroup period has passed,
// and takes the free GPUs.
func (s *refSAS) Begin(v *env.View) {
	nodes := len(v.Cluster.Nodes)
	s.tel, _ = v.Model.(env.Telemetry)
	s.prober, _ = v.Model.(env.Prober)
	if s.pred == nil || s.pred.Nodes() != nodes {
		s.reset(v)
	}
	s.counted = false
	if s.tel != nil && s.pred.Due(v.Now) {
		s.count(v)
		s.counted = true
		for n := range nodes {
			u := s.tel.NodeLoad(n, v.Now)
			s.loads[n] = env.Usage{
				CPU:   max(0, u.CPU-s.WorkerLoad.CPU*float64(s.occ[n])),
				MemBW: max(0, u.MemBW-s.WorkerLoad.MemBW*float64(s.occ[n])),
				Net:   max(0, u.Net-s.FlowLoad*s.flows[n]),
			}
		}
		s.pred.Observe(v.Now, s.loads)
		s.fresh = true
	}
	if s.groups == nil || s.fresh && v.Now-s.regrouped >= s.RegroupPeriod {
		s.regroup(v, s.tel != nil)
	}
	s.free = append(s.free[:0], v.Free...)
}

// CandidateFeatures implements env.Proposer.
func (s *refSAS) CandidateFeatures() int { return numCandidateFeatures }

// Propose implements env.Proposer. The candidates are j's best
// placement within each node group with room for it, ordered as SAS ranks
// them (cost bin, then tighter fit, then the more available group), or,
// when no group holds j alone, the one placement over the union of the
// most available groups. Each candidate's features are: its cost (the
// predicted slowdown of its worst node times the spreading stretch and
// the rack penalty), its cost over the best candidate's minus 1, the GPUs
// it leaves free on its nodes (in nodes' worth), its nodes over the
// fewest that could hold j, its racks minus 1, its nodes' mean predicted
// median CPU, memory-bandwidth and NIC utilisation, their widest spread
// (P90 - P10), and 1 for the union fallback.
func (s *refSAS) Propose(v *env.View, j *env.Job) []env.Candidate {
	if !s.counted {
		s.count(v)
		s.counted = true
	}
	in := s.info(j, s.prober)
	telemetry := s.tel != nil
	g := j.Spec.GPUs
	var cs []candidate
	for gi, ns := range s.groups {
		room := 0
		for _, n := range ns {
			room += s.free[n]
		}
		if room >= g {
			cs = append(cs, s.candidate(v, j, in, s.prober, telemetry, ns, gi))
		}
	}
	if len(cs) == 0 {
		// No group fits the job alone: widen to the most available
		// groups until the union has room.
		var union []int
		room := 0
		for _, ns := range s.groups {
			union = append(union, ns...)
			for _, n := range ns {
				room += s.free[n]
			}
			if room >= g {
				slices.Sort(union)
				cs = append(cs, s.candidate(v, j, in, s.prober, telemetry, union, len(s.groups)))
				break
			}
		}
	}
	if len(cs) == 0 {
		return nil
	}
	slices.SortStableFunc(cs, func(a, b candidate) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	out := make([]env.Candidate, len(cs))
	fewest := len(env.Packed(g, s.gpn))
	for k, c := range cs {
		f := make([]float64, numCandidateFeatures)
		f[0] = c.cost
		f[1] = ratio(c.cost, cs[0].cost) - 1
		f[2] = float64(c.leftover) / float64(max(s.gpn, 1))
		nodes := distinctNodes(c.alloc)
		f[3] = float64(len(nodes)) / float64(max(fewest, 1))
		racks := map[int]bool{}
		for _, n := range nodes {
			racks[v.Cluster.Nodes[n].Rack] = true
			if telemetry && s.pred.Len(n) > 0 {
				fc := s.pred.Forecast(n)
				f[5] += fc.P50.CPU / float64(len(nodes))
				f[6] += fc.P50.MemBW / float64(len(nodes))
				f[7] += fc.P50.Net / float64(len(nodes))
				f[8] = max(f[8], fc.P90.CPU-fc.P10.CPU, fc.P90.MemBW-fc.P10.MemBW, fc.P90.Net-fc.P10.Net)
			}
		}
		f[4] = float64(len(racks) - 1)
		if c.group == len(s.groups) {
			f[9] = 1
		}
		// Parameter-server load follows the servers' speeds (see the
		// package documentation).
		d := env.Decision{Job: j.ID, Nodes: c.alloc, PSRebalance: j.Spec.Arch == env.PS && !s.EvenPS}
		out[k] = env.Candidate{Decision: d, Features: f}
	}
	return out
}

// Commit implements env.Proposer.
func (s *refSAS) Commit(_ *env.View, j *env.Job, c env.Candidate) {
	s.commit(c.Decision.Nodes)
	delete(s.jobs, j.ID)
}

// reset sizes the policy's state for v's cluster.
func (s *refSAS) reset(v *env.View) {
	n := len(v.Cluster.Nodes)
	s.pred = NewPredictor(n, max(s.History, 1), max(s.SamplePeriod, 0))
	s.pred.Model = s.Forecaster
	s.groups, s.regrouped, s.fresh = nil, math.NaN(), false
	s.occ = make([]int, n)
	s.flows = make([]float64, n)
	s.loads = make([]env.Usage, n)
	s.stamp = make([]int, n)
	s.jobs = map[int]*jobInfo{}
	s.gpn = 0
	for _, nd := range v.Cluster.Nodes {
		s.gpn = max(s.gpn, nd.GPUs)
	}
}

// count sets the workers and multi-node flows on each node from the
// running jobs.
func (s *refSAS) count(v *env.View) {
	clear(s.occ)
	clear(s.flows)
	clear(s.stamp)
	for _, j := range v.Active {
		if j.State != env.Running {
			continue
		}
		for _, n := range j.Alloc {
			s.occ[n]++
		}
		s.addFlows(j.ID+1, j.Alloc)
	}
}

// addFlows adds one flow on each distinct node of a multi-node alloc; mark
// must differ between calls within one count.
func (s *refSAS) addFlows(mark int, alloc []int) {
	if len(alloc) == 0 || !slices.ContainsFunc(alloc, func(n int) bool { return n != alloc[0] }) {
		return
	}
	for _, n := range alloc {
		if s.stamp[n] != mark {
			s.stamp[n] = mark
			s.flows[n]++
		}
	}
}

// commit books a new placement into free, occ and flows.
func (s *refSAS) commit(alloc []int) {
	for _, n := range alloc {
		s.free[n]--
		s.occ[n]++
	}
	clear(s.stamp)
	s.addFlows(-1, alloc)
	clear(s.stamp)
}

// regroup recomputes the node groups from the current forecasts (and the
// GPU speeds); without telemetry only the speeds tell nodes apart.
func (s *refSAS) regroup(v *env.View, telemetry bool) {
	pts := make([][]float64, len(v.Cluster.Nodes))
	for n, nd := range v.Cluster.Nodes {
		var f Forecast
		if telemetry && s.pred.Len(n) > 0 {
			f = s.pred.Forecast(n)
		}
		pts[n] = Features(f, nd.Speed)
	}
	k := s.Groups
	if k <= 0 {
		k = GroupCount(len(pts))
	}
	s.groups = Group(pts, k)
	s.regrouped, s.fresh = v.Now, false
}

// info returns j's probed sensitivities, probing on first use. Without a
// Prober every resource weighs 1/3.
func (s *refSAS) info(j *env.Job, prober env.Prober) *jobInfo {
	if in, ok := s.jobs[j.ID]; ok {
		return in
	}
	in := &jobInfo{stretch: map[string]float64{}}
	s.jobs[j.ID] = in
	in.weight = [numResources]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	if prober == nil {
		return in
	}
	g := j.Spec.GPUs
	packed := env.Packed(g, s.gpn)
	base := prober.Probe(j, packed, env.Usage{}, false)
	if !(base > 0) || math.IsInf(base, 0) {
		return in
	}
	in.base = base
	// CPU and memory bandwidth: the slowdown when the node's total
	// utilisation sits mid-way into the overload band, (1+Overload)/2.
	ref := (1 + s.Overload) / 2
	busy := float64(packed[0])
	for r, u := range []env.Usage{
		{CPU: max(0, ref-s.WorkerLoad.CPU*busy)},
		{MemBW: max(0, ref-s.WorkerLoad.MemBW*busy)},
	} {
		in.weight[r] = ratio(prober.Probe(j, packed, u, false), base) - 1
	}
	// Network: the slowdown per unit of NIC contention, from a two-node
	// split whose NICs have half their bandwidth taken (contention 2).
	in.weight[Net] = 0
	if g >= 2 {
		two := []int{(g + 1) / 2, g / 2}
		idle := prober.Probe(j, two, env.Usage{}, false)
		in.weight[Net] = ratio(prober.Probe(j, two, env.Usage{Net: 0.5}, false), idle) - 1
	}
	for r := range in.weight {
		in.weight[r] = max(in.weight[r], 0)
	}
	return in
}

// slowdown predicts the iteration-time factor of a worker on node n if k
// more workers join it: 1 + sum over resources of weight x overload
// probability, over the node's speed. multi says whether the job spans
// nodes (only then does its NIC matter).
func (s *refSAS) slowdown(v *env.View, in *jobInfo, n, k int, multi, telemetry bool) float64 {
	sd := 1.0
	if telemetry && s.pred.Len(n) > 0 {
		w := float64(s.occ[n] + k)
		sd += in.weight[CPU] * s.pred.OverloadProb(n, CPU, s.WorkerLoad.CPU*w, s.Overload)
		sd += in.weight[MemBW] * s.pred.OverloadProb(n, MemBW, s.WorkerLoad.MemBW*w, s.Overload)
		if multi {
			// The job's flow shares what the background leaves of the
			// NIC with the flows already there; plan for the P90
			// background.
			avail := max(0.05, 1-s.pred.Quantile(n, Net, 0.9))
			sd += in.weight[Net] * (max(1, (s.flows[n]+1)*s.FlowLoad/avail) - 1)
		}
	}
	if sp := v.Cluster.Nodes[n].Speed; sp > 0 {
		sd /= sp
	}
	return sd
}
func (s *refSAS) bin(x float64) float64 {
	if s.Resolution <= 0 {
		return x
	}
	return math.Round(x / s.Resolution)
}

// candidate places j within nodes (ascending, with room for it): on the
// single node with the lowest slowdown bin and then the tightest fit if
// one has room, else rack by rack (see the package documentation) and
// most-free nodes first within a rack (lower slowdown, then lower index,
// among equals) until the job fits.
func (s *refSAS) candidate(v *env.View, j *env.Job, in *jobInfo, prober env.Prober, telemetry bool, nodes []int, group int) candidate {
	g := j.Spec.GPUs
	best := candidate{group: group}
	found := false
	for _, n := range nodes {
		if s.free[n] < g {
			continue
		}
		cost := s.slowdown(v, in, n, g, false, telemetry)
		c := candidate{cost: cost, bin: s.bin(cost), leftover: s.free[n] - g, group: group}
		if !found || c.better(best) {
			c.alloc = slices.Repeat([]int{n}, g)
			best, found = c, true
		}
	}
	if found {
		return best
	}
	type opt struct {
		n, free, rack int
		bin           float64
	}
	var opts []opt
	rackFree := map[int]int{}
	for _, n := range nodes {
		if s.free[n] > 0 {
			r := v.Cluster.Nodes[n].Rack
			rackFree[r] += s.free[n]
			opts = append(opts, opt{n, s.free[n], r, s.bin(s.slowdown(v, in, n, s.free[n], true, telemetry))})
		}
	}
	// Racks with room for the whole job first (the smallest such rack,
	// to keep the large ones whole), else the roomiest racks first.
	rackKey := func(r int) int {
		if rackFree[r] >= g {
			return -1<<30 + rackFree[r]
		}
		return -rackFree[r]
	}
	slices.SortFunc(opts, func(a, b opt) int {
		switch {
		case a.rack != b.rack && rackKey(a.rack) != rackKey(b.rack):
			return rackKey(a.rack) - rackKey(b.rack)
		case a.rack != b.rack:
			return a.rack - b.rack
		case a.free != b.free:
			return b.free - a.free
		case a.bin != b.bin:
			if a.bin < b.bin {
				return -1
			}
			return 1
		}
		return a.n - b.n
	})
	alloc := make([]int, 0, g)
	var placement []int
	worst, leftover := 0.0, 0
	racks := map[int]bool{}
	for _, o := range opts {
		k := min(o.free, g-len(alloc))
		alloc = append(alloc, slices.Repeat([]int{o.n}, k)...)
		placement = append(placement, k)
		worst = max(worst, s.slowdown(v, in, o.n, k, true, telemetry))
		leftover += o.free - k
		racks[v.Cluster.Nodes[o.n].Rack] = true
		if len(alloc) == g {
			break
		}
	}
	cost := worst * s.stretch(j, in, prober, placement) * (1 + s.RackPenalty*float64(len(racks)-1))
	return candidate{alloc: alloc, cost: cost, bin: s.bin(cost), leftover: leftover, group: group}
}

// stretch is the factor by which spreading j over placement (GPUs per
// node) lengthens its iteration over the packed placement: probed on idle
// nodes when the model can be probed, else 1 + SpreadPenalty per node
// beyond the fewest possible.
func (s *refSAS) stretch(j *env.Job, in *jobInfo, prober env.Prober, placement []int) float64 {
	fewest := len(env.Packed(j.Spec.GPUs, s.gpn))
	fallback := 1 + s.SpreadPenalty*float64(max(len(placement)-fewest, 0))
	if prober == nil || in.base <= 0 {
		return fallback
	}
	p := slices.Clone(placement)
	slices.SortFunc(p, func(a, b int) int { return b - a })
	var sb strings.Builder
	for _, x := range p {
		sb.WriteString(strconv.Itoa(x))
		sb.WriteByte(' ')
	}
	key := sb.String()
	if r, ok := in.stretch[key]; ok {
		return r
	}
	r := ratio(prober.Probe(j, p, env.Usage{}, false), in.base)
	in.stretch[key] = r
	return r
}
