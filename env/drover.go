package env

import (
	"fmt"
	"github.com/drover-sched/drover/env/converge"
	"math"
	"math/rand/v2"
)

// Drover is Drover's own throughput model. A job's amount of work is its
// measured Duration, taken to be its run time on its requested GPUs packed
// onto as few nodes as possible at reference speed; a job without a
// Duration gets its model's iterations to target at its batch size times
// that packed iteration time. On an actual allocation the job runs at
// rate = (packed iteration time) / (actual iteration time), where an
// iteration's compute part comes from the profile at the per-GPU batch size
// and is slowed by the slowest allocated GPU's speed, and its sync part is
// the profile's measured all-reduce time for the actual placement: spread
// placements communicate more slowly than packed ones. The straggler issue
// adds per-worker behaviour on top of this.
type Drover struct {
	// Profiles maps model names to profiles.
	Profiles map[string]Profile
	// GPUsPerNode is the node size of the packed reference placement; 0
	// means 4.
	GPUsPerNode int
	// Workers, when set, models each worker (stragglers, background load,
	// sync strategies); nil keeps the job-level model.
	Workers *Workers

	occ     []occupancy // per node, with Workers
	up      uplinks     // cross-rack traffic, with Workers
	cluster *Cluster    // the cluster placed on, with Workers

	// slab is where Admit takes the jobs' states from, a chunk at a time;
	// chunks grow from 4 states to slabJobs, so that a model that admits
	// one job (the policy server's per-request probe) allocates one small
	// chunk.
	slab     []droverJob
	slabSize int
	// spare holds, by worker count, the per-worker states of finished
	// jobs (with Workers), for the next placements to reuse: only the
	// running jobs hold one, so a large workload's memory follows the
	// running jobs and not every job it admits.
	spare [][]*workerState
	sink  int // what prefetch read, kept so that its reads stay
	// bg is each node's background load as last asked (with Workers
	// bgFor).
	bg    []bgLoad
	bgFor *Workers
	// believed is Believed's answer for believedOf (the convergence
	// model run).
	believed, believedOf *Convergence
	place                []int // scratch for placements
}

// slabJobs is the most job states Admit allocates at once.
const slabJobs = 256

var _ Model = (*Drover)(nil)
var _ Oracle = (*Drover)(nil)

type droverJob struct {
	prof    Profile
	w       *workerState // with Workers
	batch   int
	ref     float64 // packed iteration time, seconds
	work    float64 // reference seconds of work in total
	done    float64 // reference seconds of work done
	rate    float64 // reference seconds per second on the current allocation
	delay   float64
	restart float64
	// The per-worker model's figures for the current period (with
	// Workers), kept here rather than in w so that Advance, which runs for
	// every running job at every event, reads one struct.
	iterTime      float64 // seconds per iteration
	withStraggler float64 // share of sampled iterations with a straggler
	stragglers    float64 // mean stragglers per sampled iteration
	freeIter      float64 // seconds per iteration at the median worker's pace
	commDelay     float64 // the communication part of iterTime - freeIter
	computeDelay  float64 // the computation part
	relayed       float64 // STRET: workers relaying this period
	withheld      float64 // STRET: withheld workers per iteration
	// What the job's synchronization strategy on its current allocation
	// does to its convergence (set by Place), and what the strategies it
	// trained under did: work done times their final accuracy, the work
	// done under a strategy that never reaches the target, and whether
	// one of them diverged.
	conv     SyncOutcome
	accWork  float64
	missWork float64
	diverged bool
	// Sync-Switch's hybrid (Convergence.Switched): whether the job's
	// current placement is under BSP, whether it trained under another
	// strategy before any switch, and its progress when it was first
	// placed under ASP after training only under BSP (0 before).
	bspNow, otherFirst bool
	switchAt           float64
}

// Name implements Model.
func (*Drover) Name() string { return "drover" }

func (m *Drover) gpusPerNode() int {
	if m.GPUsPerNode > 0 {
		return m.GPUsPerNode
	}
	return 4
}

// Admit implements Model.
func (m *Drover) Admit(j *Job, meta *Meta) error {
	p, ok := m.Profiles[j.Spec.Model]
	if !ok {
		return fmt.Errorf("no profile for model %q", j.Spec.Model)
	}
	b := j.Spec.BatchSize
	if b == 0 {
		b = max(p.InitBatchSize(), p.MinLocalBsz()*j.Spec.GPUs)
	}
	b = min(b, max(p.MaxBatchSize(), p.MinLocalBsz()*j.Spec.GPUs))
	if len(m.slab) == 0 {
		m.slabSize = min(max(2*m.slabSize, 4), slabJobs)
		m.slab = make([]droverJob, m.slabSize)
	}
	s := &m.slab[0]
	m.slab = m.slab[1:]
	s.prof, s.batch, s.restart = p, b, meta.RestartDelay
	m.place = appendPacked(m.place[:0], j.Spec.GPUs, m.gpusPerNode())
	s.ref = iterTime(p, m.place, b, 1)
	if !(s.ref > 0) || math.IsInf(s.ref, 0) {
		return fmt.Errorf("model %s: no usable iteration time on %d GPUs at batch size %d", p.Name(), j.Spec.GPUs, b)
	}
	if j.Spec.Duration > 0 {
		s.work = j.Spec.Duration
	} else {
		s.work = p.Iteration(b, p.CompletionEpoch(b)) * s.ref
	}
	if m.Workers != nil {
		m.Workers.defaults()
	}
	j.m = s
	return nil
}

// workerState returns the per-worker state of s, the state of job j with w
// workers, set up at its first placement: a finished job's for w workers
// when there is one, else a new one. Its network noise starts from the
// job's seed, as if drawn from nothing before.
func (m *Drover) workerState(j *Job, s *droverJob, w int) *workerState {
	if s.w != nil {
		return s.w
	}
	var ws *workerState
	if w < len(m.spare) && len(m.spare[w]) > 0 {
		k := len(m.spare[w]) - 1
		ws, m.spare[w][k] = m.spare[w][k], nil
		m.spare[w] = m.spare[w][:k]
	} else {
		ws = &workerState{}
		ws.net = *rand.New(&ws.netSrc)
	}
	ws.netSrc.Seed(m.Workers.Seed^0x6e6f697365, uint64(j.ID))
	if m.Workers.STRET {
		ws.stret = &stretState{curve: newCurve(s.prof, s.batch)}
	}
	s.w = ws
	return ws
}

// retire implements retirer: j's per-worker state goes to the spares, for
// a later placement of as many workers, keeping its buffers and its jitter
// process (reset, not rebuilt, when that can be) but nothing of j's.
func (m *Drover) retire(j *Job) {
	if m.Workers == nil {
		return
	}
	s := j.m.(*droverJob)
	ws := s.w
	if ws == nil {
		return
	}
	s.w = nil
	w := ws.jitSize
	if ws.jit == nil {
		w = len(ws.m)
	}
	ws.spareJit, ws.jitSize = ws.jitSize, 0
	ws.stret, ws.replace, ws.shares = nil, nil, nil
	ws.lb, ws.lbN = ws.lb[:0], 0
	if w < 1 || w > maxSpareWorkers {
		return
	}
	if len(m.spare) <= w {
		m.spare = append(m.spare, make([][]*workerState, w+1-len(m.spare))...)
	}
	m.spare[w] = append(m.spare[w], ws)
}

// maxSpareWorkers is the largest worker count whose states retire keeps.
const maxSpareWorkers = 1024

// Packed returns the placement (GPUs per node) of r GPUs on as few nodes
// of g GPUs as possible: full nodes, then the remainder.
func Packed(r, g int) []int { return appendPacked(nil, r, g) }

// appendPacked appends Packed(r, g) to dst.
func appendPacked(dst []int, r, g int) []int {
	for left := r; left > 0; left -= g {
		dst = append(dst, min(left, g))
	}
	return dst
}

// iterTime returns the seconds of one iteration of a job with global batch
// size batch on a placement, its compute slowed by 1/speed.
func iterTime(p Profile, placement []int, batch int, speed float64) float64 {
	atomic, accum := atomicBatch(p, placement, batch)
	step, sync := p.Throughput(placement, atomic)
	compute := (step - sync) / speed
	return compute*float64(accum+1) + sync
}

// atomicBatch returns the per-GPU batch size one forward-backward pass
// runs (within the profile's limits) and the extra passes of gradient
// accumulation an iteration needs, for global batch size batch on
// placement.
func atomicBatch(p Profile, placement []int, batch int) (atomic, accum int) {
	r := 0
	for _, g := range placement {
		r += g
	}
	local := int(math.Ceil(float64(batch)/float64(r) - 1e-8))
	accum = int(math.Ceil(float64(local)/float64(p.MaxLocalBsz())-1e-8)) - 1
	atomic = int(math.Ceil(float64(local)/float64(accum+1) - 1e-8))
	return min(max(atomic, p.MinLocalBsz()), p.MaxLocalBsz()), accum
}

// split returns the compute seconds (per GPU, gradient accumulation
// included) and the measured all-reduce seconds of one iteration of a job
// with global batch size batch on placement.
func split(p Profile, placement []int, batch int) (compute, sync float64) {
	atomic, accum := atomicBatch(p, placement, batch)
	step, sync := p.Throughput(placement, atomic)
	return (step - sync) * float64(accum+1), sync
}

// Place implements Model.
func (m *Drover) Place(j *Job, c *Cluster) {
	s := j.m.(*droverJob)
	speed := math.Inf(1)
	for _, n := range j.Alloc {
		sp := c.Nodes[n].Speed
		if sp <= 0 {
			sp = 1
		}
		speed = min(speed, sp)
	}
	s.delay = s.restart
	s.conv = m.syncOutcome(j)
	if m.Workers == nil {
		m.place = appendPlacement(m.place[:0], j.Alloc)
		s.rate = s.ref / iterTime(s.prof, m.place, s.batch, speed)
		if !(s.rate > 0) || math.IsInf(s.rate, 0) {
			s.rate = 0
		}
		return
	}
	// Per-worker model: split the packed-placement iteration into per-GPU
	// compute and the measured all-reduce of the actual placement; Refresh
	// (called by the simulator right after Place) sets the rate.
	if len(m.occ) < len(c.Nodes) {
		m.occ = append(m.occ, make([]occupancy, len(c.Nodes)-len(m.occ))...)
	}
	m.cluster = c
	m.up.size(c)
	m.sizeLoads(c)
	w := len(j.Alloc)
	ws := m.workerState(j, s, w)
	m.place = appendPlacement(m.place[:0], j.Alloc)
	ws.compute, ws.sync = split(s.prof, m.place, s.batch)
	ws.nodes = distinct(j.Alloc, ws.nodes)
	if m.Workers.Reference != nil {
		r := m.reference(j.Spec, s, w, len(ws.nodes))
		ws.compute /= r
		ws.sync /= r
	}
	if j.Spec.Arch == PS {
		ws.sync *= psOverRing(w, max(1, j.Spec.PSShards))
	}
	ws.sens = m.Workers.sensitivity(j.Spec.Model)
	ws.shares = nil // STRET tunes batch sizes once per placement
	ws.lb, ws.lbN = ws.lb[:0], 0
	if m.Workers.NewJitter != nil && ws.jitSize != w {
		// A job's jitter process lives as long as its worker count: an
		// elastic policy that resizes the job starts a new one.
		ws.jitSrc.Seed(m.Workers.Seed, uint64(j.ID)<<8|uint64(w&0xff))
		if r, ok := ws.jit.(interface{ Reset(rand.Source) }); ok && ws.spareJit == w {
			// A finished job's process of as many workers, drawn anew
			// (the same draws as a new one).
			r.Reset(&ws.jitSrc)
		} else {
			ws.jit = m.Workers.NewJitter(w, &ws.jitSrc)
		}
		ws.jitSize, ws.spareJit = w, 0
	}
	ws.hops = ringHops(j, ws.nodes, c, ws.hops)
	m.placeMitigation(j, ws)
	// The share of time the job's flows are on its NICs and uplinks, as
	// the other jobs there meet them: an iteration computes, then
	// exchanges (Sync.IterTime adds the two), so the exchange's share of
	// it, sync / (compute + sync), under BSP as under ASP and SSP; local
	// SGD exchanges once every H iterations.
	h := 1.0
	if j.Sync.Kind == LocalSGD {
		h = float64(max(j.Sync.Period, 1))
	}
	ws.duty = ws.sync / (h*ws.compute + ws.sync)
	if !(ws.duty >= 0 && ws.duty <= 1) {
		ws.duty = 1 // no time at all: count the flow in full
	}
	// A BSP job's STRET relays run during its own exchanges, so the peer's
	// exchange meets them in full (the other jobs there then count them
	// in full too, an overcount of at most the relays' share).
	ws.relayDuty = ws.duty
	if j.Sync.Kind == BSP {
		ws.relayDuty = 1
	}
	m.occupy(j, s, 1)
}

// Period implements Dynamic.
func (m *Drover) Period() float64 {
	if m.Workers == nil {
		return 0
	}
	m.Workers.defaults()
	return m.Workers.Period
}

// Refresh implements Dynamic: it recomputes the job's speed from its
// nodes' load at now.
func (m *Drover) Refresh(j *Job, c *Cluster, now float64) {
	if m.Workers == nil {
		return
	}
	m.refresh(j, j.m.(*droverJob), c, now)
}

// Release implements Dynamic.
func (m *Drover) Release(j *Job) {
	if m.Workers == nil {
		return
	}
	m.occupy(j, j.m.(*droverJob), -1)
}

// Advance implements Model.
func (m *Drover) Advance(j *Job, dt float64) (float64, bool) {
	s := j.m.(*droverJob)
	d := min(s.delay, dt)
	s.delay -= d
	used := d
	dt -= d
	if dt <= 0 || s.rate == 0 {
		return used + max(dt, 0), false
	}
	need := (s.work - s.done) / s.rate
	run := min(need, dt)
	s.trained(min(s.work-s.done, run*s.rate))
	if s.iterTime > 0 {
		it := run / s.iterTime
		j.Iterations += it
		j.StragglerIterations += it * s.withStraggler
		j.Stragglers += it * s.stragglers
		j.StragglerFree += it * s.freeIter
		j.CommDelay += it * s.commDelay
		j.ComputeDelay += it * s.computeDelay
		j.Relayed += it * s.relayed
		j.Withheld += it * s.withheld
	}
	if need <= dt {
		s.done = s.work
		j.Progress = 1
		return used + need, true
	}
	s.done += dt * s.rate
	j.Progress = s.done / s.work
	return used + dt, false
}

// convergence returns the convergence model the simulator runs: the
// per-worker model's, else DefaultConvergence.
func (m *Drover) convergence() *Convergence {
	if m.Workers != nil && m.Workers.Convergence != nil {
		return m.Workers.Convergence
	}
	return DefaultConvergence
}

// Believed returns the convergence model policies weigh strategies by on
// this model: the one it runs, at the fit's point estimates (see
// env.Believed).
func (m *Drover) Believed() *Convergence {
	c := m.convergence()
	if c.Band == converge.BandFit {
		return c
	}
	if m.believed == nil || m.believedOf != c {
		m.believed, m.believedOf = c.atFit(), c
	}
	return m.believed
}

// syncOutcome returns what j's strategy does to its convergence on its
// allocation. The job-level model (no Workers) trains every job BSP.
// Apply refuses a strategy the model has no answer for (CheckSync); one
// that still gets here trains at BSP's pace and ends having missed its
// target with no accuracy.
//
// A job placed under ASP after training only under BSP has switched
// (Sync-Switch's hybrid): from then on every ASP placement is charged
// Convergence.Switched at the progress it switched at, so that the whole
// run trains the measured switched run's iterations to the target, and
// the work done before the switch counts at the switched run's final
// accuracy.
func (m *Drover) syncOutcome(j *Job) SyncOutcome {
	sy := j.Sync
	if m.Workers == nil {
		sy = Sync{}
	}
	s := j.m.(*droverJob)
	s.bspNow = sy.Kind == BSP
	if sy.Kind == ASP {
		first := s.switchAt == 0 && !s.otherFirst && s.done > 0 && s.done < s.work
		if first {
			s.switchAt = s.done / s.work
		}
		if s.switchAt > 0 {
			if o, err := m.convergence().Switched(j.Spec.Model, len(j.Alloc), s.switchAt); err == nil {
				if first && !o.Diverged {
					s.accWork = s.done * o.Accuracy
				}
				return o
			}
		}
	}
	o, err := m.convergence().Outcome(j.Spec.Model, sy, len(j.Alloc))
	if err != nil {
		return SyncOutcome{Factor: math.Inf(1), Run: 1, Accuracy: math.NaN()}
	}
	return o
}

// CheckSync returns an error when the convergence model has no answer for
// strategy sy on a job of j's model on w workers (a strategy no
// measurement covers). Apply calls it for every placement.
func (m *Drover) CheckSync(j *Job, sy Sync, w int) error {
	if m.Workers == nil {
		return nil
	}
	return m.convergence().Check(j.Spec.Model, sy, w)
}

// trained records work (reference seconds) done under the job's current
// strategy.
func (s *droverJob) trained(work float64) {
	if !(work > 0) {
		return
	}
	if !s.bspNow && s.switchAt == 0 {
		s.otherFirst = true
	}
	if s.conv.Diverged {
		s.diverged = true
	} else {
		s.accWork += work * s.conv.Accuracy
	}
	if !s.conv.Reached {
		s.missWork += work
	}
}

// Converged returns the accuracy j ended its training with and whether
// it reached its target (see Convergence): the final accuracies of the
// strategies it trained under, weighted by the work done under each (NaN
// when one of them diverged), and reached only when every strategy it
// trained under reaches the target. It is meaningful once j is Done.
func (m *Drover) Converged(j *Job) (accuracy float64, reached bool) {
	s := j.m.(*droverJob)
	reached = s.missWork == 0
	if s.diverged || !(s.done > 0) {
		return math.NaN(), reached
	}
	return s.accWork / s.done, reached
}

// FinalMetric returns the validation metric j ends its training with: its
// profile's (see Accuracy) at its global batch size, or NaN when the
// profile has no validation curves. It follows the model and batch size
// only; what the synchronization strategy does to the accuracy is
// Converged's.
func (m *Drover) FinalMetric(j *Job) float64 {
	s := j.m.(*droverJob)
	if a, ok := s.prof.(Accuracy); ok {
		return a.FinalMetric(s.batch)
	}
	return math.NaN()
}

// Remaining implements Model.
func (m *Drover) Remaining(j *Job) float64 {
	s := j.m.(*droverJob)
	if s.rate == 0 {
		return math.Inf(1)
	}
	return s.delay + (s.work-s.done)/s.rate
}

// RemainingIterations implements Oracle.
func (m *Drover) RemainingIterations(j *Job) float64 {
	s := j.m.(*droverJob)
	return (s.work - s.done) / s.ref
}

// StepTime implements Oracle.
func (m *Drover) StepTime(j *Job, r, gpusPerNode int) float64 {
	s := j.m.(*droverJob)
	if gpusPerNode <= 0 {
		gpusPerNode = m.gpusPerNode()
	}
	// The job's global batch is fixed: more GPUs mean smaller per-GPU batches.
	return iterTime(s.prof, Packed(r, gpusPerNode), s.batch, 1)
}

// MaxReplicas implements Oracle.
func (m *Drover) MaxReplicas(j *Job) int {
	s := j.m.(*droverJob)
	return max(1, s.batch/s.prof.MinLocalBsz())
}
