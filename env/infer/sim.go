package infer

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env/infer/kv"
)

// ErrStalled is returned by Run (and Next) when requests remain that can
// never finish (their KV cache never finds room): when the events run out,
// or when only KV transfers retrying for room are left and none of them
// fits (a circular wait: the decode instance's memory held by moved caches
// whose decodes cannot start). The error names a waiting request, the
// instance it waits on, the bytes it needs and those free.
var ErrStalled = errors.New("infer: stalled")

// Errors of the driver loop.
var (
	// ErrRan is returned by Run on a Sim that has already run (or
	// stepped).
	ErrRan = errors.New("infer: already ran")
	// ErrDone is returned by Next when the run is over.
	ErrDone = errors.New("infer: done")
	// ErrPending is returned by Next while the request it returned waits
	// for Apply.
	ErrPending = errors.New("infer: a request waits for Apply")
	// ErrNoPending is returned by Apply when no request waits.
	ErrNoPending = errors.New("infer: no request waits for Apply")
)

// taskState is a task's life (SplitwiseSim's NodeState, node.py).
type taskState uint8

const (
	taskNone taskState = iota
	taskQueued
	taskRunning
	taskBlocked
	taskDone
)

type evKind uint8

const (
	evArrival   evKind = iota // a request arrives (arg: request)
	evIteration               // an instance's contiguous iterations end (arg: instance)
	evFlowDone                // a KV transfer ends (arg: request)
	evFlowRetry               // a KV transfer looks again for room (arg: request)
	evLinkRetry               // the shared link's head looks again for room
	evShareJoin               // a transfer's bytes join the fair-share link (arg: request)
	evShareDone               // the fair-share link's next transfer ends
)

// retry reports whether an event only looks again for room for a KV
// transfer, changing nothing when there is none.
func (k evKind) retry() bool { return k == evFlowRetry || k == evLinkRetry }

type event struct {
	kind evKind
	dead bool
	arg  int32
}

// mixedBatchFactor is what a batch mixing prompts and decodes costs over
// the prompt curve at its tokens (performance_model.py,
// get_iteration_duration: iteration_time *= 1.1).
const mixedBatchFactor = 1.1

// instance is one serving instance: SplitwiseSim's SplitwiseInstance
// (instance.py), its queues kept as the same ordered lists.
type instance struct {
	idx          int
	cfg          InstanceConfig
	gpu          GPU
	curve        *perfCurve
	promptScale  float64
	tokenScale   float64
	extrapolated bool

	maxMem, memory, schedMem int64
	schedPending             int64

	pendingQueue  []int32 // tasks waiting, insorted by (preemptions, arrival)
	pendingPrompt []int32 // prompt tasks waiting, FIFO
	blocked       []int32 // preempted decode tasks, FIFO
	batch         []int32 // the running batch
	pendingReqs   []int32 // requests with a task here, by arrival
	waiting       []int32 // those of them whose first task does not run, in the same order

	promptsInBatch, tokensInBatch int
	promptTokensInBatch           int
	batchTokens                   int // as of the last batch selection

	// tick counts the iterations the instance completed; a task in the
	// batch has generated tick - base tokens, and finishes at the tick
	// base + goal (done, a heap of those ticks).
	tick int64
	done finishHeap

	iterDur   float64
	nContig   int64
	pauseNext bool
	iterEv    int32
	iterEvT   float64

	busy, runStamp float64
	iterations     int64
}

// Sim is one simulation of a deployment serving a request trace. It is not
// safe for concurrent use.
type Sim struct {
	cfg   Config
	reqs  []Request
	insts []*instance
	bound map[kv.Format]*kv.Bound // the KV formats bound to Model.Arch (bindFormat)

	// per request
	res          []Result
	mem          []int64 // KV bytes the request holds (request.memory)
	promptMem    []int64 // its prompt task's KV cache (task.py, memory)
	decodeMem    []int64 // its decode task's
	xferBytes    []int64 // its KV transfer's size
	formats      []*formatState
	nFormats     int
	promptInPool []bool
	poolCount    []int8
	poolSeq      []uint64 // when it entered its instance's pool
	isWaiting    []bool   // in its instance's waiting list
	poolSeqs     uint64
	rmark        []uint32
	flowState    []uint8

	// per task: 2r is request r's prompt, 2r+1 its decode
	ts      []taskState
	tpi     []int32 // tokens per iteration: the prompt's, or 1
	npre    []int32
	gen     []int64 // tokens generated, while the task is out of the batch
	base    []int64 // its instance's tick less gen, while in the batch
	goal    []int64 // tokens to generate: 1 for a prompt, output - 1
	joinSeq []uint64
	seq     uint64
	tmark   []uint32
	inBatch []bool
	mark    uint32

	events []event
	free   []int32
	heap   eventHeap
	now    float64
	// live counts the queued events, not dead, other than retries
	// (evFlowRetry, evLinkRetry): while it is 0 only retries can happen,
	// and they change nothing until one finds room (stalled).
	live int

	view    View
	idle    IdleObserver
	pending int // the request Next returned, -1 when none
	started bool

	linkBusy, linkRetry bool
	linkQueue           []int32
	fair                fairLink // LinkConfig.FairShare's state

	rejected  int    // requests Apply rejected (rejectUnfit)
	rejectMsg string // why the first was

	kvMoved int64
	done    int
	err     error

	scratchNew, scratchPre, scratchAdd []int32
}

// New builds a simulation of cfg serving reqs (in arrival order; each is
// validated).
func New(cfg Config, reqs []Request) (*Sim, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(reqs) > math.MaxInt32/2 {
		return nil, fmt.Errorf("%w: %d requests", ErrBadRequest, len(reqs))
	}
	for i := range reqs {
		if err := reqs[i].Validate(); err != nil {
			return nil, err
		}
	}
	s := &Sim{cfg: cfg, reqs: slices.Clone(reqs), pending: -1, fair: fairLink{ev: -1}}
	s.view.s = s
	for i, ic := range cfg.Instances {
		in, err := s.newInstance(i, ic)
		if err != nil {
			return nil, err
		}
		s.insts = append(s.insts, in)
	}
	n := len(reqs)
	s.res = make([]Result, n)
	for i, r := range s.reqs {
		s.res[i] = Result{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output,
			PromptStart: math.NaN(), FirstToken: math.NaN(), TransferStart: math.NaN(), TransferEnd: math.NaN(),
			DecodeStart: math.NaN(), End: math.NaN(), Prefill: -1, Decode: -1}
	}
	s.mem = make([]int64, n)
	s.promptMem = make([]int64, n)
	s.decodeMem = make([]int64, n)
	s.xferBytes = make([]int64, n)
	s.formats = make([]*formatState, n)
	s.promptInPool = make([]bool, n)
	s.poolSeq = make([]uint64, n)
	s.isWaiting = make([]bool, n)
	s.poolCount = make([]int8, n)
	s.rmark = make([]uint32, n)
	s.flowState = make([]uint8, n)
	s.ts = make([]taskState, 2*n)
	s.npre = make([]int32, 2*n)
	s.tpi = make([]int32, 2*n)
	for i, r := range s.reqs {
		s.tpi[2*i], s.tpi[2*i+1] = int32(r.Prompt), 1
	}
	s.gen = make([]int64, 2*n)
	s.base = make([]int64, 2*n)
	s.goal = make([]int64, 2*n)
	s.joinSeq = make([]uint64, 2*n)
	for i, r := range s.reqs {
		s.goal[2*i], s.goal[2*i+1] = 1, int64(r.Output-1)
	}
	s.tmark = make([]uint32, 2*n)
	s.inBatch = make([]bool, 2*n)
	return s, nil
}

// newInstance resolves an instance's memory and performance curve: its
// own measured rows, or else a measured type's (its own at another TP, or
// the A100's) scaled by TP and by the ratio of the GPUs' FP16 throughput
// for prompts and of their memory bandwidth for decodes, marked
// extrapolated.
func (s *Sim) newInstance(i int, ic InstanceConfig) (*instance, error) {
	g, _ := s.cfg.lookupGPU(ic.GPU)
	m := s.cfg.Model
	in := &instance{idx: i, cfg: ic, gpu: g, promptScale: 1, tokenScale: 1, iterEv: -1,
		maxMem: g.MemoryBytes * int64(ic.TP), memory: m.WeightBytes, schedMem: m.WeightBytes}
	p := s.cfg.Perf
	if c, ok := p.curves[perfKey{m.Name, g.Name, ic.TP}]; ok {
		in.curve = c
		return in, nil
	}
	base := g
	tps := p.tps(m.Name, g.Name)
	if len(tps) == 0 {
		base, _ = LookupGPU("a100-80gb")
		tps = p.tps(m.Name, base.Name)
	}
	if len(tps) == 0 {
		return nil, fmt.Errorf("%w: instance %d: no measured rows for %s to calibrate %s from", ErrBadConfig, i, m.Name, g.Name)
	}
	tp := tps[0]
	for _, t := range tps {
		if abs(t-ic.TP) < abs(tp-ic.TP) {
			tp = t
		}
	}
	in.curve = p.curves[perfKey{m.Name, base.Name, tp}]
	ratio := float64(tp) / float64(ic.TP)
	in.promptScale = ratio * base.FP16FLOPS / g.FP16FLOPS
	in.tokenScale = ratio * base.HBMBytesPerSec / g.HBMBytesPerSec
	in.extrapolated = true
	return in, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Run replays the trace to its end, asking r where each request runs
// (the Next/Apply loop), and returns the summary. The per-request outcomes
// are in Results. A router that is also an IdleObserver is told of idle
// instances. Run returns ErrStalled, with the summary of the finished
// requests, when requests are left that can never finish, and ErrRejected
// when Apply rejected requests whose KV cache never fits
// (Config.RetryUnfit).
func (s *Sim) Run(r Router) (Summary, error) {
	if s.started {
		return Summary{}, ErrRan
	}
	if o, ok := r.(IdleObserver); ok {
		s.Observe(o)
	}
	for {
		req, v, err := s.Next()
		if err == ErrDone {
			return s.Summary(), nil
		}
		if err != nil {
			return s.Summary(), err
		}
		d, err := r.Route(v, req)
		if err != nil {
			return s.Summary(), fmt.Errorf("route request %d: %w", req.ID, err)
		}
		if err := s.Apply(d); err != nil {
			return s.Summary(), err
		}
	}
}

// Observe has o told whenever an instance falls idle (IdleObserver), from
// within Next and Apply. Run calls it for a router that is an
// IdleObserver.
func (s *Sim) Observe(o IdleObserver) { s.idle = o }

// Next advances the simulation to the next request's arrival and returns
// the request and the view to decide on; Apply then places it. At the end
// of the trace it returns ErrDone, or ErrStalled when requests are left
// that can never finish, or else ErrRejected when Apply rejected some. Calling Next again before Apply returns
// ErrPending.
func (s *Sim) Next() (Request, *View, error) {
	if s.pending >= 0 {
		return Request{}, nil, ErrPending
	}
	if !s.started {
		s.started = true
		// SplitwiseSim schedules every arrival up front (simulator.py,
		// TraceSimulator.load_trace), which fixes the heap's shape. (An
		// arrival at t = 0 is queued too; SplitwiseSim would run it at
		// once, before its instances exist, and fail.)
		// Room for every arrival and, beyond them, a few events per
		// instance, so that neither list grows while it fills.
		c := len(s.reqs) + 4*len(s.insts) + 16
		s.events, s.heap = make([]event, 0, c), make(eventHeap, 0, c)
		for i := range s.reqs {
			s.push(s.reqs[i].Arrival, evArrival, int32(i))
		}
	}
	for len(s.heap) > 0 && s.err == nil {
		e := s.heap.pop()
		ev := s.events[e.id]
		s.free = append(s.free, e.id)
		if ev.dead {
			continue
		}
		if !ev.kind.retry() {
			s.live--
		}
		s.now = e.t
		if ev.kind == evArrival {
			s.pending = int(ev.arg)
			return s.reqs[ev.arg], &s.view, nil
		}
		s.dispatch(ev)
		if s.live == 0 && s.err == nil {
			s.checkStalled()
		}
	}
	if s.err != nil {
		return Request{}, nil, s.err
	}
	if s.done+s.rejected < len(s.reqs) {
		return Request{}, nil, s.idleStallError()
	}
	if s.rejected > 0 {
		return Request{}, nil, s.rejectedErr()
	}
	return Request{}, nil, ErrDone
}

// Apply places the request Next returned as d says: its tasks reach their
// instances at once, at its arrival time. A decision naming an instance
// that does not exist returns ErrBadDecision and leaves the request
// waiting for another Apply; Apply without a request waiting returns
// ErrNoPending. Unless Config.RetryUnfit, a request whose KV cache can
// never fit the instances d names is rejected (Result.Rejected), and the
// run goes on without it.
func (s *Sim) Apply(d Decision) error {
	if s.pending < 0 {
		return ErrNoPending
	}
	r := s.pending
	if d.Prefill < 0 || d.Prefill >= len(s.insts) || d.Decode < 0 || d.Decode >= len(s.insts) {
		return fmt.Errorf("%w: request %d: prefill %d, decode %d of %d instances", ErrBadDecision, s.reqs[r].ID, d.Prefill, d.Decode, len(s.insts))
	}
	if err := s.setFormat(r, d); err != nil {
		return err
	}
	s.pending = -1
	if s.rejectUnfit(r, d) {
		return s.err
	}
	s.arrive(r, d)
	return s.err
}

func (s *Sim) dispatch(ev event) {
	switch ev.kind {
	case evIteration:
		in := s.insts[ev.arg]
		in.iterEv = -1
		s.completeIteration(in)
	case evFlowDone:
		s.flowDone(int(ev.arg))
	case evFlowRetry:
		s.flowRetry(int(ev.arg))
	case evLinkRetry:
		s.linkRetry = false
		s.tryLink()
	case evShareJoin:
		s.joinFair(int(ev.arg))
	case evShareDone:
		s.fairDone()
	}
}

// schedule is Simulator.schedule: an action after delay seconds, run at
// once (not queued) when the delay is exactly 0. It returns the event's id,
// or -1 when it ran at once.
func (s *Sim) schedule(delay float64, k evKind, arg int32) int32 {
	if delay == 0 {
		s.dispatch(event{kind: k, arg: arg})
		return -1
	}
	return s.push(s.now+delay, k, arg)
}

// push queues an event at time t and returns its id.
func (s *Sim) push(t float64, k evKind, arg int32) int32 {
	var id int32
	if n := len(s.free); n > 0 {
		id = s.free[n-1]
		s.free = s.free[:n-1]
		s.events[id] = event{kind: k, arg: arg}
	} else {
		id = int32(len(s.events))
		s.events = append(s.events, event{kind: k, arg: arg})
	}
	if !k.retry() {
		s.live++
	}
	s.heap.push(heapEntry{t: t, id: id})
	return id
}

// kill marks the queued event id dead: it stays in the heap and is
// dropped when it reaches the top.
func (s *Sim) kill(id int32) {
	if e := &s.events[id]; !e.dead {
		e.dead = true
		if !e.kind.retry() {
			s.live--
		}
	}
}

func (s *Sim) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// arrive hands request r's tasks to the instances d chose, with the
// schedulers' bookkeeping (scheduler.py: Scheduler.run_request, the
// pending tokens and reserved memory token_jsq and mixed_pool add, and
// executor.py: submit_task and its chain).
//
// A one-token output is all made by the prompt's iteration: the request
// has no decode and ends with its prompt, on its prefill instance
// (SplitwiseSim gives it a decode task of 0 tokens, which finishes only
// in a batch of decodes and otherwise runs past its end).
func (s *Sim) arrive(r int, d Decision) {
	req := s.reqs[r]
	if req.Output == 1 {
		d.Decode = d.Prefill
	}
	s.res[r].Prefill, s.res[r].Decode = d.Prefill, d.Decode
	p, q := s.insts[d.Prefill], s.insts[d.Decode]
	pm, dm := s.taskMem(2*r), s.taskMem(2*r+1)
	if p == q {
		p.schedMem += pm + dm
	} else {
		p.schedMem += pm
		q.schedMem += pm + dm
	}
	p.schedPending += int64(req.Prompt)
	q.schedPending++
	s.taskArrival(p, int32(2*r))
	if p == q && req.Output > 1 {
		s.taskArrival(p, int32(2*r+1))
	}
}

func isPrompt(t int32) bool { return t&1 == 0 }

// tokensPerIter is a task's tokens in an iteration: its prompt, or one.
func (s *Sim) tokensPerIter(t int32) int { return int(s.tpi[t]) }

// taskSize is a decode task's tokens to generate: all but the first, which
// the prompt makes (request.py: token_size - 1).
func (s *Sim) decodeTokens(r int) int64 { return int64(s.reqs[r].Output - 1) }

// taskMem is a task's KV cache (task.py, memory): a prompt's prompt + 1
// tokens, a decode's remaining output tokens (setFormat sizes them).
func (s *Sim) taskMem(t int) int64 {
	if t&1 == 0 {
		return s.promptMem[t>>1]
	}
	return s.decodeMem[t>>1]
}

// bisectPending, bisectArrival and bisectWaiting are bisect.insort's
// (insort_right's) search with a key, for the pending queue (fewer
// preemptions first, then earlier arrival: SplitwiseInstance.
// add_pending_task's key), the pool (arrival) and the waiting list
// (arrival, then entry into the pool):
// a binary search on the list as it is, whose keys may have changed since
// it was sorted, exactly as Python's does. Each order is written out, so
// that no step calls through a func value.
func (s *Sim) bisectPending(a []int32, x int32) int {
	nx, ax := s.npre[x], s.reqs[x>>1].Arrival
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		m := a[mid]
		if nm := s.npre[m]; nx < nm || nx == nm && ax < s.reqs[m>>1].Arrival {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func (s *Sim) bisectArrival(a []int32, x int32) int {
	ax := s.reqs[x].Arrival
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ax < s.reqs[a[mid]].Arrival {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func (s *Sim) bisectWaiting(a []int32, x int32) int {
	ax, qx := s.reqs[x].Arrival, s.poolSeq[x]
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		m := a[mid]
		if am := s.reqs[m].Arrival; ax < am || ax == am && qx < s.poolSeq[m] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// remove deletes the first x of a (list.remove).
func remove(a []int32, x int32) []int32 {
	if i := slices.Index(a, x); i >= 0 {
		return slices.Delete(a, i, i+1)
	}
	return a
}

func (s *Sim) addPending(in *instance, t int32, preempted bool) {
	in.pendingQueue = slices.Insert(in.pendingQueue, s.bisectPending(in.pendingQueue, t), t)
	if preempted {
		in.blocked = append(in.blocked, t)
	}
	if isPrompt(t) {
		in.pendingPrompt = append(in.pendingPrompt, t)
	}
}

func (s *Sim) removePending(in *instance, t int32) {
	in.pendingQueue = remove(in.pendingQueue, t)
	in.blocked = remove(in.blocked, t)
	if isPrompt(t) {
		in.pendingPrompt = remove(in.pendingPrompt, t)
	}
}

func (s *Sim) addToPool(in *instance, t int32) {
	r := t >> 1
	if s.poolCount[r] == 0 {
		in.pendingReqs = slices.Insert(in.pendingReqs, s.bisectArrival(in.pendingReqs, r), r)
		s.poolSeqs++
		s.poolSeq[r] = s.poolSeqs
	}
	s.poolCount[r]++
	if isPrompt(t) {
		s.promptInPool[r] = true
	}
	s.refreshWaiting(in, r)
}

func (s *Sim) removeFromPool(in *instance, t int32) {
	r := t >> 1
	s.poolCount[r]--
	if isPrompt(t) {
		s.promptInPool[r] = false
	}
	if s.poolCount[r] == 0 {
		in.pendingReqs = remove(in.pendingReqs, r)
	}
	s.refreshWaiting(in, r)
}

// refreshWaiting keeps request r in its instance's waiting list exactly
// while it is in the pool and its first task is not in the batch: the
// requests of the pool the batch selection's last pass and the pass-over
// count look at.
func (s *Sim) refreshWaiting(in *instance, r int32) {
	want := s.poolCount[r] > 0 && !s.inBatch[s.first(r)]
	switch {
	case want && !s.isWaiting[r]:
		in.waiting = slices.Insert(in.waiting, s.bisectWaiting(in.waiting, r), r)
	case !want && s.isWaiting[r]:
		in.waiting = remove(in.waiting, r)
	default:
		return
	}
	s.isWaiting[r] = want
}

// first is request r's first task in its instance's pool
// (request_tasks[request][0]): its prompt while that waits or runs, then
// its decode.
func (s *Sim) first(r int32) int32 {
	if s.promptInPool[r] {
		return 2 * r
	}
	return 2*r + 1
}

func (s *Sim) addToBatch(in *instance, t int32) {
	in.batch = append(in.batch, t)
	s.inBatch[t] = true
	s.base[t] = in.tick - s.gen[t]
	s.seq++
	s.joinSeq[t] = s.seq
	in.done.push(finishEntry{tick: s.base[t] + s.goal[t], seq: s.seq, t: t})
	if isPrompt(t) {
		in.promptsInBatch++
		in.promptTokensInBatch += int(s.tpi[t])
	} else {
		in.tokensInBatch++
	}
	if len(in.batch) == 1 {
		in.runStamp = s.now
	}
	s.refreshWaiting(in, t>>1)
}

func (s *Sim) removeFromBatch(in *instance, t int32) {
	in.batch = remove(in.batch, t)
	s.leaveBatch(in, t)
	s.maybeIdle(in)
}

// leaveBatch is removeFromBatch's bookkeeping of the task, for a task
// already taken out of in.batch.
func (s *Sim) leaveBatch(in *instance, t int32) {
	s.inBatch[t] = false
	s.gen[t] = in.tick - s.base[t]
	if isPrompt(t) {
		in.promptsInBatch--
		in.promptTokensInBatch -= int(s.tpi[t])
	} else {
		in.tokensInBatch--
	}
	s.refreshWaiting(in, t>>1)
}

// maybeIdle ends the instance's busy stretch when its batch has just
// emptied (its callers call it once, after removing tasks).
func (s *Sim) maybeIdle(in *instance) {
	if len(in.batch) == 0 {
		in.busy += s.now - in.runStamp
		in.runStamp = 0
	}
}

// taskArrival is SplitwiseInstance.task_arrival: queue the task, then
// start an iteration if the instance is idle (and the task's KV cache
// fits), or cut the running contiguous iterations short at the next
// boundary if the task fits the batch's limits (or, for a prompt, if only
// decode tokens stand in its way).
func (s *Sim) taskArrival(in *instance, t int32) {
	s.ts[t] = taskQueued
	s.addToPool(in, t)
	s.addPending(in, t, false)
	if len(in.batch) == 0 {
		if in.memory+s.taskMem(int(t)) > in.maxMem {
			return
		}
		s.startIteration(in)
		return
	}
	if len(in.batch) < in.cfg.MaxBatchSize && in.batchTokens+s.tokensPerIter(t) <= in.cfg.MaxBatchTokens {
		s.pauseIteration(in)
		return
	}
	if isPrompt(t) {
		promptTokens := in.batchTokens - in.tokensInBatch
		if in.promptsInBatch < len(in.batch) && promptTokens+s.reqs[t>>1].Prompt <= in.cfg.MaxBatchTokens {
			s.pauseIteration(in)
		}
	}
}

// selectBatch is SplitwiseInstance.select_batch: the next batch, built in
// five passes (tasks passed over MaxPreemptions times, waiting prompts,
// preempted decodes, the running batch, then every waiting request's first
// task by arrival), each stopping at the batch's size or token limit and
// the first and last admitting new KV caches only while they fit. It
// returns the running tasks left out (preempted) and the new ones.
func (s *Sim) selectBatch(in *instance) (pre, add []int32) {
	s.mark++
	mk := s.mark
	nb := s.scratchNew[:0]
	tokens := int32(0)
	mem := in.memory
	maxB, maxT := in.cfg.MaxBatchSize, int32(in.cfg.MaxBatchTokens)
	tmark, rmark, tpi, ts := s.tmark, s.rmark, s.tpi, s.ts
	// Each pass stops at the batch's size or token limit; a task whose
	// request is in already is skipped; put is nb = append(nb, t), both
	// marks set, tokens += tpi[t].
	for _, t := range in.pendingQueue {
		if int(s.npre[t]) < in.cfg.MaxPreemptions {
			break
		}
		if len(nb) == maxB || len(nb) > 0 && tokens+tpi[t] > maxT {
			break
		}
		if rmark[t>>1] == mk {
			continue
		}
		if ts[t] != taskBlocked {
			m := s.taskMem(int(t))
			if m+mem > in.maxMem {
				continue
			}
			mem += m
		}
		nb = append(nb, t)
		tmark[t], rmark[t>>1] = mk, mk
		tokens += tpi[t]
	}
	for _, t := range in.pendingPrompt {
		if len(nb) == maxB || len(nb) > 0 && tokens+tpi[t] > maxT {
			break
		}
		if rmark[t>>1] == mk {
			continue
		}
		m := s.promptMem[t>>1]
		if m+mem > in.maxMem {
			break
		}
		mem += m
		nb = append(nb, t)
		tmark[t], rmark[t>>1] = mk, mk
		tokens += tpi[t]
	}
	for _, t := range in.blocked {
		if len(nb) == maxB || len(nb) > 0 && tokens+tpi[t] > maxT {
			break
		}
		if rmark[t>>1] == mk {
			continue
		}
		nb = append(nb, t)
		tmark[t], rmark[t>>1] = mk, mk
		tokens += tpi[t]
	}
	// The passes so far took waiting tasks only, none of the running batch.
	fresh := len(nb)
	keptAll := true
	// implicit counts the running tasks kept without being listed in nb.
	implicit := 0
	if fresh == 0 {
		// Nothing came first: the running batch is kept whole (it fits the
		// limits it was chosen under, less what finished), and the last
		// pass need not look at its requests.
		implicit = len(in.batch)
		tokens = int32(in.promptTokensInBatch + in.tokensInBatch)
	} else if bt := int32(in.promptTokensInBatch + in.tokensInBatch); len(nb)+len(in.batch) <= maxB && tokens+bt <= maxT {
		// The whole running batch fits beside what came first, so neither
		// limit can stop this pass (the loop below would check them at
		// every task and never stop): only a request already in is
		// skipped.
		for _, t := range in.batch {
			if rmark[t>>1] == mk {
				keptAll = false
				continue
			}
			nb = append(nb, t)
			tmark[t], rmark[t>>1] = mk, mk
			tokens += tpi[t]
		}
	} else {
		for _, t := range in.batch {
			if len(nb) == maxB || len(nb) > 0 && tokens+tpi[t] > maxT {
				keptAll = false
				break
			}
			if rmark[t>>1] == mk {
				keptAll = false
				continue
			}
			nb = append(nb, t)
			tmark[t], rmark[t>>1] = mk, mk
			tokens += tpi[t]
		}
	}
	kept := len(nb)
	// The last pass takes the pool's requests by arrival; when the running
	// batch was kept whole, its requests are all marked and skipped, so
	// the waiting ones are all it needs to see.
	reqs := in.pendingReqs
	if keptAll {
		reqs = in.waiting
	}
	for _, r := range reqs {
		if len(nb)+implicit == maxB {
			break
		}
		if rmark[r] == mk {
			continue
		}
		t := s.first(r)
		if len(nb)+implicit > 0 && tokens+tpi[t] > maxT {
			break
		}
		if ts[t] != taskBlocked {
			m := s.taskMem(int(t))
			if m+mem > in.maxMem {
				break
			}
			mem += m
		}
		nb = append(nb, t)
		tmark[t], rmark[r] = mk, mk
		tokens += tpi[t]
	}
	in.batchTokens = int(tokens)
	pre, add = s.scratchPre[:0], s.scratchAdd[:0]
	if !keptAll {
		for _, t := range in.batch {
			if tmark[t] != mk {
				pre = append(pre, t)
			}
		}
	}
	add = append(add, nb[:fresh]...)
	for _, t := range nb[kept:] {
		if !s.inBatch[t] {
			add = append(add, t)
		}
	}
	s.scratchNew, s.scratchPre, s.scratchAdd = nb, pre, add
	return pre, add
}

// startIteration is ORCAInstance.start_iteration: select the batch, apply
// its preemptions and admissions, count a pass-over for every waiting
// request, then run as many identical decode iterations back to back as
// the shortest remaining decode allows (one iteration when a prompt is in
// the batch), as one event.
func (s *Sim) startIteration(in *instance) {
	if len(in.pendingQueue) == 0 {
		// Nothing waits: every task of the pool runs, so selectBatch
		// would keep the batch as it is (it fits the limits it was
		// selected under, less what finished) and count no pass-over.
		in.batchTokens = in.promptTokensInBatch + in.tokensInBatch
		s.scratchAdd = s.scratchAdd[:0]
	} else if !s.reselect(in) {
		return
	}
	if len(in.batch) == 0 {
		if len(in.pendingReqs) == 0 && s.idle != nil {
			s.idle.InstanceIdle(&s.view, in.idx)
		}
		return
	}
	d, extra, n, ok := s.iterationTime(in)
	if !ok {
		return
	}
	in.iterDur = d
	if in.promptsInBatch > 0 || s.cfg.DecodeReadsKV || extra > 0 {
		n = 1
	}
	in.nContig = n
	if extra > 0 {
		for _, t := range in.batch {
			s.res[t>>1].FormatTime += extra
		}
	}
	// Only the tasks the selection just added start now (the others
	// run); the scratch list is selectBatch's, unchanged since.
	for _, t := range s.scratchAdd {
		switch s.ts[t] {
		case taskQueued:
			s.runTask(in, t)
		case taskBlocked:
			s.ts[t] = taskRunning
		}
	}
	in.iterations += n
	dn := float64(d * float64(n)) // rounded apart (no fused multiply-add), as in Python
	in.iterEvT = s.now + dn
	in.iterEv = s.schedule(dn, evIteration, int32(in.idx))
}

// runTask starts a queued task: it allocates its KV cache (task.py, run).
func (s *Sim) runTask(in *instance, t int32) {
	s.ts[t] = taskRunning
	r := t >> 1
	m := s.taskMem(int(t))
	in.memory += m
	s.mem[r] += m
	if isPrompt(t) {
		s.res[r].PromptStart = s.now
	} else {
		s.res[r].DecodeStart = s.now
	}
}

// iterationTime is get_iteration_duration (performance_model.py): the
// prompt curve at the batch's tokens for a batch of prompts, the token
// curve at its size for a batch of decodes, 1.1 x the prompt curve for a
// mix; then the extrapolation scales, with DecodeReadsKV the KV reads, and
// the work of the batch's KV formats other than the dense one, which it
// also returns (extra; 0 for an all-dense batch), with the fewest tokens a
// decode in the batch has left to generate (minLeft). A prompt whose
// format computes its attention otherwise (formatState.prefill: HACK's
// quantized prefill) changes the iteration by that much, which is not
// format work (extra) but the prompt's own computation.
func (s *Sim) iterationTime(in *instance) (d, extra float64, minLeft int64, ok bool) {
	bt := in.promptTokensInBatch + in.tokensInBatch
	tensor := 0.0 // the batch's prompts' change of attention time (formatState.prefill)
	minLeft = math.MaxInt64
	if in.tokensInBatch > 0 && in.promptsInBatch == 0 {
		minLeft = in.done.minTick(s) - in.tick
	}
	var ctxBytes int64
	if anyFormat := s.nFormats > 0; anyFormat || s.cfg.DecodeReadsKV {
		kvb := s.cfg.Model.KVBytesPerToken
		ops, int8, bytes, fixed := 0.0, 0.0, int64(0), 0.0
		for _, t := range in.batch {
			r := t >> 1
			var fs *formatState
			if anyFormat {
				fs = s.formats[r]
			}
			if isPrompt(t) {
				if fs != nil {
					extra += fs.encode
					tensor += fs.prefill
				}
				continue
			}
			ctx := s.reqs[r].Prompt + 1 + int(in.tick-s.base[t])
			if fs == nil {
				ctxBytes += int64(ctx) * kvb
				continue
			}
			st := fs.f.Step(ctx)
			fixed = max(fixed, fs.step)
			ctxBytes += st.Bytes
			ops += st.Ops // Work.Dequant + Work.Approx
			int8 += st.INT8
			bytes += st.DequantBytes
		}
		if ops > 0 || bytes > 0 || int8 > 0 {
			tp := float64(in.cfg.TP)
			extra += ops/(tp*in.gpu.VectorOPS) + float64(bytes)/(tp*in.gpu.HBMBytesPerSec) + int8/(tp*in.gpu.int8Rate())
		}
		extra += fixed
	}
	c := in.curve
	switch {
	case in.tokensInBatch == 0:
		d = interp(c.x, c.prompt, float64(bt))
		if in.promptScale != 1 {
			d *= in.promptScale
		}
	case in.promptsInBatch == 0:
		d = interp(c.x, c.token, float64(bt))
		if in.tokenScale != 1 {
			d *= in.tokenScale
		}
		if s.cfg.DecodeReadsKV {
			d += float64(ctxBytes) / (float64(in.cfg.TP) * in.gpu.HBMBytesPerSec)
		}
	default:
		d = interp(c.x, c.prompt, float64(bt))
		if in.promptScale != 1 {
			d *= in.promptScale
		}
		d *= mixedBatchFactor
	}
	if extra > 0 {
		d += extra
	}
	if tensor != 0 {
		d = max(d+tensor, d*minPrefillShare)
	}
	if s.cfg.Link.StageBytesPerSec > 0 && in.promptsInBatch > 0 {
		d += s.stageTime(in)
	}
	if !(d > 0) || math.IsInf(d, 0) {
		s.fail(fmt.Errorf("%w: instance %d: the performance curve gives %v s for an iteration of %d tokens", ErrBadConfig, in.idx, d, bt))
		return 0, 0, 0, false
	}
	return d, extra, minLeft, true
}

// formatState is what a request in a KV format other than the dense one
// carries: the format bound to the model's architecture, and the times of
// its encoding (on its prefill instance) and of its decoding on arrival
// (on its decode instance). Sim.formats holds each request's, nil for the
// dense cache; Sim.nFormats counts those that are not nil.
type formatState struct {
	f               *kv.Bound
	encode, receive float64
	step            float64 // Config.FormatStepSeconds of f
	// prefill is how much longer (negative: shorter) the prompt's
	// attention takes in f than the dense prefill's (prefillChange).
	prefill float64
}

// minPrefillShare bounds what a change of attention (formatState.prefill)
// leaves of a prompt iteration: a tenth, so that no iteration's time
// reaches zero whatever the ratios of a GPU's throughputs.
const minPrefillShare = 0.1

// prefillChange is the change of the time of request r's prompt on
// prefill instance p when its format computes the prompt's attention
// otherwise (w: kv.Work's Prefill fields; zero for every format but HACK's
// quantized prefill). The attention's share of the prompt's time, alone
// in an iteration, is its share of the dense prefill's FLOPs
// (kv.PrefillFLOPs); the format's products take that time scaled by their
// work over the dense attention's at the GPU's tensor rates (INT8
// operations at INT8OPS, 16-bit FLOPs at FP16FLOPS), so at the efficiency
// the measured curve implies; its elementwise work runs at VectorOPS and
// is format work (it returns it apart as vector, for the encoding).
func (s *Sim) prefillChange(p *instance, prompt int, w kv.Work) (tensor, vector float64) {
	if w.PrefillAttn <= 0 {
		return 0, 0
	}
	total := kv.PrefillFLOPs(s.cfg.Model.Arch, prompt)
	c := p.curve
	alone := interp(c.x, c.prompt, float64(prompt)) * p.promptScale
	attn := alone * w.PrefillAttn / total
	g := p.gpu
	ratio := (w.PrefillINT8*g.FP16FLOPS/g.int8Rate() + w.PrefillFP16) / w.PrefillAttn
	return attn * (ratio - 1), w.PrefillVector / (float64(p.cfg.TP) * g.VectorOPS)
}

// setFormat checks request r's KV format and sizes its tasks' caches and
// transfer: the dense cache as SplitwiseSim does (prompt + 1 tokens for
// the prompt, output - 1 more for the decode, the prompt's tokens on the
// link), another format by its StoredBytes at those lengths and its
// TransferBytes.
func (s *Sim) setFormat(r int, d Decision) error {
	req := s.reqs[r]
	kvb := s.cfg.Model.KVBytesPerToken
	if d.Format == (kv.Format{}) {
		if s.formats[r] != nil {
			s.formats[r] = nil
			s.nFormats--
		}
		s.promptMem[r] = int64(req.Prompt+1) * kvb
		s.decodeMem[r] = int64(req.Output-1) * kvb
		s.xferBytes[r] = int64(req.Prompt) * kvb
		s.res[r].Format = ""
		return nil
	}
	a := s.cfg.Model.Arch
	if a == (kv.Arch{}) {
		return fmt.Errorf("%w: request %d: format %v needs the model's architecture (Model.Arch)", ErrBadDecision, req.ID, d.Format)
	}
	b, err := s.bindFormat(d.Format)
	if err != nil {
		return fmt.Errorf("%w: request %d: %v", ErrBadDecision, req.ID, err)
	}
	s.promptMem[r] = b.StoredBytes(req.Prompt + 1)
	s.decodeMem[r] = b.StoredBytes(req.Prompt+req.Output) - s.promptMem[r]
	s.xferBytes[r] = b.TransferBytes(req.Prompt)
	w := b.Work(req.Prompt)
	p, q := s.insts[d.Prefill], s.insts[d.Decode]
	fs := &formatState{f: b,
		encode:  w.Encode / (float64(p.cfg.TP) * p.gpu.VectorOPS),
		receive: w.Receive / (float64(q.cfg.TP) * q.gpu.VectorOPS),
		step:    s.cfg.FormatStepSeconds[b.Name()]}
	var vector float64
	fs.prefill, vector = s.prefillChange(p, req.Prompt, w)
	fs.encode += vector
	if d.Prefill == d.Decode {
		fs.receive = 0 // nothing crosses a link
	}
	if s.formats[r] == nil {
		s.nFormats++
	}
	s.formats[r] = fs
	s.res[r].Format = b.Name()
	return nil
}

// bindFormat is f bound to the model's architecture (kv.Format.Bind), made
// once per format and run: the iterations price every request's cache
// through it (iterationTime) without checking the format again.
func (s *Sim) bindFormat(f kv.Format) (*kv.Bound, error) {
	if b := s.bound[f]; b != nil {
		return b, nil
	}
	b, err := f.Bind(s.cfg.Model.Arch)
	if err != nil {
		return nil, err
	}
	if s.bound == nil {
		s.bound = map[kv.Format]*kv.Bound{}
	}
	s.bound[f] = b
	return b, nil
}

// reselect selects the batch (selectBatch), applies its preemptions and
// admissions, and counts a pass-over for every request left waiting.
func (s *Sim) reselect(in *instance) bool {
	pre, add := s.selectBatch(in)
	// The selection marked what it took (tmark == mark): the running
	// tasks it kept and the waiting ones it adds. Each list is filtered
	// once rather than searched per task; the lists keep their order, as
	// one remove per task would leave them.
	mk, tmark := s.mark, s.tmark
	if len(pre) > 0 {
		kept := in.batch[:0]
		for _, t := range in.batch {
			if tmark[t] == mk {
				kept = append(kept, t)
			}
		}
		in.batch = kept
		for _, t := range pre {
			if isPrompt(t) {
				s.fail(fmt.Errorf("infer: internal error: prompt task %d preempted", t))
				return false
			}
			s.ts[t] = taskBlocked
			s.leaveBatch(in, t)
			s.addPending(in, t, true)
		}
		s.maybeIdle(in)
	}
	if len(add) > 0 {
		keep := func(l []int32) []int32 {
			out := l[:0]
			for _, t := range l {
				if tmark[t] != mk {
					out = append(out, t)
				}
			}
			return out
		}
		in.pendingQueue = keep(in.pendingQueue)
		in.blocked = keep(in.blocked)
		in.pendingPrompt = keep(in.pendingPrompt)
		for _, t := range add {
			s.addToBatch(in, t)
		}
	}
	for _, r := range in.waiting {
		s.npre[s.first(r)]++
	}
	return true
}

// pauseIteration is ORCAInstance.pause_iteration: end the running
// contiguous decode iterations at the next iteration boundary, so that a
// new arrival joins the batch then.
func (s *Sim) pauseIteration(in *instance) {
	if in.pauseNext || in.promptsInBatch > 0 {
		return
	}
	in.pauseNext = true
	old := in.iterDur * float64(in.nContig)
	start := in.iterEvT - old
	elapsed := s.now - start
	nNew := pyFloorDiv(elapsed, in.iterDur) + 1
	in.nContig = int64(nNew)
	remaining := in.iterDur*nNew - elapsed
	if in.iterEv >= 0 {
		s.kill(in.iterEv)
	}
	in.iterEvT = s.now + remaining
	in.iterEv = s.schedule(remaining, evIteration, int32(in.idx))
}

// pyFloorDiv is Python's float floor division a // b (floatobject.c,
// _float_div_mod), bit for bit.
func pyFloorDiv(a, b float64) float64 {
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div -= 1
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	f := math.Floor(div)
	if div-f > 0.5 {
		f++
	}
	return f
}

// completeIteration is ORCAInstance.complete_iteration: every task in the
// batch counts its iterations' tokens, the finished ones leave, and the
// next iteration starts.
func (s *Sim) completeIteration(in *instance) {
	in.tick += in.nContig
	// done is the iteration's finished tasks, in batch order (the order
	// they joined it); a completion may run another instance's iteration
	// at once (a zero-length event), so it is the call's own.
	var buf [32]int32
	done := buf[:0]
	for len(in.done) > 0 {
		e := in.done[0]
		if !s.inBatch[e.t] || s.joinSeq[e.t] != e.seq {
			in.done.pop() // left the batch since
			continue
		}
		if e.tick > in.tick {
			break
		}
		if e.tick < in.tick {
			s.fail(fmt.Errorf("infer: internal error: task %d passed its last token", e.t))
			return
		}
		in.done.pop()
		done = append(done, e.t)
	}
	slices.SortFunc(done, func(a, b int32) int { return cmp.Compare(s.joinSeq[a], s.joinSeq[b]) })
	for _, t := range done {
		s.taskCompletion(in, t)
	}
	in.pauseNext = false
	s.startIteration(in)
}

// finishEntry is a task in a batch and the tick it finishes at; seq tells
// it from an entry of an earlier stay in the batch.
type finishEntry struct {
	tick int64
	seq  uint64
	t    int32
}

// finishHeap is a min-heap of finishEntry by tick. Entries of tasks that
// left the batch stay until they reach the top.
type finishHeap []finishEntry

func (h *finishHeap) push(e finishEntry) {
	*h = append(*h, e)
	a := *h
	// The entry rises past every parent with a later tick; the parents
	// move down into the hole it leaves (the swaps of a textbook heap,
	// with one store per level).
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].tick <= e.tick {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = e
}

func (h *finishHeap) pop() {
	a := *h
	n := len(a) - 1
	x := a[n]
	a = a[:n]
	*h = a
	if n == 0 {
		return
	}
	// x, the last entry, sinks from the root past every child with an
	// earlier tick (the smaller child, the left one on a tie), the
	// children moving up into the hole.
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m, mt := -1, x.tick
		if a[l].tick < mt {
			m, mt = l, a[l].tick
		}
		if r := l + 1; r < n && a[r].tick < mt {
			m = r
		}
		if m < 0 {
			break
		}
		a[i] = a[m]
		i = m
	}
	a[i] = x
}

// minTick is the earliest finishing tick of a task still in the batch,
// dropping the entries of tasks that left.
func (h *finishHeap) minTick(s *Sim) int64 {
	for len(*h) > 0 {
		e := (*h)[0]
		if s.inBatch[e.t] && s.joinSeq[e.t] == e.seq {
			return e.tick
		}
		h.pop()
	}
	return math.MaxInt64
}

// taskCompletion is ORCAInstance.task_completion with the tasks' complete
// (task.py) and the executor's next step (executor.py): a finished prompt
// records the first token and, disaggregated, starts the KV transfer; a
// finished decode frees the request's KV cache and ends the request.
func (s *Sim) taskCompletion(in *instance, t int32) {
	s.ts[t] = taskDone
	r := t >> 1
	last := !isPrompt(t) || s.reqs[r].Output == 1
	if isPrompt(t) {
		in.schedPending -= int64(s.reqs[r].Prompt)
		s.res[r].FirstToken = s.now
	}
	if last {
		in.schedPending--
		in.memory -= s.mem[r]
		in.schedMem -= s.mem[r]
		s.mem[r] = 0
	}
	s.removeFromBatch(in, t)
	s.removeFromPool(in, t)
	if last {
		s.res[r].End = s.now
		s.done++
		return
	}
	if s.res[r].Prefill != s.res[r].Decode {
		s.flowArrival(int(r))
	}
}

// flowArrival is Link.flow_arrival for a request's KV transfer.
func (s *Sim) flowArrival(r int) {
	s.flowState[r] = 1
	if s.cfg.Link.Shared {
		s.linkQueue = append(s.linkQueue, int32(r))
		s.tryLink()
		return
	}
	s.flowRetry(r)
}

func (s *Sim) retryDelay() float64 {
	if s.cfg.Link.RetryDelay > 0 {
		return s.cfg.Link.RetryDelay
	}
	return 1
}

// fits reports whether request r's KV cache fits its decode instance now.
func (s *Sim) fits(r int) bool {
	d := s.insts[s.res[r].Decode]
	return d.memory+s.mem[r] <= d.maxMem
}

// flowRetry starts request r's own transfer if its KV cache fits the
// destination, or looks again after the retry delay (Link.retry_flow).
func (s *Sim) flowRetry(r int) {
	if s.flowState[r] != 1 {
		return
	}
	if s.fits(r) {
		s.runFlow(r)
		return
	}
	s.schedule(s.retryDelay(), evFlowRetry, int32(r))
}

// tryLink starts the shared link's first waiting transfer if the link is
// free and the KV cache fits its destination.
func (s *Sim) tryLink() {
	if s.cfg.Link.FairShare {
		s.admitFair()
		return
	}
	if s.linkBusy || len(s.linkQueue) == 0 {
		return
	}
	r := int(s.linkQueue[0])
	if !s.fits(r) {
		if !s.linkRetry {
			s.linkRetry = true
			s.schedule(s.retryDelay(), evLinkRetry, 0)
		}
		return
	}
	s.linkQueue = s.linkQueue[1:]
	s.linkBusy = true
	s.runFlow(r)
}

// runFlow is Link.run_flow: the destination allocates the KV cache and the
// bytes take size / bandwidth (after the per-transfer overhead).
func (s *Sim) runFlow(r int) {
	s.flowState[r] = 2
	d := s.insts[s.res[r].Decode]
	d.memory += s.mem[r]
	size := s.xferBytes[r]
	s.res[r].TransferStart = s.now
	s.res[r].TransferBytes = size
	s.kvMoved += size
	if s.cfg.Link.FairShare {
		s.startFair(r)
		return
	}
	dur := s.cfg.Link.Overhead + float64(size)/s.cfg.Link.BytesPerSec
	if fs := s.formats[int32(r)]; fs != nil && fs.receive > 0 {
		dur += fs.receive
		s.res[r].FormatTime += fs.receive
	}
	s.schedule(dur, evFlowDone, int32(r))
}

// flowDone is Link.flow_completion: the source frees the KV cache, the
// decode task arrives at its instance, and the source is told (it may
// have been waiting for that memory).
func (s *Sim) flowDone(r int) {
	s.flowState[r] = 3
	src := s.insts[s.res[r].Prefill]
	src.memory -= s.mem[r]
	src.schedMem -= s.mem[r]
	s.res[r].TransferEnd = s.now
	s.taskArrival(s.insts[s.res[r].Decode], int32(2*r+1))
	s.notifyFlowCompletion(src)
	if s.cfg.Link.Shared {
		s.linkBusy = false
		s.tryLink()
	}
}

// notifyFlowCompletion is ORCAInstance.notify_flow_completion.
func (s *Sim) notifyFlowCompletion(in *instance) {
	if len(in.pendingQueue) == 0 {
		return
	}
	t := in.pendingQueue[0]
	if len(in.batch) == 0 {
		if in.memory+s.taskMem(int(t)) > in.maxMem {
			return
		}
		s.startIteration(in)
		return
	}
	if len(in.batch) < in.cfg.MaxBatchSize && in.batchTokens < in.cfg.MaxBatchTokens {
		s.pauseIteration(in)
	}
}
