package sched

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
)

// Groupings of the nodes into the group slots.
const (
	// GroupRack groups the nodes by rack, once: racks in index order,
	// merged into at most Config.Groups groups of about equal GPUs when
	// there are more racks than groups. A job placed in one group crosses
	// as few racks as the grouping allows. STRN-RL's grouping.
	GroupRack = "rack"
	// GroupLoad regroups the nodes at every telemetry refresh by their
	// predicted pace: the P90 of a node's busiest compute resource (from
	// a moving mean and variance of its telemetry) plus its GPUs'
	// slowness, 1/speed - 1 (a slow GPU holds a worker back as a loaded
	// node does). Each group is a band of LoadBands, so it holds nodes
	// that behave alike, as SAS groups them; a band may be empty.
	// SAS-RL's grouping.
	GroupLoad = "load"
)

// Config sets up an Encoder.
type Config struct {
	// Groups is the most node groups, each a placement slot beside the
	// whole cluster's (default DefaultGroups).
	Groups int
	// Grouping is GroupRack (the default) or GroupLoad.
	Grouping string
	// Syncs are the strategies a job may get, BSP first (default
	// DefaultSyncs, STRN's set).
	Syncs []env.Sync
	// Hold offers the action "leave this job pending this round". It is
	// valid while some job runs (so a later decision point comes) and the
	// job has waited less than HoldLimit.
	Hold bool
	// HoldLimit is the seconds of waiting after which a job can no longer
	// be held (default 3600).
	HoldLimit float64
	// Refresh is the seconds of simulated time between two readings of
	// a node's telemetry (default DefaultRefresh) when decision points are
	// frequent; between readings the encoder books the load of the jobs
	// it places.
	Refresh float64
	// ReadBudget is the most nodes whose telemetry one decision point
	// reads, after the first (default DefaultReadBudget): it bounds the
	// per-decision cost on large clusters, at the price of older readings
	// when decision points are sparse.
	ReadBudget int
	// PSRebalance sets Decision.PSRebalance on parameter-server jobs, as
	// SAS does.
	PSRebalance bool
}

// Defaults.
const (
	// DefaultGroups is the default number of group slots.
	DefaultGroups = 8
	// DefaultRefresh is the default telemetry period: SAS's sample period.
	DefaultRefresh = 300.0
	// DefaultReadBudget is the default of Config.ReadBudget.
	DefaultReadBudget = 256
	// overload is the utilisation above which a compute resource slows
	// the workers on it (env.Workers' default threshold).
	overload = 0.8
	// workerCPU and workerMemBW are the shares of a node one worker is
	// assumed to use (env.Workers' defaults, as STRN books them).
	workerCPU, workerMemBW = 1.0 / 16, 0.08
	// emaAlpha weights the newest telemetry sample in the per-node
	// predictor's moving mean and variance.
	emaAlpha = 0.2
	// z90 is the standard normal's 90th percentile.
	z90 = 1.2816
)

// DefaultSyncs are the strategies of the sync part of the action, as STRN
// orders them: BSP, SSP(3), ASP, local SGD(8).
var DefaultSyncs = []env.Sync{{Kind: env.BSP}, {Kind: env.SSP, Staleness: 3}, {Kind: env.ASP}, {Kind: env.LocalSGD, Period: 8}}

// Feature counts.
const (
	// jobBase is the job part before the per-sync penalties: placement's
	// JobFeatures, then the waited time and the fewest nodes.
	jobBase = placement.JobFeatures + 2
	// SlotFeatures is the number of features of one placement slot.
	SlotFeatures = 12
)

// Encoder turns a decision point of the simulator into the direct
// policies' observation and joint action, and an action back into a
// Decision. Actions are slot x sync, slot-major: action s*len(Syncs)+k
// places the job on slot s's template with Syncs[k]; slots 0..Groups-1 are
// the node groups and slot Groups the whole cluster; the last action
// (Actions()-1) is "hold", when Config.Hold. The observation does not
// depend on the cluster's size, so a policy trained on one cluster runs on
// another.
//
// Per decision point (Begin) it reads at most ReadBudget nodes'
// telemetry (see Begin); per job (Observe) it builds one template
// placement per slot in O(nodes): the job's GPUs on the one node of least
// pressure plus slowness (1/speed - 1) that holds them (ties to the
// tighter fit), else on the nodes of most free GPUs, least pressure plus
// slowness first among equals. An Encoder is not
// safe for concurrent use.
type Encoder struct {
	cfg      Config
	cluster  *env.Cluster
	gpn      int     // most GPUs on a node
	total    int     // GPUs of the cluster
	static   [][]int // GroupRack's groups
	dyn      [][]int // GroupLoad's groups
	groups   [][]int // the groups in use
	groupOf  []int   // each node's group in groups
	size     []int   // GPUs per group
	load     []env.Usage
	mean     []float64 // per node: moving mean of the pressure
	vari     []float64 // per node: moving variance of the pressure
	p90      []float64 // per node: mean + z90 sd
	seen     []bool    // per node: read at least once
	cursor   int       // the next node to read
	free     []int     // free GPUs per node, this decision point's bookings out
	slow     []float64 // per node: 1/speed - 1, 0 for the reference GPU
	refresh  float64   // when the telemetry was last read (NaN: never)
	syncLogs []float64 // scratch
	// The jobs committed at this decision point (Commit), by ID, and a
	// mark per ID: such a job runs from this decision point on, whether
	// or not the view shows it yet.
	committed []int
	marked    []bool

	// The job the templates were built for.
	job       *env.Job
	now       float64
	templates []template
	order     []int // scratch
	ring      []int // scratch: a template's ring order
	ringNodes []int // scratch: a template's nodes before it
	ringTake  []int // scratch: and their GPUs
}

// template is one slot's placement of the current job.
type template struct {
	nodes []int // distinct nodes, in placement order
	take  []int // GPUs on each
	feat  [SlotFeatures]float64
	ok    bool
}

// WithDefaults returns c with its zero fields set to the defaults, as an
// Encoder reads them, and an error naming the first field out of range.
func (c Config) WithDefaults() (Config, error) {
	if c.Groups == 0 {
		c.Groups = DefaultGroups
	}
	if c.Grouping == "" {
		c.Grouping = GroupRack
	}
	if c.Syncs == nil {
		c.Syncs = DefaultSyncs
	}
	if c.HoldLimit == 0 {
		c.HoldLimit = 3600
	}
	if c.Refresh == 0 {
		c.Refresh = DefaultRefresh
	}
	if c.ReadBudget == 0 {
		c.ReadBudget = DefaultReadBudget
	}
	switch {
	case c.Groups < 1 || c.Groups > 64:
		return c, fmt.Errorf("sched: groups = %d, want 1 to 64", c.Groups)
	case c.Grouping != GroupRack && c.Grouping != GroupLoad:
		return c, fmt.Errorf("sched: grouping %q, want %s or %s", c.Grouping, GroupRack, GroupLoad)
	case len(c.Syncs) == 0 || c.Syncs[0] != (env.Sync{Kind: env.BSP}):
		return c, errors.New("sched: syncs must start with BSP")
	case !(c.Refresh > 0) || math.IsInf(c.Refresh, 0):
		return c, fmt.Errorf("sched: refresh = %v s, want > 0", c.Refresh)
	case c.ReadBudget < 1:
		return c, fmt.Errorf("sched: read budget = %d nodes, want >= 1", c.ReadBudget)
	case !(c.HoldLimit > 0):
		return c, fmt.Errorf("sched: hold limit = %v s, want > 0", c.HoldLimit)
	}
	return c, nil
}

// Actions returns the number of actions of the encoding (c with its
// defaults): (Groups+1) x len(Syncs), plus one for hold when Hold.
func (c Config) Actions() int {
	n := (c.Groups + 1) * len(c.Syncs)
	if c.Hold {
		n++
	}
	return n
}

// NewEncoder validates cfg for cluster c and returns the encoder.
func NewEncoder(cfg Config, c *env.Cluster) (*Encoder, error) {
	if c == nil || len(c.Nodes) == 0 {
		return nil, errors.New("sched: no cluster")
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	n := len(c.Nodes)
	e := &Encoder{cfg: cfg, cluster: c, load: make([]env.Usage, n), mean: make([]float64, n),
		vari: make([]float64, n), p90: make([]float64, n), seen: make([]bool, n), refresh: math.NaN(),
		templates: make([]template, cfg.Groups+1)}
	e.slow = make([]float64, n)
	for i, nd := range c.Nodes {
		e.gpn = max(e.gpn, nd.GPUs)
		e.total += nd.GPUs
		if nd.Speed > 0 {
			e.slow[i] = max(0, 1/nd.Speed-1)
		}
	}
	e.static = rackGroups(c, cfg.Groups)
	e.groups = e.static
	e.sizes()
	return e, nil
}

// rackGroups groups the nodes by rack, merging consecutive racks into at
// most k groups of about equal GPUs.
func rackGroups(c *env.Cluster, k int) [][]int {
	byRack := map[int][]int{}
	var racks []int
	for i, nd := range c.Nodes {
		if _, ok := byRack[nd.Rack]; !ok {
			racks = append(racks, nd.Rack)
		}
		byRack[nd.Rack] = append(byRack[nd.Rack], i)
	}
	slices.Sort(racks)
	if len(racks) <= k {
		out := make([][]int, len(racks))
		for i, r := range racks {
			out[i] = byRack[r]
		}
		return out
	}
	total := 0
	for _, nd := range c.Nodes {
		total += nd.GPUs
	}
	out := make([][]int, 0, k)
	var cur []int
	acc := 0
	for i, r := range racks {
		for _, n := range byRack[r] {
			acc += c.Nodes[n].GPUs
		}
		cur = append(cur, byRack[r]...)
		// Close the group once it holds its share of the GPUs, keeping
		// enough racks for the groups still to fill.
		if len(out) < k-1 && (float64(acc) >= float64(total)*float64(len(out)+1)/float64(k) || len(racks)-i-1 == k-1-len(out)) {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// sizes recomputes the GPUs per group and each node's group.
func (e *Encoder) sizes() {
	e.size = e.size[:0]
	e.groupOf = slices.Grow(e.groupOf[:0], len(e.cluster.Nodes))[:len(e.cluster.Nodes)]
	for gi, g := range e.groups {
		s := 0
		for _, n := range g {
			s += e.cluster.Nodes[n].GPUs
			e.groupOf[n] = gi
		}
		e.size = append(e.size, s)
	}
}

// Groups returns the number of group slots.
func (e *Encoder) Groups() int { return e.cfg.Groups }

// Syncs returns the strategies of the sync part of the action.
func (e *Encoder) Syncs() []env.Sync { return e.cfg.Syncs }

// Actions returns the number of actions: (Groups+1) x len(Syncs), plus
// one for hold when Config.Hold.
func (e *Encoder) Actions() int { return e.cfg.Actions() }

// Hold returns the hold action, or -1 without Config.Hold.
func (e *Encoder) Hold() int {
	if !e.cfg.Hold {
		return -1
	}
	return e.Actions() - 1
}

// ObsDim returns the observation's length.
func (e *Encoder) ObsDim() int { return ObsDim(e.cfg.Groups, len(e.cfg.Syncs)) }

// ObsDim returns the observation's length for groups group slots and
// syncs strategies.
func ObsDim(groups, syncs int) int { return jobBase + syncs + (groups+1)*SlotFeatures }

// Config returns the encoder's settings, defaults filled in.
func (e *Encoder) Config() Config { return e.cfg }

// Begin readies the encoder for a decision point. The first reads every
// node's telemetry; later ones read the next ReadBudget nodes, round
// robin, once Refresh x ReadBudget / nodes seconds have passed since the
// last reading, so that each node is read about once per Refresh when
// decision points are frequent, and a decision point never reads more
// than ReadBudget nodes. Under GroupLoad it regroups after a reading.
func (e *Encoder) Begin(v *env.View) {
	e.job = nil
	e.free = append(e.free[:0], v.Free...)
	for _, id := range e.committed {
		e.marked[id] = false
	}
	e.committed = e.committed[:0]
	n := len(e.load)
	budget := min(n, e.cfg.ReadBudget)
	if !math.IsNaN(e.refresh) && v.Now < e.refresh+e.cfg.Refresh*float64(budget)/float64(n) {
		return
	}
	if math.IsNaN(e.refresh) {
		budget = n
	}
	e.refresh = v.Now
	tel, _ := v.Model.(env.Telemetry)
	for range budget {
		i := e.cursor
		e.cursor = (e.cursor + 1) % n
		var u env.Usage
		if tel != nil {
			u = tel.NodeLoad(i, v.Now)
		}
		e.load[i] = u
		p := max(u.CPU, u.MemBW)
		if !e.seen[i] {
			e.mean[i], e.vari[i], e.seen[i] = p, 0, true
		} else {
			d := p - e.mean[i]
			e.mean[i] += emaAlpha * d
			e.vari[i] = (1 - emaAlpha) * (e.vari[i] + emaAlpha*d*d)
		}
		e.p90[i] = e.mean[i] + z90*math.Sqrt(e.vari[i])
	}
	if e.cfg.Grouping == GroupLoad {
		e.loadGroups()
	}
}

// LoadBands are the upper bounds of GroupLoad's bands of predicted pace
// (P90 pressure plus slowness); a node above the last is in the last
// band. The bands are finer near the 0.8 overload threshold, where a
// node's future matters most. With fewer groups than bands, neighbouring
// bands merge.
var LoadBands = []float64{0.3, 0.45, 0.55, 0.65, 0.72, 0.8, 0.9}

// loadGroups puts each node in the band of its predicted pace (P90
// pressure plus slowness): nodes that behave alike share a group. It is
// O(nodes).
func (e *Encoder) loadGroups() {
	k := e.cfg.Groups
	if len(e.dyn) != k {
		e.dyn = make([][]int, k)
	}
	for g := range e.dyn {
		e.dyn[g] = e.dyn[g][:0]
	}
	bands := len(LoadBands) + 1
	for n := range e.cluster.Nodes {
		b := 0
		for b < len(LoadBands) && e.p90[n]+e.slow[n] >= LoadBands[b] {
			b++
		}
		g := b * k / bands
		e.dyn[g] = append(e.dyn[g], n)
	}
	e.groups = e.dyn
	e.sizes()
}

// pressure returns node n's busiest compute resource, with extra workers.
func (e *Encoder) pressure(n, extra int) float64 {
	u := e.load[n]
	return max(u.CPU+workerCPU*float64(extra), u.MemBW+workerMemBW*float64(extra))
}

// build makes the current job's templates, once per job and state.
func (e *Encoder) build(v *env.View, j *env.Job) {
	if e.job == j && e.now == v.Now {
		return
	}
	e.job, e.now = j, v.Now
	g := j.Spec.GPUs
	fewest := (g + e.gpn - 1) / e.gpn
	sens := env.Sensitivities[j.Spec.Model]
	for s := range e.templates {
		t := &e.templates[s]
		t.nodes, t.take, t.ok = t.nodes[:0], t.take[:0], false
		t.feat = [SlotFeatures]float64{}
		var nodes []int
		size := e.total
		if s < len(e.groups) {
			nodes, size = e.groups[s], e.size[s]
		} else if s < e.cfg.Groups {
			continue // an empty slot (fewer groups than slots)
		}
		t.feat[0] = 1
		free := e.pack(v, nodes, g, t)
		t.feat[2] = float64(free) / float64(max(size, 1))
		t.feat[11] = float64(size) / float64(max(e.total, 1))
		if !t.ok {
			continue
		}
		t.feat[1] = 1
		t.feat[3] = float64(len(t.nodes)) / float64(fewest)
		rack := e.cluster.Nodes[t.nodes[0]].Rack
		worst, sum, net, risk, p90, slow := 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
		multi := len(t.nodes) > 1
		for i, n := range t.nodes {
			if e.cluster.Nodes[n].Rack != rack {
				t.feat[4] = 1
			}
			p := e.pressure(n, t.take[i])
			worst, sum = max(worst, p), sum+p
			u := e.load[n]
			r := sens.CPU*over(u.CPU+workerCPU*float64(t.take[i])) + sens.MemBW*over(u.MemBW+workerMemBW*float64(t.take[i]))
			if multi {
				net = max(net, u.Net)
				r += sens.Net * contention(u.Net)
			}
			risk = max(risk, r)
			p90 = max(p90, e.p90[n]+max(workerCPU, workerMemBW)*float64(t.take[i]))
			slow = max(slow, e.slow[n])
		}
		t.feat[5], t.feat[6], t.feat[7] = worst, sum/float64(len(t.nodes)), net
		t.feat[8], t.feat[9], t.feat[10] = min(risk, 10), p90, min(slow, 10)
	}
}

// over is the overload per unit beyond the threshold, (u - 0.8) / 0.2.
func over(u float64) float64 { return max(0, u-overload) / (1 - overload) }

// contention is the NIC slowdown at utilisation u, capped at 0.95.
func contention(u float64) float64 { return 1/(1-min(u, 0.95)) - 1 }

// pack builds t as the placement of g GPUs on nodes (nil: every node) and
// returns the free GPUs there.
func (e *Encoder) pack(v *env.View, nodes []int, g int, t *template) int {
	free, best, bestKey := 0, -1, math.Inf(1)
	visit := func(n int) {
		f := e.free[n]
		if f <= 0 {
			return
		}
		free += f
		if f >= g {
			// Least pressure plus slowness (1/speed - 1, as STRN's risk
			// counts a slow GPU), then the tighter fit (a whole node's
			// worth of spare GPUs costs 0.01, STRN's packing weight).
			key := e.pressure(n, g) + e.slow[n] + 0.01*float64(f-g)/float64(e.gpn)
			if key < bestKey {
				best, bestKey = n, key
			}
		}
	}
	if nodes == nil {
		for n := range e.free {
			visit(n)
		}
	} else {
		for _, n := range nodes {
			visit(n)
		}
	}
	if free < g {
		return free
	}
	t.ok = true
	if best >= 0 {
		t.nodes, t.take = append(t.nodes, best), append(t.take, g)
		return free
	}
	// Most free GPUs first (fewest nodes), least pressure among equals.
	order := e.order[:0]
	add := func(n int) {
		if e.free[n] > 0 {
			order = append(order, n)
		}
	}
	if nodes == nil {
		for n := range e.free {
			add(n)
		}
	} else {
		for _, n := range nodes {
			add(n)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if e.free[a] != e.free[b] {
			return e.free[b] - e.free[a]
		}
		if c := cmp.Compare(e.load[a].CPU+e.load[a].MemBW+e.slow[a], e.load[b].CPU+e.load[b].MemBW+e.slow[b]); c != 0 {
			return c
		}
		return a - b
	})
	e.order = order
	left := g
	for _, n := range order {
		k := min(left, e.free[n])
		t.nodes, t.take = append(t.nodes, n), append(t.take, k)
		left -= k
		if left == 0 {
			break
		}
	}
	// Ring order: by rack, then index, so the ring crosses racks least.
	idx := e.ring[:0]
	for i := range t.nodes {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int) int {
		na, nb := t.nodes[a], t.nodes[b]
		if ra, rb := e.cluster.Nodes[na].Rack, e.cluster.Nodes[nb].Rack; ra != rb {
			return ra - rb
		}
		return na - nb
	})
	nodesCopy, takeCopy := append(e.ringNodes[:0], t.nodes...), append(e.ringTake[:0], t.take...)
	for i, k := range idx {
		t.nodes[i], t.take[i] = nodesCopy[k], takeCopy[k]
	}
	e.ring, e.ringNodes, e.ringTake = idx, nodesCopy, takeCopy
	return free
}

// Observe appends to dst the observation of job j at the decision point v:
//
//	log2(1 + GPUs) / 6, log(1 + duration in hours) / 5,
//	one-hot model (bert, cifar10, deepspeech2, imagenet, ncf, yolov3),
//	the model's CPU, memory-bandwidth and NIC sensitivities,
//	pending and running jobs per node, log(1 + hours waited) / 5,
//	log2(1 + fewest nodes that could hold the job) / 4,
//	log of the iterations each strategy trains the job on its workers
//	over BSP's (env.Believed(v.Model).RunFactor; 0 for one not measured),
//	then per slot (the groups, then the whole cluster): 1 if the slot
//	exists, 1 if the job fits, the slot's free share of its GPUs, the
//	template's nodes over the fewest, 1 if it spans racks, its worst and
//	mean node pressure (with the job), its worst NIC load (multi-node),
//	its worst sensitivity-weighted risk, its worst predicted P90
//	pressure, its slowest GPU's 1/speed - 1, the slot's share of the
//	cluster's GPUs.
func (e *Encoder) Observe(dst []float64, v *env.View, j *env.Job) []float64 {
	e.build(v, j)
	base := len(dst)
	dst = append(dst, make([]float64, e.ObsDim())...)
	obs := dst[base:]
	g := j.Spec.GPUs
	placement.FillJob(obs, v, j)
	if len(e.committed) > 0 {
		e.countCommitted(obs, v)
	}
	obs[13] = math.Log1p(max(0, v.Now-j.Spec.Submit)/3600) / 5
	obs[14] = math.Log2(1+float64((g+e.gpn-1)/e.gpn)) / 4
	for k, s := range e.cfg.Syncs {
		obs[jobBase+k] = syncFeature(env.Believed(v.Model), j.Spec.Model, s, g)
	}
	off := jobBase + len(e.cfg.Syncs)
	for s := range e.templates {
		copy(obs[off+s*SlotFeatures:], e.templates[s].feat[:])
	}
	return dst
}

// countCommitted rewrites the pending and running jobs per node
// (features 11 and 12, placement.FillJob's) with the jobs committed at
// this decision point counted as running, as the simulator's view shows
// them once applied (sched.Env applies each decision before the next job
// is observed; policies/direct.Policy returns them all at the end).
func (e *Encoder) countCommitted(obs []float64, v *env.View) {
	pending, running := 0, 0
	for _, a := range v.Active {
		switch {
		case a.State == env.Running || (a.State == env.Pending && e.isCommitted(a.ID)):
			running++
		case a.State == env.Pending:
			pending++
		}
	}
	nodes := float64(max(len(v.Cluster.Nodes), 1))
	obs[11], obs[12] = float64(pending)/nodes, float64(running)/nodes
}

// isCommitted reports whether job id was committed at this decision
// point.
func (e *Encoder) isCommitted(id int) bool { return id >= 0 && id < len(e.marked) && e.marked[id] }

// Mask writes into dst (grown as needed) which actions are valid for job
// j at v: a slot's strategies where its template holds the job (BSP only
// for a one-GPU job), and hold as Config.Hold says (a job committed at
// this decision point counts as running). Some action is always valid
// when j fits in the cluster's free GPUs.
func (e *Encoder) Mask(dst []bool, v *env.View, j *env.Job) []bool {
	e.build(v, j)
	n := e.Actions()
	dst = slices.Grow(dst[:0], n)[:n]
	clear(dst)
	S := len(e.cfg.Syncs)
	for s, t := range e.templates {
		if !t.ok {
			continue
		}
		for k := range S {
			dst[s*S+k] = k == 0 || j.Spec.GPUs > 1 && e.measured(v, j, k)
		}
	}
	if e.cfg.Hold && v.Now-j.Spec.Submit < e.cfg.HoldLimit {
		dst[n-1] = len(e.committed) > 0
		for _, a := range v.Active {
			if a.State == env.Running {
				dst[n-1] = true
				break
			}
		}
	}
	return dst
}

// measured says whether the convergence model answers for Syncs[k] on j
// (the simulator refuses a strategy no measurement covers).
func (e *Encoder) measured(v *env.View, j *env.Job, k int) bool {
	return env.Believed(v.Model).Check(j.Spec.Model, e.cfg.Syncs[k], j.Spec.GPUs) == nil
}

// syncFeature is the log of the factor by which strategy s multiplies the
// iterations a job of the model on w workers trains under c
// (Convergence.RunFactor: the iterations to its target, or the schedule's
// length when it never reaches it), 0 for a strategy no measurement
// covers (masked).
func syncFeature(c *env.Convergence, model string, s env.Sync, w int) float64 {
	f := c.RunFactor(model, s, w)
	if math.IsInf(f, 0) || !(f > 0) {
		return 0
	}
	return math.Log(f)
}

// Decode returns the decision action means for job j at v, and whether it
// is hold (no decision). It panics on an action out of range or on a slot
// whose template does not hold the job.
func (e *Encoder) Decode(v *env.View, j *env.Job, action int) (env.Decision, bool) {
	e.build(v, j)
	if action == e.Hold() {
		return env.Decision{}, true
	}
	S := len(e.cfg.Syncs)
	if action < 0 || action >= (e.cfg.Groups+1)*S {
		panic(fmt.Sprintf("sched: action %d out of range", action))
	}
	t := &e.templates[action/S]
	if !t.ok {
		panic(fmt.Sprintf("sched: action %d: slot %d does not hold job %d", action, action/S, j.ID))
	}
	alloc := make([]int, 0, j.Spec.GPUs)
	for i, n := range t.nodes {
		for range t.take[i] {
			alloc = append(alloc, n)
		}
	}
	sync := e.cfg.Syncs[action%S]
	if j.Spec.GPUs == 1 {
		sync = env.Sync{}
	}
	d := env.Decision{Job: j.ID, Nodes: alloc, Sync: sync}
	if e.cfg.PSRebalance && j.Spec.Arch == env.PS {
		d.PSRebalance = true
	}
	return d, false
}

// Commit books decision d (taken at the current decision point, applied
// or not) in the encoder's copies of the free GPUs and node loads, so that
// the next job of the same decision point sees its workers, and counts
// d's job as running from now on (Observe's running and pending jobs,
// Mask's hold), whether the caller applies decisions one at a time, as
// sched.Env does, or all at the end, as policies/direct.Policy does. It
// forgets the templates.
func (e *Encoder) Commit(d env.Decision) {
	e.job = nil
	if d.Job >= 0 {
		if d.Job >= len(e.marked) {
			e.marked = slices.Grow(e.marked, d.Job+1-len(e.marked))[:d.Job+1]
		}
		if !e.marked[d.Job] {
			e.marked[d.Job] = true
			e.committed = append(e.committed, d.Job)
		}
	}
	for _, n := range d.Nodes {
		e.free[n]--
	}
	multi := false
	for _, n := range d.Nodes {
		if n != d.Nodes[0] {
			multi = true
			break
		}
	}
	for _, n := range d.Nodes {
		e.load[n].CPU += workerCPU
		e.load[n].MemBW += workerMemBW
	}
	if multi {
		// Once per run of a node in d.Nodes (slices.Compact's runs).
		for i, n := range d.Nodes {
			if i == 0 || n != d.Nodes[i-1] {
				e.load[n].Net = min(1, e.load[n].Net+0.5)
			}
		}
	}
}

// Action returns the action nearest decision d for job j at v (a
// teacher's decision, for behaviour cloning): the group slot holding most
// of its GPUs when the decision stays within one group, else the whole
// cluster's slot, and its strategy's index in Syncs (the same kind when
// the exact strategy is not offered; BSP when the kind is not either). It
// returns -1 when that slot's template cannot hold the job.
func (e *Encoder) Action(v *env.View, j *env.Job, d env.Decision) int {
	e.build(v, j)
	slot := e.groupOf[d.Nodes[0]]
	for _, n := range d.Nodes {
		if e.groupOf[n] != slot {
			slot = e.cfg.Groups
			break
		}
	}
	if !e.templates[slot].ok {
		slot = e.cfg.Groups
		if !e.templates[slot].ok {
			return -1
		}
	}
	k := slices.Index(e.cfg.Syncs, d.Sync)
	if k < 0 {
		k = slices.IndexFunc(e.cfg.Syncs, func(s env.Sync) bool { return s.Kind == d.Sync.Kind })
	}
	if k < 0 || j.Spec.GPUs == 1 {
		k = 0
	}
	return slot*len(e.cfg.Syncs) + k
}
