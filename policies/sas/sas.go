package sas

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// Name is the policy's registry name.
const Name = "sas"

// Defaults of the SAS fields that New sets.
const (
	// DefaultSamplePeriod is the simulated seconds between telemetry
	// samples.
	DefaultSamplePeriod = 300
	// DefaultHistory is the samples kept per node: 64 x 300 s, about 5.3
	// hours, some 13 time constants of the fitted CPU background load.
	DefaultHistory = 64
	// DefaultRegroupPeriod is the simulated seconds between regroupings.
	DefaultRegroupPeriod = 900
	// DefaultOverload is the utilisation above which a resource slows the
	// tasks on its node (env.Workers' default).
	DefaultOverload = 0.8
	// DefaultSpreadPenalty is the stretch per node beyond the fewest the
	// job could use, when the model cannot be probed.
	DefaultSpreadPenalty = 0.1
	// DefaultRackPenalty is the stretch per rack beyond the first.
	DefaultRackPenalty = 0.1
	// DefaultResolution is the width of the bins in which placement costs
	// are compared; costs in one bin tie and the tighter fit wins.
	DefaultResolution = 0.02
)

// DefaultWorkerLoad is the utilisation one worker adds to its node: a
// sixteenth of the CPUs (4 of a DGX-1's 64 cores feeding one GPU) and 8% of
// the memory bandwidth, env.Workers' defaults.
var DefaultWorkerLoad = env.Usage{CPU: 1.0 / 16, MemBW: 0.08}

// DefaultFlowLoad is the share of a node's NIC that one multi-node job's
// gradient flow takes (as env.Drover's telemetry reports it).
const DefaultFlowLoad = 0.5

// SAS is straggler-avoiding scheduling: it predicts each node's
// utilisation with probabilities, groups nodes whose predictions behave
// alike, and starts each pending job in one group, the one where its
// predicted slowdown times its spreading stretch is lowest. See the
// package documentation. The exported fields may be changed before the
// first call to Schedule.
type SAS struct {
	// SamplePeriod is the simulated seconds between telemetry samples.
	SamplePeriod float64
	// History is the number of samples kept per node.
	History int
	// RegroupPeriod is the simulated seconds between regroupings.
	RegroupPeriod float64
	// Groups is the number of node groups; 0 picks GroupCount.
	Groups int
	// Overload is the utilisation above which a resource slows its tasks.
	Overload float64
	// WorkerLoad is the utilisation one worker of any job adds to its node.
	WorkerLoad env.Usage
	// FlowLoad is the NIC share one multi-node job's flow takes on each of
	// its nodes.
	FlowLoad float64
	// SpreadPenalty is the stretch per extra node without a Prober.
	SpreadPenalty float64
	// RackPenalty is the stretch per extra rack.
	RackPenalty float64
	// Resolution is the bin width of compared placement costs.
	Resolution float64
	// Forecaster is the predictor's learned model (Predictor.Model); nil
	// makes every forecast the empirical window's.
	Forecaster *forecast.Model
	// EvenPS leaves a PS job's parameters evenly split over its servers
	// (no env.Decision.PSRebalance): SAS without its parameter-server load
	// reassignment, the baseline it is measured against (NewEvenPS).
	EvenPS bool

	pred      *Predictor
	groups    [][]int
	regrouped float64 // time of the last grouping
	fresh     bool    // samples arrived since the last grouping
	gpn       int     // the most GPUs on a node

	free  []int
	occ   []int     // workers per node
	flows []float64 // multi-node jobs per node
	loads []env.Usage
	stamp []int // per node: the mark of the last alloc that counted it
	mark  int
	jobs  map[int]*jobInfo

	// Kept up to date over a simulation's views (see sync).
	view   *env.View
	seq    int
	synced bool             // occ, flows and free follow view's decision point seq
	booked map[int][]int    // the running jobs' allocs counted in occ and flows
	made   [][]int          // the allocs committed since Begin
	queue  policies.Pending // the pending jobs, in arrival (ID) order
	idx    nodeIndex
	pts    []point // per node: its point in the last grouping

	// Per decision point (Begin).
	tel    env.Telemetry
	prober env.Prober
}

// point is a node's point in the grouping (Features) and what it was
// computed from: the predictor's version of the node, the telemetry and
// the node's speed.
type point struct {
	xs        []float64
	ver       uint64
	telemetry bool
	speed     float64
}

// jobInfo is what SAS has probed about a pending job.
type jobInfo struct {
	weight  [numResources]float64 // slowdown when the resource is overloaded
	base    float64               // probed iteration time, packed and idle
	stretch map[string]float64    // by placement key
}

var _ env.Proposer = (*SAS)(nil)

// New returns a SAS policy with the default settings. It uses no
// randomness, so the seed is ignored.
func New(policies.Config) (policies.Policy, error) {
	return &SAS{
		SamplePeriod:  DefaultSamplePeriod,
		History:       DefaultHistory,
		RegroupPeriod: DefaultRegroupPeriod,
		Overload:      DefaultOverload,
		WorkerLoad:    DefaultWorkerLoad,
		FlowLoad:      DefaultFlowLoad,
		SpreadPenalty: DefaultSpreadPenalty,
		RackPenalty:   DefaultRackPenalty,
		Resolution:    DefaultResolution,
		Forecaster:    forecast.Default(),
		regrouped:     math.NaN(),
	}, nil
}

var _ env.ProgressBlind = (*SAS)(nil)

// ProgressBlind implements env.ProgressBlind: SAS reads the pending jobs,
// the free GPUs, the nodes' telemetry and probes, none of which advancing a
// running job changes.
func (*SAS) ProgressBlind() bool { return true }

// Observe records a sample of every node's background load (loads, one
// per node of v's cluster, the policy's own workers already taken out) at
// time at, as Begin records the telemetry when a sample is due; it reports
// whether the sample was due and recorded. A caller that keeps a policy
// across decision points and has telemetry between them (the policy
// server's live state) feeds the samples Begin would have taken had it
// been called then, oldest first, before Schedule. It sizes the policy for
// v's cluster first, as Begin does.
func (s *SAS) Observe(v *env.View, at float64, loads []env.Usage) bool {
	if s.pred == nil || s.pred.Nodes() != len(v.Cluster.Nodes) {
		s.reset(v)
	}
	if !s.pred.Observe(at, loads) {
		return false
	}
	s.fresh = true
	return true
}

// Predictor returns the node predictor (nil before the first Schedule).
func (s *SAS) Predictor() *Predictor { return s.pred }

// NodeGroups returns the current node groups, most available first (nil
// before the first Schedule). The slices belong to the policy.
func (s *SAS) NodeGroups() [][]int { return s.groups }

// Schedule implements policies.Policy: env.Delegate with the
// heuristic's own choices. Over a simulation's views it goes through its
// own queue of the pending jobs instead of every active job, and takes
// the free GPUs from its groups' sums: the same jobs in the same order,
// since every pending job that fits in the free GPUs gets a candidate (the
// union of the groups, at worst, has room for it).
//
// When v.Done is closed it stops before the next job and returns
// env.ErrCancelled.
func (s *SAS) Schedule(v *env.View) ([]env.Decision, error) {
	s.Begin(v)
	if !s.synced || !s.idx.ok {
		ds := delegate(s, v)
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		return ds, nil
	}
	left := 0
	for gi := range s.groups {
		left += s.idx.groups[gi].room
	}
	var ds []env.Decision
	for _, j := range s.queue.Jobs {
		if left == 0 {
			break
		}
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		if j.Spec.GPUs > left {
			continue
		}
		d, ok := s.best(v, j)
		if !ok {
			continue
		}
		s.commit(d.Nodes)
		delete(s.jobs, j.ID)
		ds = append(ds, d)
		left -= j.Spec.GPUs
	}
	return ds, nil
}

// delegate is env.Delegate with env.FirstCandidate after Begin.
func delegate(s *SAS, v *env.View) []env.Decision {
	left := 0
	for _, f := range v.Free {
		left += f
	}
	return env.DelegateJobs(s, v, v.Active, left, env.FirstCandidate)
}

// Begin implements env.Proposer: it samples the telemetry when a
// sample is due, regroups the nodes when the regroup period has passed,
// and takes the free GPUs.
func (s *SAS) Begin(v *env.View) {
	nodes := len(v.Cluster.Nodes)
	s.tel, _ = v.Model.(env.Telemetry)
	s.prober, _ = v.Model.(env.Prober)
	if s.pred == nil || s.pred.Nodes() != nodes {
		s.reset(v)
	}
	s.sync(v)
	if s.tel != nil && s.pred.Due(v.Now) {
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
		s.index()
	}
}

// CandidateFeatures implements env.Proposer; see Propose.
func (s *SAS) CandidateFeatures() int { return numCandidateFeatures }

// numCandidateFeatures is the length of a SAS candidate's features.
const numCandidateFeatures = 10

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
func (s *SAS) Propose(v *env.View, j *env.Job) []env.Candidate {
	cs := s.candidates(v, j)
	if len(cs) == 0 {
		return nil
	}
	g := j.Spec.GPUs
	telemetry := s.tel != nil
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

// candidates returns j's candidates as Propose ranks them, without their
// features.
func (s *SAS) candidates(v *env.View, j *env.Job) []candidate {
	in := s.info(j, s.prober)
	telemetry := s.tel != nil
	g := j.Spec.GPUs
	var cs []candidate
	for gi, ns := range s.groups {
		if s.room(gi) >= g {
			cs = append(cs, s.candidate(v, j, in, s.prober, telemetry, ns, gi))
		}
	}
	if len(cs) == 0 {
		// No group fits the job alone: widen to the most available
		// groups until the union has room.
		var union []int
		room := 0
		for gi, ns := range s.groups {
			union = append(union, ns...)
			room += s.room(gi)
			if room >= g {
				slices.Sort(union)
				cs = append(cs, s.candidate(v, j, in, s.prober, telemetry, union, len(s.groups)))
				break
			}
		}
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
	return cs
}

// best returns the decision Propose's first candidate makes for j, if
// any, without the candidates' features.
func (s *SAS) best(v *env.View, j *env.Job) (env.Decision, bool) {
	cs := s.candidates(v, j)
	if len(cs) == 0 {
		return env.Decision{}, false
	}
	return env.Decision{Job: j.ID, Nodes: cs[0].alloc, PSRebalance: j.Spec.Arch == env.PS && !s.EvenPS}, true
}

// Commit implements env.Proposer.
func (s *SAS) Commit(_ *env.View, j *env.Job, c env.Candidate) {
	s.commit(c.Decision.Nodes)
	delete(s.jobs, j.ID)
}

// distinctNodes returns the distinct nodes of alloc in order.
func distinctNodes(alloc []int) []int {
	var ns []int
	for _, n := range alloc {
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	return ns
}

// reset sizes the policy's state for v's cluster.
func (s *SAS) reset(v *env.View) {
	n := len(v.Cluster.Nodes)
	s.pred = NewPredictor(n, max(s.History, 1), max(s.SamplePeriod, 0))
	s.pred.Model = s.Forecaster
	s.groups, s.regrouped, s.fresh = nil, math.NaN(), false
	s.pts = nil
	s.occ = make([]int, n)
	s.flows = make([]float64, n)
	s.loads = make([]env.Usage, n)
	s.stamp = make([]int, n)
	s.mark = 0
	s.jobs = map[int]*jobInfo{}
	s.synced = false
	s.gpn = 0
	for _, nd := range v.Cluster.Nodes {
		s.gpn = max(s.gpn, nd.GPUs)
	}
}

// regroup recomputes the node groups from the current forecasts (and the
// GPU speeds); without telemetry only the speeds tell nodes apart.
func (s *SAS) regroup(v *env.View, telemetry bool) {
	nodes := len(v.Cluster.Nodes)
	if len(s.pts) != nodes {
		s.pts = make([]point, nodes)
	}
	pts := make([][]float64, nodes)
	for n, nd := range v.Cluster.Nodes {
		// A node's point is kept while its forecasts and speed stay.
		pt := &s.pts[n]
		if ver := s.pred.version(n); pt.xs == nil || pt.ver != ver || pt.telemetry != telemetry ||
			math.Float64bits(pt.speed) != math.Float64bits(nd.Speed) {
			var f Forecast
			if telemetry && s.pred.Len(n) > 0 {
				f = s.pred.Forecast(n)
			}
			*pt = point{xs: Features(f, nd.Speed), ver: ver, telemetry: telemetry, speed: nd.Speed}
		}
		pts[n] = pt.xs
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
func (s *SAS) info(j *env.Job, prober env.Prober) *jobInfo {
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

// ratio returns a/b, or 1 when that is not a finite positive number.
func ratio(a, b float64) float64 {
	r := a / b
	if !(r > 0) || math.IsInf(r, 0) {
		return 1
	}
	return r
}

// slowdown predicts the iteration-time factor of a worker on node n if k
// more workers join it: 1 + sum over resources of weight x overload
// probability, over the node's speed. multi says whether the job spans
// nodes (only then does its NIC matter).
func (s *SAS) slowdown(v *env.View, in *jobInfo, n, k int, multi, telemetry bool) float64 {
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

// candidate is one placement of a job with its cost.
type candidate struct {
	alloc    []int
	cost     float64
	bin      float64 // cost rounded to the resolution
	leftover int     // free GPUs left on the nodes used
	group    int
}

// better orders candidates: lower cost bin, then tighter fit, then lower
// group.
func (c candidate) better(o candidate) bool {
	if c.bin != o.bin {
		return c.bin < o.bin
	}
	if c.leftover != o.leftover {
		return c.leftover < o.leftover
	}
	return c.group < o.group
}

func (s *SAS) bin(x float64) float64 {
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
func (s *SAS) candidate(v *env.View, j *env.Job, in *jobInfo, prober env.Prober, telemetry bool, nodes []int, group int) candidate {
	g := j.Spec.GPUs
	best, found, ran := s.single(v, in, g, telemetry, group)
	for k := 0; !ran && k < len(nodes); k++ {
		n := nodes[k]
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
func (s *SAS) stretch(j *env.Job, in *jobInfo, prober env.Prober, placement []int) float64 {
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
