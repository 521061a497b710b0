package strn

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "strn"

// Defaults of the STRN fields, used where a field is zero.
const (
	// DefaultOverload is the utilisation above which a resource slows the
	// tasks on a node (env.Workers' default).
	DefaultOverload = 0.8
	// DefaultUncertainty is the width, in utilisation, of the smoothing of
	// the overload function: how far a node's load may drift from its
	// telemetry reading while the job runs.
	DefaultUncertainty = 0.1
	// DefaultWorkerCPU is the share of a node's CPUs one worker is assumed
	// to keep busy (env.Workers' default, 1/16).
	DefaultWorkerCPU = 1.0 / 16
	// DefaultWorkerMemBW is the share of a node's memory bandwidth one
	// worker is assumed to use (env.Workers' default).
	DefaultWorkerMemBW = 0.08
	// DefaultPack is the slowdown-equivalent cost of leaving one whole
	// node's worth of GPUs free on a chosen node: a small best-fit term.
	DefaultPack = 0.01
	// DefaultSyncMargin is the relative gain in expected time-to-accuracy
	// a sync strategy needs over the best earlier candidate to be chosen.
	DefaultSyncMargin = 0.01
)

// probeLoad is the background utilisation of the saturated resource in the
// sensitivity probes.
const probeLoad = 0.95

// DefaultSyncs are the sync strategies STRN chooses among, in order of
// preference on ties: BSP, SSP with staleness 3, ASP, local SGD with
// period 8.
var DefaultSyncs = []env.Sync{
	{Kind: env.BSP},
	{Kind: env.SSP, Staleness: 3},
	{Kind: env.ASP},
	{Kind: env.LocalSGD, Period: 8},
}

// Fallback is the sensitivity STRN assumes for every job when the model
// cannot probe: every job equally sensitive to compute contention, mildly
// to the network and to spreading, not at all to straggling (so BSP).
var Fallback = Sensitivity{CPU: 0.5, MemBW: 0.5, Net: 0.1, Spread: 0.1}

// Sensitivity is a job's probed sensitivity profile: relative slowdowns of
// its iteration time (0.2 = 20% slower).
type Sensitivity struct {
	// CPU and MemBW are the slowdowns per unit of overload of the resource
	// on the job's busiest node (overload = (u - Overload) / (1 -
	// Overload)).
	CPU, MemBW float64
	// Net is the slowdown per unit of NIC contention beyond 1 (a NIC whose
	// other users take a share u leaves 1/(1-u) contention) on a
	// multi-node placement; 0 for a one-GPU job, which never spreads.
	Net float64
	// Spread is the slowdown of spreading the job over one node more than
	// it needs, from the extra all-reduce hops.
	Spread float64
	// Straggling is the slowdown that per-worker jitter causes under BSP
	// on the packed placement; 0 for one worker.
	Straggling float64
}

// STRN is proactive straggler reduction at scheduling time: it profiles
// each job's sensitivities by probes, places it where its expected
// slowdown is lowest and picks its sync strategy. The zero value is usable
// (every zero field takes its default); it is not safe for concurrent use.
type STRN struct {
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
	picked    []bool   // scratch of greedy: per node, in order
	take      []int    // scratch: GPUs per node of a candidate set
	cands     []placed // this job's candidate placements, best first
	top       []int    // scratch of leastFirst

	memo RiskMemo // risk's answers

	ix           classIndex   // the nodes by what a one-node candidate's score reads
	gpn          int          // the cluster's largest node, in GPUs (of gpnCluster)
	gpnCluster   *env.Cluster // the cluster gpn was found for, with gpnNodes nodes
	gpnNodes     int
	cs           []classScore // scratch of placeOne
	cn           []candNode   // scratch of placeOne
	nodesScratch []int        // scratch of placeOne
	rt           riskTable    // risk on a grid, for the one-node bound
	pending      pendingJobs  // Schedule's pending jobs and free GPUs

	// Per decision point (Begin).
	tel    env.Telemetry
	pr     env.Prober
	loaded bool            // load and racks are read
	done   <-chan struct{} // the View's Done
}

type cached struct {
	name string
	sens Sensitivity
}

var _ env.Proposer = (*STRN)(nil)

// New returns a STRN policy with the default settings. It uses no
// randomness, so the seed is ignored.
func New(policies.Config) (policies.Policy, error) { return &STRN{}, nil }

var _ env.ProgressBlind = (*STRN)(nil)

// ProgressBlind implements env.ProgressBlind: STRN reads the pending jobs,
// the free GPUs, the nodes' telemetry and probes, none of which advancing a
// running job changes.
func (*STRN) ProgressBlind() bool { return true }

// ErrConfig is returned by Schedule when a field of STRN is out of range.
var ErrConfig = errors.New("strn: bad config")

// check validates the settings after defaults.
func (s *STRN) check() error {
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

func (s *STRN) defaults() {
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

// Schedule implements policies.Policy. Pending jobs are taken in arrival
// order with backfilling; each that fits goes to the candidate placement of
// least expected slowdown with the sync strategy of least expected
// time-to-accuracy (env.Delegate with the heuristic's own choices,
// walking only the pending jobs, which it keeps from View.Changed across
// the decision points of a run). Running jobs are never moved. It returns
// ErrConfig when a field is out of range.
func (s *STRN) Schedule(v *env.View) ([]env.Decision, error) {
	s.defaults()
	if err := s.check(); err != nil {
		return nil, err
	}
	ds := s.delegate(v)
	if v.Cancelled() {
		return nil, env.ErrCancelled
	}
	return ds, nil
}

// Begin implements env.Proposer.
//
// When v continues the run of the View STRN saw last (the same View, the
// next Seq, the same cluster), it updates its free GPUs and its class
// index from v.Touched and its own placements of the last decision point
// instead of copying every node's.
func (s *STRN) Begin(v *env.View) {
	s.defaults()
	s.tel, _ = v.Model.(env.Telemetry)
	s.pr, _ = v.Model.(env.Prober)
	s.done = v.Done
	s.loaded = false
	ix := &s.ix
	c := v.Cluster
	ix.next = v == ix.view && v.Seq != 0 && v.Seq == ix.seq+1
	cont := ix.built && ix.next && c == ix.cluster &&
		len(c.Nodes) == ix.nodes && len(v.Free) == len(c.Nodes) && ix.telem == (s.tel != nil)
	ix.view, ix.seq = v, v.Seq
	if !cont {
		ix.built, ix.synced = false, false
		ix.booked = ix.booked[:0]
		s.free = append(s.free[:0], v.Free...)
		return
	}
	ix.changed = ix.changed[:0]
	for _, n := range v.Touched {
		s.free[n] = v.Free[n]
		ix.changed = append(ix.changed, n)
	}
	for _, n := range ix.booked {
		s.free[n] = v.Free[n]
		if s.tel == nil {
			s.load[n] = env.Usage{} // without telemetry every node reads idle
		}
		ix.changed = append(ix.changed, n)
	}
	ix.booked = ix.booked[:0]
	if s.tel != nil {
		// Every load is read again at the first Propose, and compared
		// with the index there.
		ix.synced = false
		return
	}
	for _, n := range ix.changed {
		s.move(c, n)
	}
}

// sync reads the loads at the first Propose of a decision point and
// brings the class index up to date with them (rebuilding it when v does
// not continue the run it was built for, but only from the second
// decision point of a run on: a caller that makes a STRN per decision
// point is better served by the scan). With telemetry, when more than
// an eighth of the nodes changed class the index is left as it was and
// this decision point scans the nodes (ix.synced false).
func (s *STRN) sync(v *env.View) {
	ix := &s.ix
	c := v.Cluster
	if len(v.Free) != len(c.Nodes) || !ix.built && !ix.next {
		// No free GPUs per node (or not one per node), or the first
		// decision point seen: the scan, as always.
		s.readLoads(v)
		ix.built, ix.synced = false, false
		return
	}
	if !ix.built {
		s.readLoads(v)
		s.rebuild(c)
		ix.built, ix.synced = true, true
		ix.cluster, ix.nodes, ix.telem = c, len(c.Nodes), s.tel != nil
		return
	}
	if s.tel == nil {
		ix.synced = true // Begin moved the nodes
		return
	}
	s.load = policies.NodeLoads(v, s.load)
	ix.changed = ix.changed[:0]
	for n, u := range s.load {
		// A node's speed and GPUs are the cluster's, the same at every
		// decision point of the run the index was built for.
		k := &ix.cls[ix.of[n]].key
		if math.Float64bits(u.CPU) != k.cpu || math.Float64bits(u.MemBW) != k.mem || s.free[n] != k.free {
			ix.changed = append(ix.changed, n)
		}
	}
	if len(ix.changed) > len(c.Nodes)/8+8 {
		ix.synced = false
		return
	}
	for _, n := range ix.changed {
		s.move(c, n)
	}
	ix.synced = true
}

// MaxPlacements is the most placements Propose offers a job.
const MaxPlacements = 4

// numCandidateFeatures is the length of a STRN candidate's features.
const numCandidateFeatures = 12

// CandidateFeatures implements env.Proposer; see Propose.
func (s *STRN) CandidateFeatures() int { return numCandidateFeatures }

// Propose implements env.Proposer. STRN's own choice comes first:
// its least-score placement with the sync strategy chooseSync picks; then
// the same placement with each other strategy (jobs of two or more GPUs,
// when the model can be probed); then up to MaxPlacements-1 further
// placements in score order, with the first one's strategy. Features:
// the placement's score, its score minus the best, its nodes over the
// fewest that could hold the job, 1 if it spans racks, its worst node's
// risk, the mean and standard deviation of its nodes' pressure, the
// strategy's probed time-to-accuracy over the chosen strategy's (1 when
// not probed), and the strategy one-hot (BSP, SSP, ASP, local SGD).
func (s *STRN) Propose(v *env.View, j *env.Job) []env.Candidate {
	if !s.loaded {
		s.sync(v)
		s.loaded = true
	}
	sens := s.Sensitivity(v, j)
	g := j.Spec.GPUs
	if !s.place(v.Cluster, g, sens) {
		return nil
	}
	gpn := s.gpnOf(v.Cluster)
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

// Commit implements env.Proposer: it books the placement's GPUs and
// load for the rest of the decision point and forgets the job's probes.
func (s *STRN) Commit(v *env.View, j *env.Job, c env.Candidate) {
	nodes, take := policies.NodeShares(c.Decision.Nodes)
	for k, n := range nodes {
		s.free[n] -= take[k]
	}
	policies.BookLoad(s.load, nodes, take, s.WorkerCPU, s.WorkerMemBW)
	if s.ix.built {
		s.ix.booked = append(s.ix.booked, nodes...)
		if s.ix.synced {
			for _, n := range nodes {
				s.move(v.Cluster, n)
			}
		}
	}
	delete(s.cache, j.ID) // placed for good: STRN never preempts
}

// gpnOf returns the GPUs of c's largest node.
func (s *STRN) gpnOf(c *env.Cluster) int {
	if c != s.gpnCluster || len(c.Nodes) != s.gpnNodes {
		s.gpn = 0
		for _, n := range c.Nodes {
			s.gpn = max(s.gpn, n.GPUs)
		}
		s.gpnCluster, s.gpnNodes = c, len(c.Nodes)
	}
	return s.gpn
}

// readLoads fills s.load with each node's telemetry (idle without it) and
// s.racks with the cluster's racks.
func (s *STRN) readLoads(v *env.View) {
	s.load = policies.NodeLoads(v, s.load)
	s.gpnCluster = nil // the cluster may have changed
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

// Sensitivity returns j's sensitivity profile: probed once per job (and
// cached until the job is placed) when v.Model implements env.Prober, and
// Fallback otherwise.
//
// On the job's packed placement p (its GPUs on as few of the largest nodes
// as possible) with BSP, and base = Probe(p, idle, no jitter):
//
//	CPU        = (Probe(p, CPU at 0.95) / base - 1) / overload(0.95 + own CPU)
//	MemBW      = (Probe(p, MemBW at 0.95) / base - 1) / overload(0.95 + own MemBW)
//	Straggling = Probe(p, idle, jitter) / base - 1
//
// and on the multi-node placement q (p when it has several nodes, else the
// job split evenly over two nodes):
//
//	Net    = (Probe(q, Net at 0.95) / Probe(q, idle) - 1) / (1/(1-0.95) - 1)
//	Spread = Probe(p split evenly over one node more, idle) / base - 1
func (s *STRN) Sensitivity(v *env.View, j *env.Job) Sensitivity {
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

// probe measures j's sensitivities by probes of pr (see the package
// doc).
func (s *STRN) probe(v *env.View, j *env.Job, pr env.Prober) Sensitivity {
	var sn Sensitivity
	g := j.Spec.GPUs
	gpn := s.gpnOf(v.Cluster)
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

// split divides g GPUs over k nodes as evenly as possible, larger shares
// first.
func split(g, k int) []int {
	p := make([]int, k)
	for i := range p {
		p[i] = g / k
		if i < g%k {
			p[i]++
		}
	}
	return p
}

// usable reports whether a probed iteration time is a positive number.
func usable(t float64) bool { return t > 0 && !math.IsInf(t, 0) }

// slowdown returns t/base - 1, floored at 0; 0 when either is unusable.
func slowdown(t, base float64) float64 {
	if !usable(t) || !usable(base) {
		return 0
	}
	return max(0, t/base-1)
}

// perUnit returns a slowdown per unit of stress, 0 without stress.
func perUnit(slow, stress float64) float64 {
	if !(stress > 0) {
		return 0
	}
	return slow / stress
}

// overload is the model's overload of a resource at utilisation u, without
// smoothing.
func (s *STRN) overload(u float64) float64 {
	return max(0, u-s.Overload) / (1 - s.Overload)
}

// risk is Risk with s's settings, remembered (RiskMemo).
func (s *STRN) risk(u float64) float64 {
	return s.memo.Risk(s.Overload, s.Uncertainty, u)
}

// contention is the NIC contention beyond 1 when other users take a share
// u of the NIC: 1/(1-u) - 1, with u capped at probeLoad.
func contention(u float64) float64 {
	u = min(max(u, 0), probeLoad)
	return u / (1 - u)
}

// nodeRisk is the expected slowdown of a job's k workers on node n.
func (s *STRN) nodeRisk(c *env.Cluster, n, k int, sens Sensitivity, multi bool) float64 {
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

// pressure is node n's predicted busiest compute resource with k more
// workers.
func (s *STRN) pressure(n, k int) float64 {
	u := s.load[n]
	return max(u.CPU+s.WorkerCPU*float64(k), u.MemBW+s.WorkerMemBW*float64(k))
}

// score is the expected slowdown of the job on the candidate set
// s.order[i] with s.take[i] GPUs: the worst node's risk (BSP waits for the
// slowest worker), Spread per node beyond the fewest that could hold it,
// the cross-rack slowdown of its ring, Straggling times the mean plus the
// spread (standard deviation) of the nodes' pressure, and the best-fit
// term.
func (s *STRN) score(c *env.Cluster, g, gpn int, sens Sensitivity) placed {
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

// placed is one candidate placement with its score and the score's parts.
type placed struct {
	nodes, take     []int // nodes in rack then index order, GPUs on each
	one             int   // while place selects: the single node + 1, nodes and take not yet made
	score           float64
	worst, mean, sd float64
	cross           bool
}

// place finds the candidate placements of g GPUs and leaves them in
// s.cands, least score first (the earlier-found first among equal
// scores). A job that fits on one node is consolidated: every node with
// room is a candidate. A larger job is packed greedily, once over the
// whole cluster and once within each rack that has room: each step takes
// the node of least risk for the GPUs it would hold, charging Spread for
// the share of a node's worth of GPUs it leaves for further nodes. Each
// candidate's nodes are ordered by rack, then index, so that the ring
// crosses racks as few times as possible. It reports false when the job
// does not fit.
func (s *STRN) place(c *env.Cluster, g int, sens Sensitivity) bool {
	gpn := s.gpnOf(c)
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
	// One candidate per node that holds the whole job: from the class
	// index when it is up to date, else scored here, each its node lists
	// made only for the few leastFirst keeps (a single-GPU job on a large
	// cluster has a candidate per node).
	if !s.ix.synced || !s.placeOne(c, g, gpn, sens) {
		if !s.prepareBound(sens) || !s.scanOne(c, g, gpn, sens, true) {
			s.scanOne(c, g, gpn, sens, false)
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
	s.cands, s.top = leastFirst(s.cands, MaxPlacements, s.top)
	for i := range s.cands {
		if pc := &s.cands[i]; pc.one > 0 {
			pc.nodes, pc.take, pc.one = []int{pc.one - 1}, []int{g}, 0
		}
	}
	return len(s.cands) > 0
}

// byScore orders candidates by score (NaN equal to everything).
func byScore(a, b placed) int {
	switch {
	case a.score < b.score:
		return -1
	case b.score < a.score:
		return 1
	}
	return 0
}

// leastFirst orders cands least score first, the earlier first among
// equal scores (a stable sort), as far as anyone reads them: with more
// than m candidates it keeps only the m least, found in one pass (a
// single-node job on a large cluster has a candidate per node, and the
// full sort was most of STRN's time there). A NaN score has no place in
// the order, so with one the whole list is stable-sorted as before. top
// is scratch space, returned for reuse.
func leastFirst(cands []placed, m int, top []int) ([]placed, []int) {
	nan := false
	for i := range cands {
		if math.IsNaN(cands[i].score) {
			nan = true
			break
		}
	}
	if nan || len(cands) <= m {
		slices.SortStableFunc(cands, byScore)
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

// greedy builds a multi-node candidate in s.order and s.take from nodes
// (ascending indices: the whole cluster, or one rack's, from readLoads).
// It reports false when they lack the room.
func (s *STRN) greedy(c *env.Cluster, g, gpn int, nodes []int, sens Sensitivity) bool {
	room := 0
	for _, n := range nodes {
		room += s.free[n]
	}
	if room < g {
		return false
	}
	s.order, s.take = s.order[:0], s.take[:0]
	if len(s.picked) < len(c.Nodes) {
		s.picked = make([]bool, len(c.Nodes))
	}
	// s.picked marks the nodes in s.order (O(1) where slices.Contains was
	// O(len(s.order)): 4,096 workers on 4,096 nodes took seconds), and is
	// all false again when greedy returns.
	defer func() {
		for _, n := range s.order {
			s.picked[n] = false
		}
	}()
	for left := g; left > 0; {
		// Each pick scans every node: the View's Done is polled once per
		// pick, and a cancelled pass builds no candidate.
		if env.Closed(s.done) {
			return false
		}
		pick, pickK, pickKey := -1, 0, math.Inf(1)
		for _, n := range nodes {
			f := s.free[n]
			if f == 0 || s.picked[n] {
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
		s.picked[pick] = true
		left -= pickK
	}
	return true
}

// chooseSync is ChooseSync with s's strategies and margin.
func (s *STRN) chooseSync(pr env.Prober, j *env.Job, placement []int, load env.Usage) (env.Sync, []float64) {
	return ChooseSync(pr, j, placement, load, s.Syncs, s.SyncMargin)
}

// ChooseSync is STRN's sync rule: it returns the strategy of least
// expected time-to-accuracy per unit of work, Probe(j with the strategy,
// placement, load, jitter) x the iterations to target the convergence
// model pr runs believes (env.Believed; +Inf for a strategy that never
// reaches it), among those of syncs that keep the job as accurate as BSP
// as far as the measurements can tell (env.Convergence.Keeps: STRN
// mitigates stragglers without trading accuracy); a later candidate must
// beat the best earlier one by margin (negative: none).
// placement is the GPUs per node, load the background every node is
// probed at (STRN passes the chosen nodes' peak). One-GPU jobs, and every
// job when pr is nil, get BSP. It also returns each strategy's probed time
// (nil when it probes none).
func ChooseSync(pr env.Prober, j *env.Job, placement []int, load env.Usage, syncs []env.Sync, margin float64) (env.Sync, []float64) {
	w := j.Spec.GPUs
	if pr == nil || w < 2 || len(syncs) == 0 {
		return env.Sync{}, nil
	}
	job := *j
	conv := env.Believed(pr)
	var best env.Sync
	bestT := math.Inf(1)
	times := make([]float64, len(syncs))
	for i, sy := range syncs {
		job.Sync = sy
		t := pr.Probe(&job, placement, load, true) * conv.Factor(j.Spec.Model, sy, w)
		times[i] = t
		if !usable(t) || !conv.Keeps(j.Spec.Model, sy, w) {
			continue
		}
		if i == 0 || math.IsInf(bestT, 1) || t < bestT*(1-max(0, margin)) {
			best, bestT = sy, t
		}
	}
	return best, times
}
