package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/strn"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"
)

// Fallback reasons: why the heuristic answered instead of the learned
// policy. They label the drover_decisions_total metric and fill
// DecisionRecord.Fallback; answers say "fallback: <reason>".
const (
	// FallbackNoModel: no learned policy is loaded.
	FallbackNoModel = "no-model"
	// FallbackNotConverged: the loaded checkpoint's gate verdict is "not
	// converged".
	FallbackNotConverged = "not-converged"
	// FallbackDeadline: the learned answer would miss the request's
	// deadline minus the margin (or the model timeout).
	FallbackDeadline = "deadline"
	// FallbackInfeasible: the learned action does not fit the cluster.
	FallbackInfeasible = "infeasible"
	// FallbackError: the learned policy failed.
	FallbackError = "error"
	// FallbackMismatch: the cluster's shape (its number of racks) differs
	// from the one the policy was trained on.
	FallbackMismatch = "shape-mismatch"
	// FallbackOverload: the server is overloaded; the cheap heuristic
	// answered without asking the model.
	FallbackOverload = "overload"
	// FallbackNoRoom: the job does not fit in the free GPUs; no policy was
	// asked and the answer is "not placed".
	FallbackNoRoom = "no-room"
	// FallbackShadow: the view-level learned policy decided in shadow; the
	// gate has not switched the answer to it (see SwitchConfig).
	FallbackShadow = "shadow"
)

var fallbackReasons = []string{FallbackNoModel, FallbackNotConverged, FallbackDeadline, FallbackInfeasible, FallbackError,
	FallbackMismatch, FallbackOverload, FallbackNoRoom, FallbackShadow}

// Errors returned by Core.
var (
	// ErrOverloaded is returned by Place when more than the MaxInFlight
	// requests are in progress; the gRPC service answers ResourceExhausted.
	ErrOverloaded = errors.New("serve: overloaded")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("serve: closed")
)

// Core decides placements. It knows nothing of gRPC: the service in
// server.go, the tests and other front ends (an HTTP extender) call it.
// It is safe for concurrent use.
type Core struct {
	clock        Clock
	heurName     string
	heuristic    policies.Factory
	cheap        policies.Factory
	margin       time.Duration
	modelTimeout time.Duration
	limits       Limits
	sink         Sink
	metrics      *Metrics
	canary       float64
	promoteAfter int64
	maxInFlight  int64
	shedAbove    int64

	loader PolicyLoader
	sw     *switcher
	live   *liveState  // nil: stateless (WithState)
	router *routeState // nil: no Route calls (WithRouter)
	mm     *mmState    // nil: no RouteMM or Scale calls (WithMM)

	active    atomic.Pointer[Version]
	candidate atomic.Pointer[Version]
	refusedMu sync.Mutex
	refused   string

	inflight atomic.Int64
	heavy    *semaphore.Weighted // the work of the heavy requests running (nil: unbounded)
	heavyCap int64
	modelSem chan struct{}
	wg       sync.WaitGroup // model calls still running
	life     sync.RWMutex   // held for reading by every request, for writing by Close
	closed   bool

	idPrefix  string
	seq       atomic.Uint64
	learnedN  atomic.Int64
	heurN     atomic.Int64
	shed      atomic.Int64
	fallbacks map[string]*atomic.Int64
	outcomes  map[string]*atomic.Int64

	// Precomputed for the hot path (set by NewCore).
	heurPolicy   string                                          // "heuristic:" + heurName
	fast         func(*snapshot, *fastScratch) ([]int, env.Sync) // the heuristic's fast path, nil: none
	reasons      map[string]string                               // fallback reason -> "fallback: " + reason
	canaryReason string
	decisionCtr  sync.Map // decisionKey -> prometheus.Counter of drover_decisions_total
}

// decisionKey identifies a drover_decisions_total counter.
type decisionKey struct {
	learned  bool
	version  string // the name, not the *Version: old versions are not kept alive
	fallback string
}

// cheapPolicy names the cheap heuristic in answers.
const cheapPolicy = "heuristic:" + firstfit.Name

// Option configures a Core.
type Option func(*Core) error

// WithClock sets the clock (default RealClock).
func WithClock(c Clock) Option {
	return func(k *Core) error {
		if c == nil {
			return errors.New("serve: nil clock")
		}
		k.clock = c
		return nil
	}
}

// WithHeuristic sets the fallback heuristic by its policies/builtin name
// (default "strn").
func WithHeuristic(name string) Option {
	return func(k *Core) error {
		f, ok := builtin.Registry()[name]
		if !ok {
			return fmt.Errorf("serve: heuristic %q: %w (have %v)", name, policies.ErrUnknownPolicy, builtin.Registry().Names())
		}
		k.heurName, k.heuristic = name, f
		return nil
	}
}

// WithDeadlineMargin sets how long before the request's deadline the
// learned policy must have answered (default 2 ms): the rest is left for
// the heuristic and the reply.
func WithDeadlineMargin(d time.Duration) Option {
	return func(k *Core) error {
		if d < 0 {
			return fmt.Errorf("serve: deadline margin %v, want >= 0", d)
		}
		k.margin = d
		return nil
	}
}

// WithModelTimeout bounds the learned policy's time when the request has
// no deadline, or a later one (default 50 ms).
func WithModelTimeout(d time.Duration) Option {
	return func(k *Core) error {
		if d <= 0 {
			return fmt.Errorf("serve: model timeout %v, want > 0", d)
		}
		k.modelTimeout = d
		return nil
	}
}

// WithLimits sets the request size limits (default DefaultLimits).
func WithLimits(l Limits) Option {
	return func(k *Core) error {
		if l.MaxNodes <= 0 || l.MaxGPUsPerNode <= 0 || l.MaxWorkers <= 0 || l.MaxPSShards < 0 || l.MaxIDLen <= 0 || l.MaxOutcomes <= 0 || l.MaxSamples <= 0 || !(l.MaxUtil > 0) || l.MaxWork < 0 {
			return fmt.Errorf("serve: limits %+v: every limit must be positive", l)
		}
		l.MaxWork = cmp.Or(l.MaxWork, DefaultMaxWork)
		k.limits = l
		return nil
	}
}

// WithSink sets where decision and outcome records go (default: nowhere).
func WithSink(s Sink) Option {
	return func(k *Core) error { k.sink = s; return nil }
}

// WithMetrics sets the Prometheus metrics the core updates.
func WithMetrics(m *Metrics) Option {
	return func(k *Core) error { k.metrics = m; return nil }
}

// WithCanary routes the share fraction (in [0, 1)) of requests, chosen
// deterministically by a hash of the job id, to a candidate version: with
// a positive fraction, a new converged checkpoint becomes the candidate
// instead of replacing the active version, and is promoted after
// promoteAfter learned answers (0: never by itself).
func WithCanary(fraction float64, promoteAfter int) Option {
	return func(k *Core) error {
		if !(fraction >= 0 && fraction < 1) || promoteAfter < 0 {
			return fmt.Errorf("serve: canary fraction %v (want [0, 1)), promote after %d (want >= 0)", fraction, promoteAfter)
		}
		k.canary, k.promoteAfter = fraction, int64(promoteAfter)
		return nil
	}
}

// WithLoadShedding sets the overload limits: above shedAbove concurrent
// Place requests the cheap heuristic (first-fit) answers without the model
// or the full heuristic; above maxInFlight Place fails with ErrOverloaded
// (defaults 64 and 1024; 0 turns a limit off).
func WithLoadShedding(shedAbove, maxInFlight int) Option {
	return func(k *Core) error {
		if shedAbove < 0 || maxInFlight < 0 {
			return fmt.Errorf("serve: load shedding limits %d, %d: want >= 0", shedAbove, maxInFlight)
		}
		k.shedAbove, k.maxInFlight = int64(shedAbove), int64(maxInFlight)
		return nil
	}
}

// SmallWork is the work (nodes x workers) up to which a Place request
// is small: it never waits for WithHeavyWork's budget. A request of
// 65,536 (256 nodes x 256 workers) takes about a quarter of a
// millisecond.
const SmallWork = 1 << 16

// WithHeavyWork bounds the work (nodes x workers, as Limits.MaxWork
// counts it) of the requests above SmallWork that compute at once: a
// heavy request waits, within its deadline, until the heavy ones running
// leave room for its work (all of the budget when its work is larger),
// so that eight large requests keep only part of the cores busy and
// small ones are answered beside them. The default is the work bound
// times half the cores (at least one); 0: no bound.
func WithHeavyWork(budget int) Option {
	return func(k *Core) error {
		if budget < 0 {
			return fmt.Errorf("serve: heavy work budget %d, want >= 0", budget)
		}
		k.heavyCap = int64(budget)
		return nil
	}
}

// NewCore returns a core answering with the heuristic until a learned
// version is set (Swap, or a Watcher).
func NewCore(opts ...Option) (*Core, error) {
	k := &Core{
		clock:        RealClock{},
		heurName:     strn.Name,
		heuristic:    strn.New,
		cheap:        firstfit.New,
		margin:       2 * time.Millisecond,
		modelTimeout: 50 * time.Millisecond,
		limits:       DefaultLimits,
		shedAbove:    64,
		maxInFlight:  1024,
		modelSem:     make(chan struct{}, 4*runtime.GOMAXPROCS(0)),
		heavyCap:     -1,
		fallbacks:    map[string]*atomic.Int64{},
		outcomes:     map[string]*atomic.Int64{},
		sw:           newSwitcher(),
	}
	for _, o := range opts {
		if err := o(k); err != nil {
			return nil, err
		}
	}
	for _, r := range fallbackReasons {
		k.fallbacks[r] = new(atomic.Int64)
	}
	for _, r := range []string{OutcomeStarted, OutcomeIterations, OutcomeFinished} {
		k.outcomes[r] = new(atomic.Int64)
	}
	if k.heavyCap < 0 {
		k.heavyCap = int64(k.limits.MaxWork) * int64(max(1, runtime.GOMAXPROCS(0)/2))
	}
	if k.heavyCap > 0 {
		k.heavy = semaphore.NewWeighted(k.heavyCap)
	}
	k.idPrefix = strconv.FormatInt(k.clock.Now().UnixNano(), 36)
	k.heurPolicy = "heuristic:" + k.heurName
	switch k.heurName {
	case strn.Name:
		k.fast = fastSTRN
	case firstfit.Name:
		k.fast = fastFirstFit
	}
	k.reasons = make(map[string]string, len(fallbackReasons))
	for _, r := range fallbackReasons {
		k.reasons[r] = "fallback: " + r
	}
	k.canaryReason = fmt.Sprintf("canary (%g of requests)", k.canary)
	if k.live != nil && k.metrics != nil {
		k.live.register(k.metrics, k.clock)
	}
	return k, nil
}

// Heuristic returns the fallback heuristic's name.
func (k *Core) Heuristic() string { return k.heurName }

// Active returns the active learned version (nil if none).
func (k *Core) Active() *Version { return k.active.Load() }

// Candidate returns the canary version (nil if none).
func (k *Core) Candidate() *Version { return k.candidate.Load() }

// Canary returns the canary fraction.
func (k *Core) Canary() float64 { return k.canary }

// Swap makes v the active learned version at once (atomically: a request
// sees the old or the new one, whole) and clears a candidate that is not
// newer than v.
func (k *Core) Swap(v *Version) {
	k.active.Store(v)
	k.newActive(v)
	if c := k.candidate.Load(); c != nil && v != nil && c.Seq <= v.Seq {
		k.candidate.CompareAndSwap(c, nil)
	}
	if k.metrics != nil && v != nil {
		k.metrics.version.Set(float64(v.Seq))
	}
}

// SetCandidate makes v the canary version (nil: none).
func (k *Core) SetCandidate(v *Version) { k.candidate.Store(v) }

// refuse records that a checkpoint version was refused.
func (k *Core) refuse(what string) {
	k.refusedMu.Lock()
	k.refused = what
	k.refusedMu.Unlock()
}

// canaryHit reports whether job id falls in the canary share.
func (k *Core) canaryHit(id string) bool {
	if k.canary <= 0 {
		return false
	}
	h := fnv.New64a()
	io.WriteString(h, id)
	// FNV's high bits barely change between similar ids ("job-1",
	// "job-2"): mix them with splitmix64's finalizer.
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < k.canary
}

// decision is what Place decided, before it becomes a response.
type decision struct {
	alloc    []int
	sync     env.Sync
	source   pb.Source
	policy   string
	version  *Version
	fallback string
	canary   bool
	obs      []float64
	action   int
	note     string
	reason   string // the answer's reason, when not the usual one

	// The shadow decision (shadow: the policy, "" when none).
	shadow        string
	shadowAlloc   []int
	shadowSync    env.Sync
	shadowFailure string
	// abandoned: a learned call still reads the snapshot, which must not
	// go back to the pool.
	abandoned bool
}

// Place decides where the request's job runs. It returns a *FieldError
// (wrapping ErrInvalid) for an invalid request, ErrOverloaded above the
// in-flight limit, ErrClosed after Close, and an error when no policy
// could answer. It keeps no reference to req, or to the messages req
// points to, once it returns (the server reuses them for the next call);
// it may keep req's strings.
func (k *Core) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	k.life.RLock()
	defer k.life.RUnlock()
	if k.closed {
		return nil, ErrClosed
	}
	n := k.inflight.Add(1)
	defer k.inflight.Add(-1)
	if k.maxInFlight > 0 && n > k.maxInFlight {
		k.shed.Add(1)
		return nil, ErrOverloaded
	}
	start := k.clock.Now()
	s := getSnapshot()
	s.done = ctx.Done()
	if err := validatePlace(req, k.limits, s.index, s.ids); err != nil {
		s.ids = s.ids[:0] // s.index holds nothing known
		putSnapshot(s)
		return nil, err
	}
	s.fill(req)
	if w := int64(work(len(s.ids), s.job.GPUs)); k.heavy != nil && w > SmallWork {
		w = min(w, k.heavyCap)
		if err := k.heavy.Acquire(ctx, w); err != nil {
			putSnapshot(s)
			return nil, err // the context's: it ended while waiting
		}
		defer k.heavy.Release(w)
	}
	if k.live != nil {
		k.live.overlay(s, start)
	}
	d, err := k.decide(ctx, s, k.shedAbove > 0 && n > k.shedAbove)
	if !d.abandoned {
		defer putSnapshot(s)
	}
	if err == nil && s.stopped {
		// A heuristic stopped early for the request's deadline or
		// cancellation: what it left is no answer.
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return k.respond(s, d, start), nil
}

func (k *Core) decide(ctx context.Context, s *snapshot, overloaded bool) (decision, error) {
	d := decision{action: -1, source: pb.Source_SOURCE_HEURISTIC, policy: k.heurPolicy}
	v := k.active.Load()
	if c := k.candidate.Load(); c != nil && k.canaryHit(s.jobID) {
		v, d.canary = c, true
	}
	d.version = v
	if v != nil && v.ViewLevel() {
		return k.decideView(ctx, s, v, &d, overloaded)
	}
	if free := s.freeGPUs(); s.job.GPUs > free {
		d.fallback = FallbackNoRoom
		d.note = fmt.Sprintf("no room: %d free GPUs for %d workers", free, s.job.GPUs)
		return d, nil
	}
	switch {
	case overloaded:
		d.fallback = FallbackOverload
	case v == nil:
		d.fallback = FallbackNoModel
	case !v.Meta.Converged:
		d.fallback = FallbackNotConverged
	default:
		d.fallback = k.tryLearned(ctx, s, v, &d)
		if d.fallback == "" {
			return d, nil
		}
	}
	var alloc []int
	var sy env.Sync
	var err error
	if overloaded {
		d.policy = cheapPolicy
		alloc, sy, err = k.runCheap(s)
	} else {
		alloc, sy, err = k.runHeuristic(s)
		if errors.Is(err, env.ErrCancelled) {
			s.stopped = true // Place answers the context's error
			return d, nil
		}
		if err != nil {
			// The full heuristic failed: the cheap one still answers.
			d.note = fmt.Sprintf("%s failed: %v", k.heurName, err)
			d.policy = cheapPolicy
			alloc, sy, err = k.runCheap(s)
		}
	}
	if err != nil {
		return d, fmt.Errorf("serve: heuristic: %w", err)
	}
	d.alloc, d.sync = alloc, sy
	return d, nil
}

// runHeuristic asks the heuristic: its fast path when it has one (the
// same answer, computed on the snapshot's scratch memory), else a fresh
// policy.
func (k *Core) runHeuristic(s *snapshot) ([]int, env.Sync, error) {
	if k.live != nil {
		return k.runLive(s)
	}
	if k.fast == nil {
		return runHeuristic(k.heuristic, s)
	}
	alloc, sy := k.fast(s, &s.fast)
	if alloc != nil {
		if err := s.checkAlloc(alloc); err != nil {
			return nil, env.Sync{}, err
		}
	}
	return alloc, sy, nil
}

// runCheap asks the cheap heuristic (first-fit).
func (k *Core) runCheap(s *snapshot) ([]int, env.Sync, error) {
	alloc, sy := fastFirstFit(s, &s.fast)
	if alloc != nil {
		if err := s.checkAlloc(alloc); err != nil {
			return nil, env.Sync{}, err
		}
	}
	return alloc, sy, nil
}

// tryLearned asks v and fills d; it returns the fallback reason, "" when
// the learned policy answered.
func (k *Core) tryLearned(ctx context.Context, s *snapshot, v *Version, d *decision) string {
	enc := placement.NewEncoder(&s.cluster, v.Sync())
	if enc.ObsDim() != v.Meta.ObsDim || enc.Actions() != v.Meta.Actions {
		return FallbackMismatch
	}
	budget := k.modelTimeout
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, dl.Sub(k.clock.Now())-k.margin)
	}
	if budget <= 0 {
		return FallbackDeadline
	}
	obs := enc.Observe(nil, &s.state, &s.job)
	mask := enc.Mask(nil, &s.state, s.job.GPUs)
	d.obs = obs
	select {
	case k.modelSem <- struct{}{}:
	default:
		return FallbackOverload // every model slot is taken by slow calls
	}
	type result struct {
		a   int
		err error
	}
	ch := make(chan result, 1)
	mctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer func() { <-k.modelSem }()
		defer func() {
			if r := recover(); r != nil {
				ch <- result{-1, fmt.Errorf("serve: learned policy panicked: %v", r)}
			}
		}()
		a, err := v.Policy.Act(mctx, obs, mask)
		ch <- result{a, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-mctx.Done():
		return FallbackDeadline
	}
	if r.err != nil {
		if errors.Is(r.err, context.DeadlineExceeded) {
			return FallbackDeadline
		}
		return FallbackError
	}
	d.action = r.a
	alloc, sy := enc.Decode(&s.state, s.job.GPUs, r.a)
	if alloc == nil || s.checkAlloc(alloc) != nil {
		return FallbackInfeasible
	}
	d.alloc, d.sync = alloc, sy
	d.source, d.policy = pb.Source_SOURCE_LEARNED, "learned@"+v.Name
	if n := v.decided.Add(1); d.canary && k.promoteAfter > 0 && n >= k.promoteAfter {
		if k.candidate.CompareAndSwap(v, nil) {
			k.Swap(v)
		}
	}
	return ""
}

// respond turns a decision into the answer, counts it and records it.
// Nothing in the answer or the record points into the snapshot, which is
// reused once Place returns.
func (k *Core) respond(s *snapshot, d decision, start time.Time) *pb.PlaceResponse {
	resp := &pb.PlaceResponse{
		DecisionId: k.nextID(),
		Placed:     d.alloc != nil,
		Policy:     d.policy,
		Source:     d.source,
	}
	if d.alloc != nil {
		resp.Sync = syncProto(d.sync)
	}
	if d.version != nil {
		resp.ModelVersion = d.version.Name
	}
	switch {
	case d.fallback == FallbackNoRoom:
		resp.Reason = d.note
	case d.fallback != "":
		resp.Reason = k.reasons[d.fallback]
		if d.note != "" {
			resp.Reason += "; " + d.note
		}
	case d.canary:
		resp.Reason = k.canaryReason
	case d.reason != "":
		resp.Reason = d.reason
	default:
		resp.Reason = "converged checkpoint"
	}
	if s.stale > 0 {
		resp.Reason += fmt.Sprintf("; %d stale nodes avoided", s.stale)
	}
	var ps []int
	if d.alloc != nil {
		if s.job.Arch == env.PS {
			ps = psNodes(d.alloc, s.job.PSShards)
		}
		// One array for every assignment: two allocations, not one each.
		as := make([]pb.Assignment, len(d.alloc)+len(ps))
		resp.Assignments = make([]*pb.Assignment, len(as))
		for i, n := range d.alloc {
			a := &as[i]
			a.Role, a.Index, a.NodeId = pb.Role_ROLE_WORKER, int32(i), s.ids[n]
			resp.Assignments[i] = a
		}
		for i, n := range ps {
			a := &as[len(d.alloc)+i]
			a.Role, a.Index, a.NodeId = pb.Role_ROLE_PS, int32(i), s.ids[n]
			resp.Assignments[len(d.alloc)+i] = a
		}
	}
	if d.source == pb.Source_SOURCE_LEARNED {
		k.learnedN.Add(1)
	} else {
		k.heurN.Add(1)
		k.fallbacks[d.fallback].Add(1)
	}
	if k.metrics != nil {
		k.decisionCounter(d).Inc()
	}
	if k.sink == nil {
		return resp
	}
	rec := &DecisionRecord{
		ID: resp.DecisionId, JobID: s.jobID, Model: s.job.Model, Workers: s.job.GPUs, PSShards: s.job.PSShards,
		Arch: s.job.Arch.String(), BatchSize: s.job.BatchSize, ExpectedSeconds: s.job.Duration,
		Nodes: len(s.ids), FreeGPUs: s.freeGPUs(), Placed: resp.Placed, Source: sourceName(d.source), Policy: d.policy,
		ModelVersion: resp.ModelVersion, Fallback: d.fallback, Canary: d.canary, Action: d.action,
		Shadow: d.shadow, ShadowFailure: d.shadowFailure,
	}
	if d.shadowAlloc != nil {
		rec.ShadowSync = d.shadowSync.String()
		rec.ShadowWorkerNodes = make([]string, len(d.shadowAlloc))
		for i, n := range d.shadowAlloc {
			rec.ShadowWorkerNodes[i] = s.ids[n]
		}
	}
	if d.alloc != nil {
		rec.Sync = d.sync.String()
		nodes := make([]string, len(d.alloc)+len(ps))
		for i, n := range d.alloc {
			nodes[i] = s.ids[n]
		}
		rec.WorkerNodes = nodes[:len(d.alloc):len(d.alloc)]
		if ps != nil {
			for i, n := range ps {
				nodes[len(d.alloc)+i] = s.ids[n]
			}
			rec.PSNodes = nodes[len(d.alloc):]
		}
	}
	if d.obs != nil {
		rec.Obs = make([]float32, len(d.obs))
		for i, x := range d.obs {
			rec.Obs[i] = float32(x)
		}
	}
	now := k.clock.Now()
	rec.At, rec.Latency = now, now.Sub(start)
	if s.at > 0 {
		rec.At = time.Unix(0, s.at)
	}
	if s.submitted > 0 {
		rec.Submitted = time.Unix(0, s.submitted)
	}
	k.record(rec)
	return resp
}

// decisionCounter returns the drover_decisions_total counter of d,
// looked up once per source, version and fallback reason.
func (k *Core) decisionCounter(d decision) prometheus.Counter {
	key := decisionKey{learned: d.source == pb.Source_SOURCE_LEARNED, fallback: d.fallback}
	if d.version != nil {
		key.version = d.version.Name
	}
	if c, ok := k.decisionCtr.Load(key); ok {
		return c.(prometheus.Counter)
	}
	c := k.metrics.decisions.WithLabelValues(sourceName(d.source), key.version, d.fallback)
	k.decisionCtr.Store(key, c)
	return c
}

// nextID returns a new decision id: the core's prefix, "-", a sequence
// number.
func (k *Core) nextID() string {
	var b [40]byte
	id := append(b[:0], k.idPrefix...)
	id = append(id, '-')
	id = strconv.AppendUint(id, k.seq.Add(1), 10)
	return string(id)
}

func (k *Core) record(r Record) error {
	if k.sink == nil {
		return nil
	}
	err := k.sink.Record(r)
	if err != nil && k.metrics != nil {
		k.metrics.sinkErr.Inc()
	}
	return err
}

func sourceName(s pb.Source) string {
	if s == pb.Source_SOURCE_LEARNED {
		return "learned"
	}
	return "heuristic"
}

func syncProto(s env.Sync) *pb.Sync {
	out := &pb.Sync{}
	switch s.Kind {
	case env.BSP:
		out.Kind = pb.SyncKind_SYNC_BSP
	case env.ASP:
		out.Kind = pb.SyncKind_SYNC_ASP
	case env.SSP:
		out.Kind, out.Staleness = pb.SyncKind_SYNC_SSP, int32(s.Staleness)
	case env.LocalSGD:
		out.Kind, out.Period = pb.SyncKind_SYNC_LOCAL_SGD, int32(s.Period)
	}
	return out
}

// Report validates and records job outcomes. It returns a *FieldError for
// an invalid request, ErrClosed after Close, and the sink's error (with
// the number recorded before it) when the sink fails.
func (k *Core) Report(ctx context.Context, req *pb.ReportRequest) (*pb.ReportResponse, error) {
	k.life.RLock()
	defer k.life.RUnlock()
	if k.closed {
		return nil, ErrClosed
	}
	if err := ValidateReport(req, k.limits); err != nil {
		return nil, err
	}
	now := k.clock.Now()
	resp := &pb.ReportResponse{}
	for _, o := range req.GetOutcomes() {
		r := &OutcomeRecord{At: now, Received: now, JobID: o.GetJobId(), DecisionID: o.GetDecisionId(), Worker: -1}
		if t := o.GetUnixNanos(); t > 0 {
			r.At = time.Unix(0, t)
		}
		switch e := o.GetEvent().(type) {
		case *pb.Outcome_Started:
			r.Kind, r.Nodes = OutcomeStarted, append([]string(nil), e.Started.GetNodeIds()...)
		case *pb.Outcome_Iterations:
			r.Kind, r.Worker = OutcomeIterations, int(e.Iterations.GetWorker())
			r.IterationSeconds = append([]float64(nil), e.Iterations.GetSeconds()...)
		case *pb.Outcome_Finished:
			r.Kind, r.Success, r.JCTSeconds = OutcomeFinished, e.Finished.GetSuccess(), e.Finished.GetJctS()
		}
		if err := k.record(r); err != nil {
			return resp, fmt.Errorf("serve: record outcome %d: %w", resp.Accepted, err)
		}
		k.sw.outcome(r)
		if k.live != nil {
			k.live.report(r, now)
		}
		k.outcomes[r.Kind].Add(1)
		if k.metrics != nil {
			k.metrics.outcomes.WithLabelValues(r.Kind).Inc()
		}
		resp.Accepted++
	}
	return resp, nil
}

// Status describes the core.
func (k *Core) Status() *pb.StatusResponse {
	st := &pb.StatusResponse{
		ActivePolicy:   "heuristic:" + k.heurName,
		Heuristic:      k.heurName,
		CanaryFraction: k.canary,
		Decisions:      map[string]int64{"heuristic": k.heurN.Load(), "learned": k.learnedN.Load()},
		Fallbacks:      map[string]int64{},
		Outcomes:       map[string]int64{},
		Shed:           k.shed.Load(),
	}
	if v := k.active.Load(); v != nil {
		st.ModelVersion, st.Converged, st.ModelEnv = v.Name, v.Meta.Converged, v.Meta.Env
		if v.Meta.Converged && !v.ViewLevel() {
			st.ActivePolicy = "learned@" + v.Name
		}
	}
	sw := k.Switch()
	st.SwitchMode, st.ShadowPolicy, st.SwitchReason = sw.Mode, sw.Shadow, sw.Reason
	if sw.Shadow != "" {
		st.ActivePolicy = sw.Answering
	}
	if !sw.Since.IsZero() {
		st.ActiveSinceUnixNanos = sw.Since.UnixNano()
	}
	st.GateVerdict, st.GateLowerBound, st.GateEvaluations = sw.LastGate, sw.Verdict.Lower, sw.Evaluations
	st.Shadow = map[string]int64{}
	for r, n := range k.sw.shadow {
		if x := n.Load(); x > 0 {
			st.Shadow[r] = x
		}
	}
	if c := k.candidate.Load(); c != nil {
		st.CandidateVersion = c.Name
	}
	for r, n := range k.fallbacks {
		if x := n.Load(); x > 0 {
			st.Fallbacks[r] = x
		}
	}
	for r, n := range k.outcomes {
		st.Outcomes[r] = n.Load()
	}
	k.refusedMu.Lock()
	st.LastRefused = k.refused
	k.refusedMu.Unlock()
	if k.live != nil {
		sum := k.live.st.Summarize(k.clock.Now())
		st.Live = &pb.LiveState{Nodes: sum.Nodes, StaleNodes: sum.Stale, StaleAfterS: k.live.st.Config().StaleAfter.Seconds(),
			LostMessages: sum.Lost, Jobs: sum.Jobs, ProfiledJobs: sum.ProfiledJobs, ProfiledModels: sum.ProfiledModels}
	}
	return st
}

// Close stops accepting requests, waits for the requests in progress and
// the learned-policy calls still running, then flushes and closes the sink (when it is a Flusher or an
// io.Closer). Call it after the front ends have stopped (the gRPC server's
// GracefulStop), so that no record is lost. It is idempotent.
func (k *Core) Close() error {
	k.life.Lock()
	was := k.closed
	k.closed = true
	k.life.Unlock()
	if was {
		return nil
	}
	k.wg.Wait()
	var errs []error
	if f, ok := k.sink.(Flusher); ok {
		errs = append(errs, f.Flush())
	}
	if c, ok := k.sink.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
