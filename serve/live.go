package serve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/sas"
	"github.com/drover-sched/drover/policies/strn"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
	"github.com/prometheus/client_golang/prometheus"
)

// The stateful server: with WithState, the core answers from the live
// state its agents and reports build (serve/state) instead of from the
// request alone.
//
//   - Node loads: a node whose agent streams telemetry reads its latest
//     sampled load instead of the request's numbers; a node whose agent
//     went silent for longer than the store's StaleAfter is stale and gets
//     no free GPUs, so no policy places on it. Nodes without an agent keep
//     the request's values.
//   - STRN profiles each job as in simulation, by probes (policies/strn's
//     Sensitivity and ChooseSync), against a prober (liveProber) that is
//     the per-worker model of the job's model profile where nothing was
//     measured, and the job's measured iterations where they exist: its
//     straggling (the measured per-worker iteration times, as the jitter
//     of every jittered probe, so that BSP pays for the slowest worker
//     and ASP, SSP and local SGD are scored on the measured spread) and
//     its CPU and memory sensitivities (fitted by serve/state against its
//     nodes' measured load). A job without measurements of its own takes
//     the measured profile of the last finished job of its model, else
//     the model profile. So the served STRN picks sync strategies other
//     than BSP, as the simulated one does.
//   - Reports feed the store: Started gives each worker's node, Iterations
//     the per-worker iteration times, Finished makes the job's profile its
//     model's.

// WithState makes the core stateful over st (see live.go's comment):
// telemetry overlays the requests' node loads, stale nodes are avoided,
// reports feed st, and STRN (the default heuristic) profiles jobs from
// their measured iterations. profiles are the model profiles STRN falls
// back to (nil: the embedded ones).
func WithState(st *state.Store, profiles map[string]env.Profile) Option {
	return func(k *Core) error {
		if st == nil {
			return errors.New("serve: nil state")
		}
		if profiles == nil {
			p, _, err := trace.Profiles("", "")
			if err != nil {
				return fmt.Errorf("serve: state: %w", err)
			}
			profiles = p
		}
		k.live = &liveState{st: st, profiles: profiles}
		return nil
	}
}

// State returns the core's live state (nil when stateless).
func (k *Core) State() *state.Store {
	if k.live == nil {
		return nil
	}
	return k.live.st
}

// liveState is the core's stateful part.
type liveState struct {
	st       *state.Store
	profiles map[string]env.Profile
	// slowSTRN makes STRN run as a policy on a view (the reference
	// runLiveSTRN is checked against; tests only).
	slowSTRN bool
	// slowSAS hands SAS every running job in the view's Active (the
	// reference the aggregate, runningAgg, is checked against; tests
	// only).
	slowSAS bool

	mu      sync.Mutex
	workers map[int]*env.Workers // per-worker model settings by cluster size

	// sens caches STRN's probed sensitivities of jobs without measured
	// profiles: they depend only on the job's spec and the prober, which
	// is the model profile on a cluster of a size (sensKey).
	sens memoCache[sensKey, strn.Sensitivity]

	// syncs caches STRN's sync choice for jobs without measured profiles:
	// it depends only on the job's spec, the placement's shape and the
	// chosen nodes' peak load (exact values: under load many requests
	// fall between two samples of the same nodes).
	syncs memoCache[syncKey, env.Sync]

	// A SAS heuristic is kept across requests, so that its predictor and
	// groups have history; sasMu serialises its decisions.
	sasMu   sync.Mutex
	sas     *sas.SAS
	sasKey  string      // the node ids it was sized for, joined
	sasLast time.Time   // the last sample fed to it
	agg     *runningAgg // the running jobs in aggregate, under sasMu
}

// overlay puts the live state on s at now and remembers the job's model.
func (l *liveState) overlay(s *snapshot, now time.Time) {
	s.stale, _ = l.st.Overlay(s.ids, s.state.Load, s.state.Free, now)
	l.st.JobModel(s.jobID, s.job.Model, now)
}

// model returns a per-worker model for a cluster of n nodes, with the job
// admitted, or nil when the job's model has no profile.
func (l *liveState) model(n, gpn int, j *env.Job) (*env.Drover, error) {
	if _, ok := l.profiles[j.Spec.Model]; !ok {
		return nil, nil
	}
	l.mu.Lock()
	wk := l.workers[n]
	if wk == nil {
		var err error
		if wk, err = (trace.Stragglers{}).Workers(n); err != nil {
			l.mu.Unlock()
			return nil, err
		}
		if l.workers == nil {
			l.workers = map[int]*env.Workers{}
		}
		l.workers[n] = wk
	}
	l.mu.Unlock()
	m := &env.Drover{Profiles: l.profiles, GPUsPerNode: gpn, Workers: wk}
	if err := m.Admit(j, &env.Meta{}); err != nil {
		return nil, nil // no usable profile at this size: STRN's fallback
	}
	return m, nil
}

// prober returns the prober of the snapshot's job, admitted as job: the
// per-worker model with the job's measured profile, if any; nil when the
// job's model has no profile (STRN then takes its fallback sensitivity
// and BSP).
func (k *Core) prober(s *snapshot, job *env.Job) (*liveProber, error) {
	prof, has := k.live.st.Profile(s.jobID, s.job.Model)
	return k.proberWith(s, job, prof, has)
}

// proberWith is prober with the job's measured profile given (has: there
// is one).
func (k *Core) proberWith(s *snapshot, job *env.Job, prof state.Profile, has bool) (*liveProber, error) {
	m, err := k.live.model(len(s.ids), s.cluster.MaxNodeGPUs(), job)
	if err != nil || m == nil {
		return nil, err
	}
	return &liveProber{m: m, prof: prof, has: has}, nil
}

// sensKey is what a probed sensitivity depends on without a measured
// profile: the job's spec as the per-worker model reads it, and the
// cluster's size and largest node (the packed placement probed).
type sensKey struct {
	model           string
	gpus, batch, ps int
	arch            env.Arch
	nodes, gpn      int
}

// maxMemo bounds each of the live state's caches; a full cache is
// cleared.
const maxMemo = 4096

// memoCache memoises a function by key, for concurrent requests: a map
// cleared when it holds maxMemo entries. Two requests missing the same key
// at once both compute it; the answers are equal.
type memoCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// get returns the value of k, computing it with f when it is not cached.
func (c *memoCache[K, V]) get(k K, f func() V) V {
	if v, ok := c.lookup(k); ok {
		return v
	}
	v := f()
	c.put(k, v)
	return v
}

// lookup returns the value of k, if cached.
func (c *memoCache[K, V]) lookup(k K) (V, bool) {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	return v, ok
}

// put caches v as k's value.
func (c *memoCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxMemo {
		c.m = map[K]V{}
	}
	c.m[k] = v
	c.mu.Unlock()
}

// memo returns STRN's Memo for a job without a measured profile on s's
// cluster.
func (l *liveState) memo(s *snapshot) func(*env.Job, func() strn.Sensitivity) strn.Sensitivity {
	return func(j *env.Job, probe func() strn.Sensitivity) strn.Sensitivity {
		return l.sens.get(l.sensKeyOf(s, j), probe)
	}
}

// syncKey is what STRN's sync choice depends on without a measured
// profile.
type syncKey struct {
	sensKey
	shape string // GPUs per chosen node, in STRN's order, as bytes
	peak  env.Usage
}

// runLiveSTRN is runLive for STRN, computed as STRN computes it with a
// prober: the job's sensitivity probed (STRN.Sensitivity, through the
// cache), the placement by the fast path's arithmetic with that
// sensitivity (fastSTRNWith; TestLiveFastMatchesSTRN checks it against
// STRN itself), and the sync strategy by strn.ChooseSync on the chosen
// nodes' peak load (cached for jobs without measured profiles). A job
// without a measured profile whose sensitivity and sync choice are cached
// costs no prober, no STRN and no allocation here: both depend only on
// what their keys hold.
func (k *Core) runLiveSTRN(s *snapshot) ([]int, env.Sync, error) {
	l := k.live
	job := &s.liveJob
	*job = env.Job{ID: 0, Spec: s.job, State: env.Pending, FirstStart: math.NaN(), Finish: math.NaN()}
	params := defaultSTRN
	// usable: the job's model has a profile the per-worker model admits
	// the job with (else STRN's fallback sensitivity and BSP); pr is the
	// prober, built only when a probe is needed.
	var pr *liveProber
	usable, has := false, false
	var key sensKey
	if _, ok := l.profiles[s.job.Model]; ok {
		var prof state.Profile
		prof, has = l.st.Profile(s.jobID, s.job.Model)
		if !has {
			key = l.sensKeyOf(s, job)
			params.sens, usable = l.sens.lookup(key)
		}
		if !usable {
			// The probe (a reference run of the job) is the longest of a
			// large job's work and does not look at the request's Done: a
			// request nobody waits for any more stops before it.
			if s.cancelled() {
				return nil, env.Sync{}, nil
			}
			var err error
			if pr, err = k.proberWith(s, job, prof, has); err != nil {
				return nil, env.Sync{}, err
			}
			if pr != nil {
				usable = true
				st := &strn.STRN{}
				v := &env.View{Cluster: &s.cluster, Model: liveModel{telemetry: telemetry{s.state.Load}, liveProber: pr}}
				params.sens = st.Sensitivity(v, job)
				if !has {
					l.sens.put(key, params.sens)
				}
			}
		}
	}
	alloc, _ := fastSTRNWith(&params, s, &s.fast)
	if alloc == nil {
		return nil, env.Sync{}, nil
	}
	if err := s.checkAlloc(alloc); err != nil {
		return nil, env.Sync{}, err
	}
	if !usable || s.job.GPUs < 2 {
		return alloc, env.Sync{}, nil
	}
	f := &s.fast
	take := resize(s.liveTake, len(f.idx))
	s.liveTake = take
	var peak env.Usage
	shape := s.liveShape[:0]
	for i, bi := range f.idx {
		take[i] = f.bestT[bi]
		u := s.state.Load[f.best[bi]]
		peak = env.Usage{CPU: max(peak.CPU, u.CPU), MemBW: max(peak.MemBW, u.MemBW), Net: max(peak.Net, u.Net)}
		shape = binary.AppendUvarint(shape, uint64(take[i]))
	}
	s.liveShape = shape
	if !has {
		// The lookup's key borrows shape's bytes; the cached key owns its.
		sk := syncKey{sensKey: key, shape: unsafe.String(unsafe.SliceData(shape), len(shape)), peak: peak}
		if sy, ok := l.syncs.lookup(sk); ok {
			return alloc, sy, nil
		}
		sk.shape = string(shape)
		if pr == nil {
			var err error
			if pr, err = k.proberWith(s, job, state.Profile{}, false); err != nil {
				return nil, env.Sync{}, err
			}
			if pr == nil { // not admitted now, though it was when cached
				return alloc, env.Sync{}, nil
			}
		}
		sy, _ := strn.ChooseSync(pr, job, take, peak, strn.DefaultSyncs, strn.DefaultSyncMargin)
		l.syncs.put(sk, sy)
		return alloc, sy, nil
	}
	sy, _ := strn.ChooseSync(pr, job, take, peak, strn.DefaultSyncs, strn.DefaultSyncMargin)
	return alloc, sy, nil
}

// sensKeyOf is the sensitivity cache's key of j on s's cluster.
func (l *liveState) sensKeyOf(s *snapshot, j *env.Job) sensKey {
	gpn := 0
	for _, n := range s.cluster.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	return sensKey{model: j.Spec.Model, gpus: j.Spec.GPUs, batch: j.Spec.BatchSize, ps: j.Spec.PSShards, arch: j.Spec.Arch,
		nodes: len(s.cluster.Nodes), gpn: gpn}
}

// liveModel is the env.Model the served STRN sees with a live state: the
// overlaid loads as telemetry and, when the job's model has a profile,
// liveProber.
type liveModel struct {
	telemetry
	*liveProber
}

// liveProber answers STRN's probes for the job being placed.
type liveProber struct {
	m    *env.Drover
	prof state.Profile
	has  bool
}

var _ env.Prober = (*liveProber)(nil)

// Probe implements env.Prober: the per-worker model's probe, with the
// model's response to CPU and memory-bandwidth load replaced by the
// measured sensitivity where one was measured (1 + CPU x overload of the
// node's CPU with the job's busiest node's workers added, likewise for
// memory), and the model's jitter by the measured one: each jittered
// probe replays the measured per-worker times relative to their mean
// (workers cycled when the placement has more) under the job's sync
// strategy (env.Sync.IterTime).
func (p *liveProber) Probe(j *env.Job, placement []int, load env.Usage, jitter bool) float64 {
	if !p.has {
		return p.m.Probe(j, placement, load, jitter)
	}
	pr := &p.prof
	lm := load
	if pr.HasCPU {
		lm.CPU = 0
	}
	if pr.HasMemBW {
		lm.MemBW = 0
	}
	measuredJitter := jitter && pr.HasStraggling && len(pr.Rel) > 0
	t := p.m.Probe(j, placement, lm, jitter && !measuredJitter)
	own := 0
	w := 0
	for _, g := range placement {
		own = max(own, g)
		w += g
	}
	f := 1.0
	if pr.HasCPU {
		f += pr.CPU * state.OverloadOf(load.CPU+strn.DefaultWorkerCPU*float64(own))
	}
	if pr.HasMemBW {
		f += pr.MemBW * state.OverloadOf(load.MemBW+strn.DefaultWorkerMemBW*float64(own))
	}
	t *= f
	if !measuredJitter || w == 0 || !(t > 0) || math.IsInf(t, 0) {
		return t
	}
	c := make([][]float64, len(pr.Rel))
	for k, row := range pr.Rel {
		c[k] = make([]float64, w)
		for i := range c[k] {
			c[k][i] = t * row[i%len(row)]
		}
	}
	return j.Sync.IterTime(c, make([]float64, w))
}

// runLive asks the heuristic on the live state: a fresh policy (the kept
// one for SAS) on a view whose model is liveModel.
func (k *Core) runLive(s *snapshot) ([]int, env.Sync, error) {
	if k.heurName == strn.Name && !k.live.slowSTRN {
		return k.runLiveSTRN(s)
	}
	p, err := k.heuristic(policies.Config{Seed: 1})
	if err != nil {
		return nil, env.Sync{}, err
	}
	if _, ok := p.(*sas.SAS); ok {
		k.live.sasMu.Lock()
		defer k.live.sasMu.Unlock()
		p = k.live.keptSAS(s, p.(*sas.SAS), k.clock.Now())
	}
	job := &env.Job{ID: 0, Spec: s.job, State: env.Pending, FirstStart: math.NaN(), Finish: math.NaN()}
	pr, err := k.prober(s, job)
	if err != nil {
		return nil, env.Sync{}, err
	}
	var model env.Model = telemetry{s.state.Load}
	if pr != nil {
		model = liveModel{telemetry: telemetry{s.state.Load}, liveProber: pr}
		if sp, ok := p.(*strn.STRN); ok && !pr.has {
			sp.Memo = k.live.memo(s)
		}
	}
	v := &env.View{Now: unixSeconds(k.clock.Now()), Cluster: &s.cluster, Free: append([]int(nil), s.state.Free...), Active: []*env.Job{job}, Model: model,
		Done: s.done}
	if _, ok := p.(*sas.SAS); ok {
		if k.live.slowSAS {
			v.Active = append(v.Active, k.live.running(s)...)
		} else {
			// The running jobs in aggregate (sas.Occupancy), derived once
			// per change of the store's running jobs.
			occ := occupancy{k.live.runningAgg(s)}
			if pr != nil {
				v.Model = struct {
					liveModel
					occupancy
				}{model.(liveModel), occ}
			} else {
				v.Model = struct {
					telemetry
					occupancy
				}{model.(telemetry), occ}
			}
		}
	}
	alloc, sy, err := scheduleView(p, v)
	if err != nil || alloc == nil {
		return nil, env.Sync{}, err
	}
	if err := s.checkAlloc(alloc); err != nil {
		return nil, env.Sync{}, err
	}
	return alloc, sy, nil
}

// runningAgg is the store's running jobs on a snapshot's nodes, in
// aggregate: what SAS counts from them (sas.Occupancy), derived from the
// store at one RunningVersion for one list of nodes.
type runningAgg struct {
	ver uint64
	key string // the snapshot's node ids, joined (as sasKey)
	// workers and flows are, per node of the snapshot (its index), the
	// running jobs' workers there (state.Store.Running's count of the
	// node) and the jobs with workers on more than one of the snapshot's
	// nodes.
	workers, flows []int
}

// occupancy gives a view's Model sas.Occupancy.
type occupancy struct{ a *runningAgg }

var _ sas.Occupancy = occupancy{}

// Occupancy implements sas.Occupancy.
func (o occupancy) Occupancy() (workers, multiNodeJobs []int) { return o.a.workers, o.a.flows }

// runningAgg returns the running jobs on s's nodes in aggregate, brought
// up to date with the store's changes since the last call
// (state.Store.RunningSince: a change costs the job's workers) and
// rebuilt from every running job only when the nodes changed or the
// store no longer holds every change since (about a thousand). A Place
// then costs nothing per running job, and a Report that starts or
// finishes a job costs the next Place that job's workers. It gives what
// running(s) lists, counted as SAS counts it
// (TestLiveSASAggregateMatches). The caller holds sasMu.
func (l *liveState) runningAgg(s *snapshot) *runningAgg {
	key := strings.Join(s.ids, "\x00")
	a := l.agg
	if a != nil && a.key == key {
		if a.ver == l.st.RunningVersion() {
			return a
		}
		stamp := make([]int, len(s.ids))
		k := 0
		if ver, ok := l.st.RunningSince(a.ver, func(nodes []string, d int) {
			k++
			a.count(s, nodes, d, stamp, k)
		}); ok {
			a.ver = ver
			return a
		}
	}
	a = &runningAgg{key: key, workers: make([]int, len(s.ids)), flows: make([]int, len(s.ids))}
	stamp := make([]int, len(s.ids))
	k := 0
	a.ver = l.st.RangeRunning(func(nodes []string) {
		k++
		a.count(s, nodes, 1, stamp, k)
	})
	l.agg = a
	return a
}

// count adds d times a running job on nodes to a: d workers on each of
// its workers' nodes among s's, and d flows on each of them when they are
// more than one. stamp is scratch of s's size whose entries are all
// unequal to k and -k (a count of the calls, from 1).
func (a *runningAgg) count(s *snapshot, nodes []string, d int, stamp []int, k int) {
	distinct := 0
	for _, n := range nodes {
		if i, ok := s.index[n]; ok {
			a.workers[i] += d
			if stamp[i] != k {
				stamp[i] = k
				distinct++
			}
		}
	}
	if distinct < 2 {
		return
	}
	for _, n := range nodes {
		if i, ok := s.index[n]; ok && stamp[i] == k {
			stamp[i] = -k // counted
			a.flows[i] += d
		}
	}
}

// running returns the jobs the store knows are running on s's nodes, as
// running env.Jobs (IDs from 1, in job id order) whose Alloc holds the
// node index of each worker on one of s's nodes: SAS counts its own jobs'
// load on a node from them.
func (l *liveState) running(s *snapshot) []*env.Job {
	rj := l.st.RunningJobs()
	ids := make([]string, 0, len(rj))
	for id := range rj {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []*env.Job
	for _, id := range ids {
		var alloc []int
		for _, n := range rj[id].Nodes {
			if i, ok := s.index[n]; ok {
				alloc = append(alloc, i)
			}
		}
		if len(alloc) > 0 {
			out = append(out, &env.Job{ID: len(out) + 1, Spec: env.JobSpec{Name: id, GPUs: len(alloc)}, State: env.Running, Alloc: alloc,
				FirstStart: math.NaN(), Finish: math.NaN()})
		}
	}
	return out
}

// unixSeconds is t in seconds since the Unix epoch: the live views' clock.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// keptSAS returns the SAS kept for s's cluster (fresh, a new one of the
// same settings, when the cluster's nodes changed), with the samples it
// would have taken since the last request fed from the store's history:
// at each SamplePeriod boundary up to now, each node's mean measured load
// over the period, less WorkerLoad for every worker the store knows runs
// there (SAS records background, not its own jobs' load). A node without
// samples in a period reads its load in the request; a period in which no
// node reported is skipped. The store keeps an hour of samples by default,
// so after a restart SAS has up to an hour of history back, twelve of its
// 300 s samples.
func (l *liveState) keptSAS(s *snapshot, fresh *sas.SAS, now time.Time) *sas.SAS {
	key := strings.Join(s.ids, "\x00")
	if l.sas == nil || l.sasKey != key {
		l.sas, l.sasKey, l.sasLast = fresh, key, time.Time{}
	}
	p := l.sas
	period := time.Duration(p.SamplePeriod * float64(time.Second))
	if period <= 0 {
		return p
	}
	v := &env.View{Cluster: &s.cluster}
	from := now.Add(-time.Duration(p.History) * period)
	if l.sasLast.After(from) {
		from = l.sasLast
	}
	// The workers the store knows run on each node: the aggregate's, which
	// holds state.Store.Running's count of every node of s at s.index.
	var running func(id string) int
	if l.slowSAS {
		byNode := l.st.Running()
		running = func(id string) int { return byNode[id] }
	} else {
		agg := l.runningAgg(s)
		running = func(id string) int { return agg.workers[s.index[id]] }
	}
	loads := make([]env.Usage, len(s.ids))
	for t := from.Truncate(period).Add(period); !t.After(now); t = t.Add(period) {
		seen := false
		for i, id := range s.ids {
			u, c := l.st.Mean(id, t.Add(-period), t)
			if c == 0 {
				u = s.state.Load[i]
			}
			seen = seen || c > 0
			w := float64(running(id))
			loads[i] = env.Usage{CPU: max(0, u.CPU-p.WorkerLoad.CPU*w), MemBW: max(0, u.MemBW-p.WorkerLoad.MemBW*w), Net: u.Net}
		}
		if seen {
			// A period no agent reported in is no evidence.
			p.Observe(v, unixSeconds(t), loads)
			l.sasLast = t
		}
	}
	return p
}

// report feeds an outcome to the live state.
func (l *liveState) report(r *OutcomeRecord, now time.Time) {
	switch r.Kind {
	case OutcomeStarted:
		l.st.JobStarted(r.JobID, "", r.Nodes, r.At, now)
	case OutcomeIterations:
		l.st.JobIterations(r.JobID, r.Worker, "", r.IterationSeconds, 0, now)
	case OutcomeFinished:
		l.st.JobFinished(r.JobID, now)
	}
}

// TelemetryLog is a state.Recorder that appends every applied sample to a
// telemetry log (datasets/telemlog), beside the decision log, so that
// `drover eval --log` can replay the nodes' load.
type TelemetryLog struct{ W *telemlog.Writer }

var _ state.Recorder = TelemetryLog{}

// Record implements state.Recorder.
func (l TelemetryLog) Record(node string, s state.Sample, raw *pb.NodeSample) error {
	g := math.NaN()
	if gs := raw.GetGpus(); len(gs) > 0 {
		g = 0
		for _, x := range gs {
			g += x.GetUtil()
		}
		g /= float64(len(gs))
	}
	return l.W.Write(telemlog.Sample{Node: node, Time: s.Time, CPU: s.Usage.CPU, MemBW: s.Usage.MemBW, Net: s.Usage.Net,
		CPUUtil: raw.GetCpuUtil(), MemUsed: raw.GetMemUsed(), CPUPressure: raw.GetCpuPressure(), MemPressure: raw.GetMemPressure(),
		NetRxBps: raw.GetNetRxBps(), NetTxBps: raw.GetNetTxBps(), GPUUtil: g})
}

// register adds the live state's gauges to m: drover_live_nodes{state},
// drover_live_lost_messages, drover_live_jobs{kind}, and its counters
// drover_live_evictions_total{reason}, drover_live_seq_gaps_total and
// drover_live_missing_messages_total, computed at each scrape.
func (l *liveState) register(m *Metrics, clock Clock) {
	var mu sync.Mutex
	var at time.Time
	var sum state.Summary
	// One summary per scrape serves every gauge.
	get := func() state.Summary {
		mu.Lock()
		defer mu.Unlock()
		if now := clock.Now(); now.Sub(at) > time.Second {
			sum, at = l.st.Summarize(now), now
		}
		return sum
	}
	gauge := func(name, help string, labels prometheus.Labels, f func(state.Summary) int64) {
		m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f(get())) }))
	}
	const nodesHelp = "Nodes whose agent said hello, by state (stale: silent for longer than the stale timeout)."
	gauge("drover_live_nodes", nodesHelp, prometheus.Labels{"state": "fresh"}, func(s state.Summary) int64 { return s.Nodes - s.Stale })
	gauge("drover_live_nodes", nodesHelp, prometheus.Labels{"state": "stale"}, func(s state.Summary) int64 { return s.Stale })
	gauge("drover_live_lost_messages", "Telemetry messages agents reported dropped (their buffer overflowed while disconnected).", nil,
		func(s state.Summary) int64 { return s.Lost })
	const jobsHelp = "Jobs the live state tracks (all), and those with enough measured iterations for a profile (profiled)."
	gauge("drover_live_jobs", jobsHelp, prometheus.Labels{"kind": "all"}, func(s state.Summary) int64 { return s.Jobs })
	gauge("drover_live_jobs", jobsHelp, prometheus.Labels{"kind": "profiled"}, func(s state.Summary) int64 { return s.ProfiledJobs })
	counter := func(name, help string, labels prometheus.Labels, f func(state.Summary) int64) {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f(get())) }))
	}
	const evHelp = "Jobs the live state forgot (max_jobs, node_quota, iteration_times), iteration reports it dropped (job_workers), stale nodes it forgot for new ones (stale_node) and new nodes it refused, none being stale (max_nodes), and jobs only agents knew of, silent past their TTL (agent_job_ttl), and finished jobs past theirs (finished_job_ttl), to stay within its limits (state.Config)."
	for _, e := range []struct {
		reason string
		f      func(state.Evictions) int64
	}{
		{"max_jobs", func(e state.Evictions) int64 { return e.MaxJobs }},
		{"node_quota", func(e state.Evictions) int64 { return e.NodeQuota }},
		{"iteration_times", func(e state.Evictions) int64 { return e.IterationTimes }},
		{"job_workers", func(e state.Evictions) int64 { return e.Workers }},
		{"stale_node", func(e state.Evictions) int64 { return e.StaleNodes }},
		{"max_nodes", func(e state.Evictions) int64 { return e.Nodes }},
		{"agent_job_ttl", func(e state.Evictions) int64 { return e.Expired }},
		{"finished_job_ttl", func(e state.Evictions) int64 { return e.FinishedExpired }},
	} {
		counter("drover_live_evictions_total", evHelp, prometheus.Labels{"reason": e.reason}, func(s state.Summary) int64 { return e.f(s.Evicted) })
	}
	counter("drover_live_seq_gaps_total", "Jumps in agents' sequence numbers that no Gap message accounted for.", nil,
		func(s state.Summary) int64 { return s.SeqGaps })
	counter("drover_live_missing_messages_total", "Telemetry messages skipped by those jumps: lost without the agent knowing, or acknowledged by a server whose state was lost.", nil,
		func(s state.Summary) int64 { return s.Missing })
}

// StatusFor answers a Status request: Status, and with the live state's
// nodes (LiveState.node_list, by id) when req asks for them
// (StatusRequest.nodes) and the core is stateful.
func (k *Core) StatusFor(req *pb.StatusRequest) *pb.StatusResponse {
	st := k.Status()
	if !req.GetNodes() || k.live == nil {
		return st
	}
	now := k.clock.Now()
	busy := k.live.st.Running()
	for _, n := range k.live.st.Nodes(now) {
		in, u := n.Info, n.Last.Usage
		st.Live.NodeList = append(st.Live.NodeList, &pb.LiveNode{Id: in.ID, Gpus: int32(in.GPUs), GpuType: in.GPUType, Cpus: int32(in.CPUs),
			MemoryGib: in.MemoryGiB, NicGbps: in.NICGbps, Rack: int32(in.Rack), BusyGpus: int32(busy[in.ID]), Stale: n.Stale,
			CpuUtil: u.CPU, MemBwUtil: u.MemBW, NetUtil: u.Net})
	}
	return st
}
