package env

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// DefaultRestartDelay is the seconds a job pays on every placement, as in
// the Pollux simulator (which charges it on the first start too).
const DefaultRestartDelay = 30

// Bounds on what a simulation accepts. They keep a run's cost and its
// times sane: a replay costs time in proportion to its events, and the
// per-worker model's refreshes (one every Workers.Period while a job runs)
// are events, so an absurd duration would be an absurd run.
const (
	// MaxTime is the largest job submit time and duration, in seconds
	// (about 3.2 years): eight times the longest job and the longest span
	// of the traces Drover ships importers for (Alibaba PAI v2023: a
	// 145-day job in a 149-day trace), and far inside float64's exact
	// seconds. JobSpec values beyond it are ErrBadJob.
	MaxTime = 1e8
	// MinInterval is the shortest positive scheduling interval, in
	// seconds: every tick is a decision point, so a shorter one costs a
	// decision per MinInterval of simulated time with nothing to decide.
	// An interval of 0 (decide at every arrival and completion) is the
	// finer-grained choice.
	MinInterval = 1
	// MaxNodes is the most nodes a cluster may have (the PAI v2023 node
	// list has 1,213 GPU nodes; a million nodes take a few hundred MB).
	MaxNodes = 1 << 20
	// MaxGPUsPerNode is the most GPUs one node may have.
	MaxGPUsPerNode = 1024
)

// Config sets up a simulation run.
type Config struct {
	// Cluster is the machines to schedule on.
	Cluster Cluster
	// Model computes job progress; required.
	Model Model
	// Interval is the scheduling interval in seconds. When positive the
	// policy decides every Interval seconds (first at Interval), and jobs
	// that arrive or finish in between wait for the next tick, as in the
	// Pollux simulator. When zero the policy decides at every arrival and
	// completion.
	Interval float64
	// RestartDelay is the seconds a job spends starting up on every
	// placement before it makes progress (DefaultRestartDelay in Pollux).
	RestartDelay float64
	// Log records every arrival, start, preemption and finish when set.
	Log bool
	// LazyAdvance advances a running job only when something needs its
	// progress: its finish event, its release, a dynamics refresh, or a
	// decision point whose scheduler is not ProgressBlind. An event then
	// costs the same whatever the number of running jobs, where by default
	// every event advances every running job. The two agree up to
	// floating-point rounding (a job's progress is summed over fewer,
	// longer steps), so results differ in their last digits. Both are
	// deterministic. The zero value (eager) is the reference that the
	// tests hold lazy advance to and that drover eval and drover train
	// replay with, so that their published tables stay bit for bit; drover
	// sim advances lazily by default (--lazy-advance=false for eager). It
	// changes nothing with a positive Interval (every tick advances every
	// job).
	LazyAdvance bool
}

// Decision sets one job's allocation: the node of each worker. An empty
// Nodes takes the job's GPUs away (preemption). A decision equal to the
// job's current allocation changes nothing.
type Decision struct {
	// Job is the job's ID.
	Job int
	// Nodes is the node index of each worker.
	Nodes []int
	// Sync is the job's synchronization strategy on this allocation (the
	// zero value is BSP). Changing it restarts the job.
	Sync Sync
	// PSRebalance asks the runtime to move parameter-server load away
	// from straggling servers (a PS job under the per-worker model: each
	// server's share of the parameters follows its speed). It is set with
	// the placement.
	PSRebalance bool
}

// View is what a policy sees at a decision point. It and everything it
// points to belong to the simulator and are read-only; they are valid until
// the next call to Sim.Apply.
type View struct {
	// Now is the simulated time in seconds.
	Now float64
	// Cluster is the cluster being scheduled.
	Cluster *Cluster
	// Free is the number of free GPUs on each node.
	Free []int
	// Active lists the submitted, unfinished jobs in arrival order.
	Active []*Job
	// Model is the run's throughput model (policies may type-assert it to
	// Oracle).
	Model Model
	// Seq numbers the decision points of one Sim's run: 1, 2, ... A View
	// with Seq 0 (one not made by Sim.Next) has no change lists.
	Seq int
	// Changed lists the jobs whose State changed since decision point
	// Seq-1 (arrived, started, preempted, finished), in the order of the
	// changes, with repeats; Touched lists the nodes whose Free changed
	// since then, with repeats. With them a policy can keep its own
	// indexes of the queue and the free GPUs up to date at a cost that
	// does not grow with the cluster or the queue, provided it saw
	// decision point Seq-1 of the same View (the simulator reuses one View
	// value for its whole run); otherwise it must rebuild them.
	Changed []*Job
	Touched []int
	// Done, when not nil, is closed when the caller no longer wants the
	// decisions (a served request whose deadline passed or whose client
	// went away). A scheduler's long loops poll it (Cancelled) and return
	// ErrCancelled, deciding nothing. It is a signal passed in, not a
	// clock: the decisions of a View whose Done stays open do not depend
	// on it. The simulator leaves it nil.
	Done <-chan struct{}
}

// Cancelled reports whether v's Done channel is closed. It costs a
// channel poll: loops call it once per job or per pass over the nodes.
func (v *View) Cancelled() bool {
	return Closed(v.Done)
}

// Closed reports whether done is closed (false for a nil channel), for
// the schedulers that keep View.Done for their inner loops.
func Closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// ProgressBlind is an optional ability of a Scheduler. A scheduler whose
// ProgressBlind returns true reads nothing that advancing a running job
// changes (its Progress, Attained, Held, iteration and straggler counts,
// or a model's Oracle answers about it), so that under Config.LazyAdvance
// the simulator need not bring the running jobs up to date before asking
// it.
type ProgressBlind interface {
	ProgressBlind() bool
}

// Scheduler decides allocations at each decision point.
type Scheduler interface {
	// Schedule returns the allocation changes to make now.
	Schedule(v *View) ([]Decision, error)
}

// Sim is a discrete-event simulation of one cluster replaying one
// workload. It is a pure, deterministic state machine: no goroutines, no
// clock, no I/O; time advances only through Next. It is not safe for
// concurrent use.
type Sim struct {
	cfg     Config
	model   Model
	dynamic Dynamic // the model, when it is Dynamic with a positive period
	retirer retirer // the model, when it frees finished jobs' state
	period  float64
	nextDyn float64 // the next refresh time
	jobs    []Job
	free    []int
	total   int

	now      float64
	next     int    // index of the next job to arrive
	active   []*Job // arrived, unfinished, in arrival order
	running  []*Job // the Running jobs, in order of placement (swap-removed)
	finished []int  // IDs of the jobs finished since active was last compacted
	done     int
	finishes finishHeap
	events   []Event
	view     View
	lastTick float64
	idle     bool // the last decision point had nothing to run and placed nothing
	decided  int  // decision points so far
	changed  bool // the last Apply changed an allocation
	nevents  int  // arrivals, starts, preemptions and finishes so far

	// The change lists of the View (View.Changed, View.Touched): filled
	// from the last handed-out View on, emptied when the next change
	// comes after it was handed out.
	chJobs   []*Job
	chNodes  []int
	handed   bool  // the lists were handed out in a View
	need     []int // Apply's GPUs wanted per node (zero between calls)
	needAt   []int // the nodes need is non-zero on
	applyGen int   // Apply's call count, marks the jobs it has seen
}

// New builds a simulation of specs (any order; they are replayed by Submit,
// ties in the given order) on cfg.Cluster.
func New(cfg Config, specs []JobSpec) (*Sim, error) {
	if cfg.Model == nil {
		return nil, fmt.Errorf("env: config: no model")
	}
	if err := cfg.Cluster.validate(); err != nil {
		return nil, err
	}
	if !(cfg.Interval == 0 || cfg.Interval >= MinInterval) || math.IsInf(cfg.Interval, 0) {
		return nil, fmt.Errorf("env: config: interval = %v s, want 0 (event-driven) or a finite interval >= %v s", cfg.Interval, float64(MinInterval))
	}
	if cfg.RestartDelay < 0 || math.IsNaN(cfg.RestartDelay) || math.IsInf(cfg.RestartDelay, 0) {
		return nil, fmt.Errorf("env: config: restart delay = %v, want >= 0", cfg.RestartDelay)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: empty workload", ErrBadJob)
	}
	s := &Sim{cfg: cfg, model: cfg.Model, total: cfg.Cluster.TotalGPUs()}
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case specs[a].Submit < specs[b].Submit:
			return -1
		case specs[a].Submit > specs[b].Submit:
			return 1
		}
		return 0
	})
	s.jobs = make([]Job, len(specs))
	meta := &Meta{RestartDelay: cfg.RestartDelay}
	names := make(map[string]struct{}, len(specs))
	for id, k := range order {
		sp := specs[k]
		if err := sp.validate(); err != nil {
			return nil, err
		}
		if _, dup := names[sp.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate job name %q", ErrBadJob, sp.Name)
		}
		names[sp.Name] = struct{}{}
		if sp.GPUs > s.total {
			return nil, fmt.Errorf("%w: job %s asks for %d GPUs, the cluster has %d", ErrBadJob, sp.Name, sp.GPUs, s.total)
		}
		j := &s.jobs[id]
		*j = Job{ID: id, Spec: sp, FirstStart: math.NaN(), Finish: math.NaN(), heapIdx: -1}
		if err := s.model.Admit(j, meta); err != nil {
			return nil, fmt.Errorf("%w: job %s: %w", ErrBadJob, sp.Name, err)
		}
	}
	s.free = make([]int, len(cfg.Cluster.Nodes))
	s.need = make([]int, len(cfg.Cluster.Nodes))
	for i, n := range cfg.Cluster.Nodes {
		s.free[i] = n.GPUs
	}
	s.view = View{Cluster: &s.cfg.Cluster, Free: s.free, Model: s.model}
	s.retirer, _ = s.model.(retirer)
	if d, ok := s.model.(Dynamic); ok && d.Period() > 0 {
		s.dynamic, s.period, s.nextDyn = d, d.Period(), d.Period()
	}
	return s, nil
}

// Now returns the simulated time in seconds.
func (s *Sim) Now() float64 { return s.now }

// Jobs returns every job of the workload, in arrival order (index = ID).
// The slice belongs to the simulator.
func (s *Sim) Jobs() []Job { return s.jobs }

// Events returns the event log (empty unless Config.Log is set).
func (s *Sim) Events() []Event { return s.events }

// EventCount returns the number of arrivals, starts, preemptions and
// finishes simulated so far, logged or not.
func (s *Sim) EventCount() int { return s.nevents }

// DecisionPoints returns the number of times the policy was consulted.
func (s *Sim) DecisionPoints() int { return s.decided }

// Finished returns the number of jobs that have finished.
func (s *Sim) Finished() int { return s.done }

// Next advances the simulation to the next decision point and returns what
// the policy sees there. It returns ErrDone once every job has finished and
// ErrStalled when the run cannot finish.
func (s *Sim) Next() (*View, error) {
	if s.done == len(s.jobs) {
		return nil, ErrDone
	}
	if s.idle && len(s.running) == 0 && s.next == len(s.jobs) && !s.changed {
		return nil, fmt.Errorf("%w at t=%.0f s: %d jobs wait, none runs and the policy placed none", ErrStalled, s.now, len(s.active))
	}
	s.unhand()
	var err error
	if s.cfg.Interval > 0 {
		err = s.tick()
	} else {
		err = s.event()
	}
	if err != nil {
		return nil, err
	}
	s.idle = len(s.running) == 0
	s.changed = false
	s.decided++
	s.compact()
	s.view.Now = s.now
	s.view.Active = s.active
	s.view.Seq = s.decided
	s.view.Changed, s.view.Touched = s.chJobs, s.chNodes
	s.handed = true
	if s.done == len(s.jobs) {
		return nil, ErrDone
	}
	return &s.view, nil
}

// tick advances to the next scheduling tick.
func (s *Sim) tick() error {
	iv := s.cfg.Interval
	t := s.lastTick + iv
	if len(s.running) == 0 && len(s.active) == 0 && s.next < len(s.jobs) {
		// Nothing to do until the next arrival: skip the empty ticks.
		if k := math.Ceil(s.jobs[s.next].Spec.Submit / iv); k*iv > t {
			t = k * iv
		}
	}
	s.refreshUntil(t)
	s.advanceAll(t)
	s.now, s.lastTick = t, t
	s.arrive(t)
	return nil
}

// refreshUntil runs every dynamics refresh due at or before t: it brings
// the running jobs up to the refresh time and lets the model recompute
// their speeds, rescheduling their finish events.
func (s *Sim) refreshUntil(t float64) {
	if s.dynamic == nil {
		return
	}
	for s.nextDyn <= t {
		if len(s.running) == 0 {
			// Nothing to refresh: skip the empty refreshes up to t, so
			// that idle simulated time costs nothing.
			s.skipRefreshes(t)
			return
		}
		at := s.nextDyn
		s.advanceAll(at)
		pf, _ := s.dynamic.(prefetcher)
		for k := 0; k < len(s.running); k += prefetchJobs {
			batch := s.running[k:min(k+prefetchJobs, len(s.running))]
			if pf != nil {
				pf.prefetch(batch, at)
			}
			for _, j := range batch {
				s.dynamic.Refresh(j, &s.cfg.Cluster, at)
				if s.cfg.Interval == 0 {
					// Every running job's finish moves: re-key them
					// all, then order the heap once (its pop order is
					// fixed by the keys alone, time then ID).
					s.finishes[j.heapIdx].at = at + s.model.Remaining(j)
				}
			}
		}
		s.finishes.init()
		s.nextDyn += s.period
	}
}

// skipRefreshes moves the next refresh to the first refresh time after t
// without running the ones on the way (no job runs). The refresh times
// stay the multiples of the period that stepping one by one would reach.
func (s *Sim) skipRefreshes(t float64) {
	s.nextDyn = nextRefresh(s.nextDyn, s.period, t)
}

// nextRefresh returns the first of next, next+period, next+2*period, ...
// after t, in one step for a long gap.
func nextRefresh(next, period, t float64) float64 {
	if next > t {
		return next
	}
	next += math.Floor((t-next)/period) * period
	for next <= t {
		next += period
	}
	return next
}

// reschedule moves j's finish event (event-driven runs only) to its
// remaining time from at.
func (s *Sim) reschedule(j *Job, at float64) {
	if s.cfg.Interval != 0 {
		return
	}
	s.schedule(j, at+s.model.Remaining(j))
}

// event advances to the next arrival or completion, running the dynamics
// refreshes on the way.
func (s *Sim) event() error {
	t := s.nextEventTime()
	for idle := 0; s.dynamic != nil && t >= s.nextDyn; idle++ {
		if math.IsInf(t, 1) && (len(s.running) == 0 || idle > maxIdleRefreshes) {
			break // nothing can happen: stalled
		}
		if len(s.running) == 0 {
			s.skipRefreshes(t) // nothing runs until the arrival at t
			break
		}
		s.refreshUntil(s.nextDyn)
		t = s.nextEventTime()
	}
	if math.IsInf(t, 1) {
		if s.done == len(s.jobs) {
			// The last jobs finished during the refreshes above (at a
			// refresh boundary): nothing is left, which is not a stall.
			return nil
		}
		return fmt.Errorf("%w at t=%.0f s: %d jobs wait and nothing runs", ErrStalled, s.now, len(s.active))
	}
	// Finish the jobs due now, then bring the others up to date.
	for len(s.finishes) > 0 && s.finishes[0].at <= t {
		s.complete(s.finishes[0].j)
	}
	s.now = t
	if !s.cfg.LazyAdvance {
		s.advanceAll(t)
	}
	s.arrive(t)
	return nil
}

// advanceAll brings every running job up to time t. Jobs that finish on
// the way leave the running list.
func (s *Sim) advanceAll(t float64) {
	pf, _ := s.model.(prefetcher)
	ahead := 0 // the jobs before it are prefetched
	for i := 0; i < len(s.running); {
		if pf != nil && i >= ahead {
			ahead = min(i+prefetchJobs, len(s.running))
			pf.prefetchAdvance(s.running[i:ahead])
		}
		j := s.running[i]
		s.advance(j, t)
		if j.State == Running {
			i++
		} // else finish swapped another job into slot i
	}
}

// maxIdleRefreshes bounds the dynamics refreshes in a row during which no
// running job can finish (every speed is zero) before the run is declared
// stalled.
const maxIdleRefreshes = 100000

// nextEventTime returns the time of the next arrival or live finish event.
func (s *Sim) nextEventTime() float64 {
	t := math.Inf(1)
	if s.next < len(s.jobs) {
		t = s.jobs[s.next].Spec.Submit
	}
	if len(s.finishes) > 0 {
		t = min(t, s.finishes[0].at)
	}
	return t
}

// advance runs j from where the model left it up to time t.
func (s *Sim) advance(j *Job, t float64) {
	dt := t - j.last
	if dt <= 0 {
		return
	}
	used, done := s.model.Advance(j, dt)
	j.Held += used
	j.Attained += used * float64(len(j.Alloc))
	j.last += used
	if done {
		s.finish(j, j.last)
	} else {
		j.last = t
	}
}

// complete runs j to its end (its finish event is due).
func (s *Sim) complete(j *Job) {
	// Give the model a little slack: the scheduled time came from Remaining,
	// and rounding inside the model must not leave the job a hair short.
	used, done := s.model.Advance(j, s.model.Remaining(j)+1)
	if !done {
		panic(fmt.Sprintf("env: model %s did not finish job %s within its remaining time", s.model.Name(), j.Spec.Name))
	}
	j.Held += used
	j.Attained += used * float64(len(j.Alloc))
	j.last += used
	s.finish(j, j.last)
}

func (s *Sim) finish(j *Job, at float64) {
	j.Finish = at
	j.Progress = 1
	s.release(j)
	j.State = Done
	if s.retirer != nil {
		s.retirer.retire(j)
	}
	s.done++
	s.finished = append(s.finished, j.ID)
	s.chJobs = append(s.chJobs, j)
	s.nevents++
	if s.cfg.Log {
		s.events = append(s.events, Event{Time: at, Kind: Finish, Job: j.ID})
	}
}

func (s *Sim) arrive(t float64) {
	for s.next < len(s.jobs) && s.jobs[s.next].Spec.Submit <= t {
		j := &s.jobs[s.next]
		j.State = Pending
		s.active = append(s.active, j)
		s.chJobs = append(s.chJobs, j)
		s.nevents++
		if s.cfg.Log {
			s.events = append(s.events, Event{Time: j.Spec.Submit, Kind: Arrive, Job: j.ID})
		}
		s.next++
	}
}

// compact drops finished jobs from the active list (when any finished).
// The list is in arrival order, which is ID order, so each finished job is
// found by binary search and the survivors move in blocks: the cost does
// not grow with the number of waiting jobs it leaves untouched.
func (s *Sim) compact() {
	if len(s.finished) == 0 {
		return
	}
	slices.Sort(s.finished)
	at := s.finished[:0] // positions in active, ascending (IDs are unique)
	for _, id := range s.finished {
		i, ok := slices.BinarySearchFunc(s.active, id, func(j *Job, id int) int { return cmp.Compare(j.ID, id) })
		if ok {
			at = append(at, i)
		}
	}
	k := 0
	if len(at) > 0 {
		k = at[0]
	}
	for n, i := range at {
		end := len(s.active)
		if n+1 < len(at) {
			end = at[n+1]
		}
		k += copy(s.active[k:], s.active[i+1:end])
	}
	if len(at) > 0 {
		clear(s.active[k:])
		s.active = s.active[:k]
	}
	s.finished = s.finished[:0]
}

func (s *Sim) release(j *Job) {
	if j.State != Running {
		return
	}
	for _, n := range j.Alloc {
		s.free[n]++
	}
	s.chNodes = append(s.chNodes, j.Alloc...)
	s.chJobs = append(s.chJobs, j)
	if s.dynamic != nil {
		s.dynamic.Release(j)
	}
	s.unschedule(j)
	j.Alloc = nil
	j.State = Pending
	last := len(s.running) - 1
	s.running[j.slot] = s.running[last]
	s.running[j.slot].slot = j.slot
	s.running[last] = nil
	s.running = s.running[:last]
}

// Apply carries out a policy's decisions. Decisions are checked first and
// applied all at once (every release before any placement), so a policy
// may move GPUs from one job to another in one call. On error nothing is
// changed.
func (s *Sim) Apply(ds []Decision) error {
	if len(ds) == 0 {
		return nil
	}
	s.unhand()
	// Check: jobs exist, are active, appear once, and the new allocations
	// fit. s.need counts the GPUs wanted per node (on s.needAt) and is
	// zero again when Apply returns; a job's applied mark says this call
	// has seen it.
	s.applyGen++
	defer s.clearNeed()
	var change []int
	for i, d := range ds {
		if d.Job < 0 || d.Job >= len(s.jobs) {
			return fmt.Errorf("%w: decision %d: unknown job id %d", ErrBadDecision, i, d.Job)
		}
		j := &s.jobs[d.Job]
		if j.State != Pending && j.State != Running {
			return fmt.Errorf("%w: decision %d: job %s is %s", ErrBadDecision, i, j.Spec.Name, j.State)
		}
		if j.applied == s.applyGen {
			return fmt.Errorf("%w: decision %d: job %s decided twice", ErrBadDecision, i, j.Spec.Name)
		}
		j.applied = s.applyGen
		if slices.Equal(d.Nodes, j.Alloc) && (len(d.Nodes) == 0 || d.Sync == j.Sync) {
			continue
		}
		if sc, ok := s.model.(syncChecker); ok && len(d.Nodes) > 0 {
			if err := sc.CheckSync(j, d.Sync, len(d.Nodes)); err != nil {
				return fmt.Errorf("%w: decision %d: job %s: %w", ErrBadDecision, i, j.Spec.Name, err)
			}
		}
		for _, n := range d.Nodes {
			if n < 0 || n >= len(s.free) {
				return fmt.Errorf("%w: decision %d: job %s: unknown node %d", ErrBadDecision, i, j.Spec.Name, n)
			}
			s.addNeed(n, 1)
		}
		for _, n := range j.Alloc {
			s.addNeed(n, -1)
		}
		change = append(change, i)
	}
	for _, n := range s.needAt {
		if k := s.need[n]; k > s.free[n] {
			return fmt.Errorf("%w: node %d (%s) over-committed: %d more GPUs wanted, %d free", ErrBadDecision, n, s.cfg.Cluster.Nodes[n].Name, k, s.free[n])
		}
	}
	for _, i := range change {
		j := &s.jobs[ds[i].Job]
		if j.State == Running {
			// Up to date already unless LazyAdvance left it behind.
			if s.advance(j, s.now); j.State == Done {
				continue
			}
			s.release(j)
			if len(ds[i].Nodes) == 0 {
				j.Preemptions++
				s.nevents++
				if s.cfg.Log {
					s.events = append(s.events, Event{Time: s.now, Kind: Preempt, Job: j.ID})
				}
			}
		}
	}
	for _, i := range change {
		d := ds[i]
		if len(d.Nodes) == 0 {
			continue
		}
		j := &s.jobs[d.Job]
		if j.State == Done {
			continue // finished on its way to now (LazyAdvance's rounding)
		}
		j.Alloc = slices.Clone(d.Nodes)
		j.MaxNodes = max(j.MaxNodes, distinctCount(j.Alloc))
		j.Sync = d.Sync
		j.PSRebalance = d.PSRebalance
		for _, n := range d.Nodes {
			s.free[n]--
		}
		s.chNodes = append(s.chNodes, j.Alloc...)
		s.chJobs = append(s.chJobs, j)
		j.State = Running
		j.Starts++
		j.last, j.placed = s.now, s.now
		if j.Starts == 1 {
			j.FirstStart = s.now
		}
		j.slot = len(s.running)
		s.running = append(s.running, j)
		s.nevents++
		s.model.Place(j, &s.cfg.Cluster)
		if s.dynamic != nil {
			s.dynamic.Refresh(j, &s.cfg.Cluster, s.now)
		}
		s.reschedule(j, s.now)
		if s.cfg.Log {
			s.events = append(s.events, Event{Time: s.now, Kind: Start, Job: j.ID, Nodes: j.Alloc})
		}
	}
	s.changed = len(change) > 0
	return nil
}

// addNeed adds k to the GPUs Apply wants on node n.
func (s *Sim) addNeed(n, k int) {
	if s.need[n] == 0 {
		s.needAt = append(s.needAt, n)
	}
	s.need[n] += k
}

// clearNeed zeroes Apply's per-node counts.
func (s *Sim) clearNeed() {
	for _, n := range s.needAt {
		s.need[n] = 0
	}
	s.needAt = s.needAt[:0]
}

// unhand empties the change lists if they were handed out in a View: the
// changes from now on are the next View's.
func (s *Sim) unhand() {
	if s.handed {
		clear(s.chJobs)
		s.chJobs, s.chNodes = s.chJobs[:0], s.chNodes[:0]
		s.handed = false
	}
}

// Run drives the simulation to the end with policy p. If progress is not
// nil it is called after every decision point with the number of finished
// jobs and the total.
func (s *Sim) Run(p Scheduler, progress func(done, total int)) error {
	pb, _ := p.(ProgressBlind)
	blind := pb != nil && pb.ProgressBlind()
	lazy := s.cfg.LazyAdvance && s.cfg.Interval == 0
	for {
		v, err := s.Next()
		if err == ErrDone {
			if progress != nil {
				progress(s.done, len(s.jobs))
			}
			return nil
		}
		if err != nil {
			return err
		}
		if lazy && !blind {
			s.advanceAll(s.now)
		}
		ds, err := p.Schedule(v)
		if err != nil {
			return fmt.Errorf("env: policy at t=%.0f s: %w", s.now, err)
		}
		if err := s.Apply(ds); err != nil {
			return fmt.Errorf("at t=%.0f s: %w", s.now, err)
		}
		if progress != nil {
			progress(s.done, len(s.jobs))
		}
	}
}

// finishHeap holds each running job's finish time, ordered by time, then
// job ID, so that ties resolve the same way in every run. Each job has at
// most one entry; Job.heapIdx says where (-1: none). An entry carries its
// key, so that sifting compares without reaching into the jobs.
type finishHeap []finishEntry

// finishEntry is one job's finish event.
type finishEntry struct {
	at float64 // the finish time
	id int     // the job's ID, the tie-break
	j  *Job
}

func (e *finishEntry) before(f *finishEntry) bool {
	return e.at < f.at || (e.at == f.at && e.id < f.id)
}

// up sifts entry i towards the root.
func (h finishHeap) up(i int) {
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		h[i].j.heapIdx = i
		i = p
	}
	h[i] = e
	e.j.heapIdx = i
}

// down sifts entry i towards the leaves and reports whether it moved.
func (h finishHeap) down(i int) bool {
	e, start, n := h[i], i, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].before(&h[c]) {
			c = r
		}
		if !h[c].before(&e) {
			break
		}
		h[i] = h[c]
		h[i].j.heapIdx = i
		i = c
	}
	h[i] = e
	e.j.heapIdx = i
	return i > start
}

// fix restores the order after entry i's key changed.
func (h finishHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// init orders the whole heap (after many keys changed at once).
func (h finishHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// schedule sets j's finish event to at, adding or moving its heap entry.
func (s *Sim) schedule(j *Job, at float64) {
	if i := j.heapIdx; i >= 0 {
		s.finishes[i].at = at
		s.finishes.fix(i)
		return
	}
	s.finishes = append(s.finishes, finishEntry{at: at, id: j.ID, j: j})
	s.finishes.up(len(s.finishes) - 1)
}

// unschedule removes j's finish event, if any.
func (s *Sim) unschedule(j *Job) {
	i := j.heapIdx
	if i < 0 {
		return
	}
	h := s.finishes
	last := len(h) - 1
	j.heapIdx = -1
	if i != last {
		h[i] = h[last]
		h[i].j.heapIdx = i
	}
	h[last] = finishEntry{}
	s.finishes = h[:last]
	if i != last {
		s.finishes.fix(i)
	}
}
