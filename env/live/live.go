package live

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/sched"
)

// Source gives the environment snapshots of a live cluster. Snapshot
// fills dst with the cluster's state now (see State for what each field
// means and who owns it). The environment calls it at Reset and whenever
// every job of the previous snapshot that fitted has been decided, so an
// adapter over a live system may block in Snapshot until its state has
// changed. An error ends the episode (Env.Err reports it).
type Source interface {
	Snapshot(dst *State) error
}

// Rewinder is implemented by sources that can start their timeline over,
// such as a replayed recording or a simulated cluster: Reset(seed) calls
// Rewind(seed) before its first snapshot and starts the encoder afresh,
// so that the same seed and actions give the same episode. A live source
// does not implement it: its episodes follow one another on one timeline,
// and the encoder's per-node history carries over between them.
type Rewinder interface {
	Rewind(seed uint64) error
}

// Decision is what the environment asks the cluster to do with one
// pending job: start it on Nodes under Sync.
type Decision struct {
	// Job is the job's id, the Name of its State.Pending entry.
	Job string
	// Nodes is the node of each worker, one entry per GPU the job asked
	// for; the workers of one node are consecutive and the nodes are in
	// ring order (by rack, then index). The slice belongs to the
	// Actuator.
	Nodes []int
	// Sync is the job's synchronization strategy (the zero value, BSP,
	// for a one-GPU job).
	Sync env.Sync
	// PSRebalance asks the runtime to move a parameter-server job's
	// server load away from slow servers (sched.Config.PSRebalance, set by
	// SAS-RL).
	PSRebalance bool
}

// Actuator carries decisions to the cluster. Apply starts d's job as it
// says, or returns an error when the cluster refuses; the environment
// then ends the episode truncated and Env.Err reports the error. Apply
// may return before the job has started: the environment counts the job
// as running from the decision on, as the simulator does.
type Actuator interface {
	Apply(d Decision) error
}

// Config sets up the environment.
type Config struct {
	// Encoder configures the observation and the joint action, as for
	// sched.Env: the settings a checkpoint was trained with
	// (direct.ConfigOf) give its observation and action spaces.
	Encoder sched.Config
	// WaitWeight weights the pending jobs' time against the running
	// jobs' in the reward, as sched.EnvConfig.WaitWeight (0: only the
	// running jobs' time).
	WaitWeight float64
	// Horizon, when positive, truncates an episode at the first snapshot
	// Horizon seconds or more after the episode's first (source time).
	Horizon float64
	// MaxIdle is the most consecutive snapshots with nothing to decide (no
	// pending job fits the free GPUs) that one Reset or Step takes before
	// it ends the episode truncated (0: DefaultMaxIdle). The simulated env
	// moves on to the next decision point at such a snapshot; a live
	// source that answers at once should keep this small.
	MaxIdle int
}

// DefaultMaxIdle is the default of Config.MaxIdle.
const DefaultMaxIdle = 8

// Env is the scheduling environment of the direct learned policies over a
// live cluster: sched.Env's observation and action spaces, masks and
// reward, on snapshots from a Source, with decisions carried out by an
// Actuator. One step decides one pending job, in order of submission
// with backfilling; a snapshot is taken at Reset and whenever the
// previous one has no job left that fits. The episode terminates at a
// snapshot with no pending job, and is truncated at the Horizon, after
// MaxIdle snapshots with nothing to decide, or on an error of the
// Source, the Actuator or a snapshot (see Err). Env reads no clock and no
// random source; time is the source's Now. It is not safe for concurrent
// use.
type Env struct {
	cfg Config
	src Source
	act Actuator

	enc     *sched.Encoder
	cluster env.Cluster // the encoder's copy of the cluster
	state   State       // the latest snapshot, as the source wrote it
	jobs    []env.Job   // the view's jobs
	tel     telemetry
	view    env.View
	have    bool    // view holds a snapshot of this episode
	fresh   bool    // nothing has been decided at this snapshot yet
	timed   bool    // last is the previous snapshot's time on this timeline
	last    float64 // the previous snapshot's Now
	start   float64 // the episode's first snapshot's Now
	job     *env.Job
	cursor  int // next job of view.Active to consider
	left    int // free GPUs left at this snapshot
	area    float64
	prev    float64 // area at the last reward
	done    bool
	reset   bool // Reset has been called
	err     error
	mask    []bool
}

var (
	_ gym.Env         = (*Env)(nil)
	_ gym.Masker      = (*Env)(nil)
	_ gym.StepperInto = (*Env)(nil)
)

// New validates cfg and returns the environment over src and act. It
// takes no snapshot: Reset does.
func New(cfg Config, src Source, act Actuator) (*Env, error) {
	if src == nil || act == nil {
		return nil, errors.New("live: New needs a source and an actuator")
	}
	enc, err := cfg.Encoder.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	cfg.Encoder = enc
	switch {
	case !finite(cfg.WaitWeight) || cfg.WaitWeight < 0:
		return nil, fmt.Errorf("live: wait weight = %v, want a finite value >= 0", cfg.WaitWeight)
	case !finite(cfg.Horizon) || cfg.Horizon < 0:
		return nil, fmt.Errorf("live: horizon = %v s, want a finite time >= 0", cfg.Horizon)
	case cfg.MaxIdle < 0:
		return nil, fmt.Errorf("live: max idle = %d snapshots, want >= 0", cfg.MaxIdle)
	}
	if cfg.MaxIdle == 0 {
		cfg.MaxIdle = DefaultMaxIdle
	}
	return &Env{cfg: cfg, src: src, act: act}, nil
}

// Config returns the environment's settings, defaults filled in.
func (e *Env) Config() Config { return e.cfg }

// ObservationSpace implements gym.Env: sched.Env's, unbounded reals of
// sched.ObsDim(Groups, len(Syncs)) coordinates.
func (e *Env) ObservationSpace() gym.Box {
	n := sched.ObsDim(e.cfg.Encoder.Groups, len(e.cfg.Encoder.Syncs))
	lo, hi := make([]float64, n), make([]float64, n)
	for i := range hi {
		lo[i], hi[i] = math.Inf(-1), math.Inf(1)
	}
	return gym.Box{Low: lo, High: hi}
}

// ActionSpace implements gym.Env: sched.Env's joint action (Groups+1
// slots x Syncs, plus hold when Config.Hold).
func (e *Env) ActionSpace() gym.Discrete { return gym.Discrete{N: e.cfg.Encoder.Actions()} }

// Reset implements gym.Env: it rewinds the source to seed when it is a
// Rewinder (and starts the encoder afresh), takes snapshots until one has
// a pending job that fits, and returns that job's observation. When none
// does (a snapshot with no pending job, MaxIdle snapshots with nothing
// that fits, or an error, which Err reports), it returns the zero
// observation, Job returns nil and the episode is over: Step panics until
// the next Reset. Reset may be called at any time.
func (e *Env) Reset(seed uint64) ([]float64, gym.Info) {
	e.reset, e.err, e.done, e.job, e.have = true, nil, false, nil, false
	e.area, e.prev = 0, 0
	if r, ok := e.src.(Rewinder); ok {
		e.enc, e.timed = nil, false
		if err := r.Rewind(seed); err != nil {
			e.err, e.done = fmt.Errorf("live: rewind: %w", err), true
			return e.observe(nil), nil
		}
	}
	term, trunc := e.advance()
	e.done = term || trunc
	return e.observe(nil), nil
}

// advance moves to the next job to decide (e.job), taking snapshots as
// needed, and reports whether the episode terminated or was truncated
// on the way.
func (e *Env) advance() (terminated, truncated bool) {
	idle := 0
	for {
		if e.have {
			for e.cursor < len(e.view.Active) && e.left > 0 {
				j := e.view.Active[e.cursor]
				e.cursor++
				if j.State == env.Pending && j.Spec.GPUs <= e.left {
					e.job, e.fresh = j, false
					return false, false
				}
			}
			if e.fresh {
				if idle++; idle > e.cfg.MaxIdle {
					return false, true
				}
			}
		}
		rate, t0 := 0.0, e.view.Now
		if e.have {
			rate = sched.CostRate(e.view.Active, e.cfg.WaitWeight)
		}
		if err := e.snapshot(); err != nil {
			e.err = err
			return false, true
		}
		if e.have {
			e.area += rate * (e.view.Now - t0)
		} else {
			e.start = e.view.Now
		}
		e.have = true
		if len(e.state.Pending) == 0 {
			return true, false
		}
		if e.cfg.Horizon > 0 && e.view.Now-e.start >= e.cfg.Horizon {
			return false, true
		}
		e.enc.Begin(&e.view)
		e.cursor, e.left, e.fresh = 0, 0, true
		for _, f := range e.view.Free {
			e.left += f
		}
	}
}

// snapshot takes a snapshot from the source, checks it, and builds the
// view (and the encoder, when there is none or the cluster changed).
func (e *Env) snapshot() error {
	s := &e.state
	if err := e.src.Snapshot(s); err != nil {
		return fmt.Errorf("live: snapshot: %w", err)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if e.timed && s.Now < e.last {
		return fmt.Errorf("%w: now = %v s, before the previous snapshot's %v s", ErrBadState, s.Now, e.last)
	}
	e.last, e.timed = s.Now, true
	if e.enc == nil || !sameCluster(&e.cluster, &s.Cluster) {
		e.cluster = env.Cluster{Nodes: slices.Clone(s.Cluster.Nodes), IntraRackGbps: s.Cluster.IntraRackGbps, CrossRackGbps: s.Cluster.CrossRackGbps}
		enc, err := sched.NewEncoder(e.cfg.Encoder, &e.cluster)
		if err != nil {
			return fmt.Errorf("live: %w", err)
		}
		e.enc = enc
	}
	e.jobs = e.jobs[:0]
	for i := range s.Running {
		r := &s.Running[i]
		e.jobs = append(e.jobs, env.Job{Spec: r.Spec, State: env.Running, Alloc: r.Nodes, FirstStart: r.Start, Finish: math.NaN(), Starts: 1})
	}
	for i := range s.Pending {
		e.jobs = append(e.jobs, env.Job{Spec: s.Pending[i], State: env.Pending, FirstStart: math.NaN(), Finish: math.NaN()})
	}
	slices.SortStableFunc(e.jobs, func(a, b env.Job) int { return cmp.Compare(a.Spec.Submit, b.Spec.Submit) })
	active := e.view.Active[:0]
	for i := range e.jobs {
		e.jobs[i].ID = i
		active = append(active, &e.jobs[i])
	}
	e.tel.load = s.Load
	e.view = env.View{Now: s.Now, Cluster: &e.cluster, Free: append(e.view.Free[:0], s.Free...), Active: active, Model: &e.tel}
	return nil
}

// sameCluster reports whether a and b describe the same cluster.
func sameCluster(a, b *env.Cluster) bool {
	return a.IntraRackGbps == b.IntraRackGbps && a.CrossRackGbps == b.CrossRackGbps && slices.Equal(a.Nodes, b.Nodes)
}

// ActionMask implements gym.Masker: the Encoder's mask for the job being
// decided (all false when there is none).
func (e *Env) ActionMask(dst []bool) []bool {
	if e.job == nil {
		n := e.cfg.Encoder.Actions()
		return append(dst[:0], make([]bool, n)...)
	}
	return e.enc.Mask(dst, &e.view, e.job)
}

// Step implements gym.Env.
func (e *Env) Step(action int) ([]float64, float64, bool, bool, gym.Info) {
	return e.StepInto(nil, action)
}

// StepInto implements gym.StepperInto: it decodes the action for the job
// being decided, hands the decision to the Actuator (nothing for hold,
// which leaves the job pending until the next snapshot), and moves to the
// next job, taking snapshots as needed. The reward is minus the time
// elapsed between snapshots (source time, in hours) times the jobs
// running over it (plus WaitWeight times the pending ones), counted when
// the new snapshot is taken, as sched.Env counts it; it is 0 when no
// snapshot was taken. It panics on an action the mask rules out, before
// the first Reset, and (with gym.ErrStepAfterEnd) after the episode's
// end.
func (e *Env) StepInto(dst []float64, action int) ([]float64, float64, bool, bool, gym.Info) {
	if !e.reset {
		panic("live: Step before Reset")
	}
	if e.done || e.job == nil {
		panic(gym.ErrStepAfterEnd)
	}
	j := e.job
	e.mask = e.enc.Mask(e.mask, &e.view, j)
	if action < 0 || action >= len(e.mask) || !e.mask[action] {
		panic(fmt.Sprintf("live: action %d is not valid for job %s", action, j.Spec.Name))
	}
	d, hold := e.enc.Decode(&e.view, j, action)
	if !hold {
		if err := e.act.Apply(Decision{Job: j.Spec.Name, Nodes: slices.Clone(d.Nodes), Sync: d.Sync, PSRebalance: d.PSRebalance}); err != nil {
			e.err, e.done, e.job = fmt.Errorf("live: apply job %s: %w", j.Spec.Name, err), true, nil
			return e.observe(dst), 0, false, true, nil
		}
		e.enc.Commit(d)
		// The view follows the decision as the simulator's does: the job
		// runs and holds its GPUs.
		j.State, j.Alloc, j.Sync, j.PSRebalance, j.FirstStart, j.Starts = env.Running, d.Nodes, d.Sync, d.PSRebalance, e.view.Now, 1
		for _, n := range d.Nodes {
			e.view.Free[n]--
		}
		e.left -= j.Spec.GPUs
	}
	e.job = nil
	term, trunc := e.advance()
	e.done = term || trunc
	reward := -(e.area - e.prev) / 3600
	e.prev = e.area
	return e.observe(dst), reward, term, trunc, nil
}

// observe builds the observation in dst when it has room.
func (e *Env) observe(dst []float64) []float64 {
	return sched.ObserveJob(dst, sched.ObsDim(e.cfg.Encoder.Groups, len(e.cfg.Encoder.Syncs)), e.enc, &e.view, e.job)
}

// Err returns the error that ended the episode: a Source error, a
// snapshot that failed State.Validate or went back in time (both wrap
// ErrBadState), or an Actuator error; nil when the episode ended
// otherwise or goes on. Reset clears it.
func (e *Env) Err() error { return e.err }

// Job returns the job being decided, as the current view has it (its ID
// is its index in View().Active, its Spec.Name its id at the source); nil
// when the episode is over.
func (e *Env) Job() *env.Job { return e.job }

// View returns the current snapshot as the encoder reads it (nil before
// the first): the jobs decided at this snapshot show as running on their
// GPUs. It and what it points to belong to the environment and change at
// the next Step or Reset.
func (e *Env) View() *env.View {
	if !e.have {
		return nil
	}
	return &e.view
}

// Encoder returns the environment's encoder (nil before the first
// snapshot).
func (e *Env) Encoder() *sched.Encoder { return e.enc }
