package sched

import (
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
)

// EnvConfig sets up the scheduling environment.
type EnvConfig struct {
	// Encoder configures the observation and the joint action.
	Encoder Config
	// Jobs is the workload replayed in every episode.
	Jobs []env.JobSpec
	// NewJobs, when set, gives each episode its own workload for the
	// episode's seed (Jobs is then ignored).
	NewJobs func(seed uint64) []env.JobSpec
	// Cluster is the cluster.
	Cluster env.Cluster
	// NewModel returns a fresh throughput model for an episode seed.
	NewModel func(seed uint64) env.Model
	// RestartDelay is the seconds every placement costs.
	RestartDelay float64
	// WaitWeight weights the pending jobs' time against the running
	// jobs' in the reward (0: only GPU-held time, the TTA objective).
	WaitWeight float64
}

// Env is the scheduling environment of the direct learned policies
// (strn-rl, sas-rl): one step per job that fits at a decision point, in
// arrival order with backfilling, as the heuristics take them. The action
// is the Encoder's: a node group or the whole cluster, times a sync
// strategy, or hold. The reward of a step is minus the time that passed
// since the previous step times the running jobs (plus WaitWeight times
// the pending ones), in hours, so an episode's undiscounted return is
// minus the jobs' total GPU-held time: their time to accuracy plus
// restart delays. Env is not safe for concurrent use.
type Env struct {
	cfg      EnvConfig
	enc      *Encoder
	sim      *env.Sim
	view     *env.View
	job      *env.Job
	cursor   int  // next job of view.Active to consider
	left     int  // free GPUs left at this decision point
	begun    bool // Begin ran at this decision point
	area     float64
	lastArea float64
	done     bool
	mask     []bool
}

var _ gym.Env = (*Env)(nil)
var _ gym.Masker = (*Env)(nil)
var _ gym.StepperInto = (*Env)(nil)

// NewEnv validates cfg and returns the environment.
func NewEnv(cfg EnvConfig) (*Env, error) {
	if (len(cfg.Jobs) == 0 && cfg.NewJobs == nil) || cfg.NewModel == nil || len(cfg.Cluster.Nodes) == 0 {
		return nil, errors.New("sched: env config needs jobs, a cluster and a model")
	}
	if !(cfg.WaitWeight >= 0) || math.IsInf(cfg.WaitWeight, 0) {
		return nil, fmt.Errorf("sched: wait weight = %v, want >= 0", cfg.WaitWeight)
	}
	enc, err := NewEncoder(cfg.Encoder, &cfg.Cluster)
	if err != nil {
		return nil, err
	}
	return &Env{cfg: cfg, enc: enc}, nil
}

// Encoder returns the environment's encoder.
func (e *Env) Encoder() *Encoder { return e.enc }

// ObservationSpace implements gym.Env.
func (e *Env) ObservationSpace() gym.Box {
	lo, hi := make([]float64, e.enc.ObsDim()), make([]float64, e.enc.ObsDim())
	for i := range hi {
		lo[i], hi[i] = math.Inf(-1), math.Inf(1)
	}
	return gym.Box{Low: lo, High: hi}
}

// ActionSpace implements gym.Env.
func (e *Env) ActionSpace() gym.Discrete { return gym.Discrete{N: e.enc.Actions()} }

// Reset implements gym.Env: a new simulation of the workload with the
// model for seed, run to the first decision.
func (e *Env) Reset(seed uint64) ([]float64, gym.Info) {
	jobs := e.cfg.Jobs
	if e.cfg.NewJobs != nil {
		jobs = e.cfg.NewJobs(seed)
	}
	s, err := env.New(env.Config{Cluster: e.cfg.Cluster, Model: e.cfg.NewModel(seed), RestartDelay: e.cfg.RestartDelay}, jobs)
	if err != nil {
		panic(fmt.Sprintf("sched: %v", err)) // the caller's workload was validated when it was built
	}
	enc, err := NewEncoder(e.cfg.Encoder, &e.cfg.Cluster)
	if err != nil {
		panic(fmt.Sprintf("sched: %v", err)) // validated by NewEnv
	}
	e.enc, e.sim, e.view, e.job, e.done = enc, s, nil, nil, false
	e.area, e.lastArea, e.begun, e.cursor = 0, 0, false, 0
	e.advance()
	return e.observe(nil), nil
}

// advance runs the simulation to the next job to decide (e.job) or to
// the end (e.done).
func (e *Env) advance() {
	for {
		if e.view != nil {
			if !e.begun {
				e.enc.Begin(e.view)
				e.begun, e.cursor, e.left = true, 0, 0
				for _, f := range e.view.Free {
					e.left += f
				}
			}
			for e.cursor < len(e.view.Active) && e.left > 0 {
				j := e.view.Active[e.cursor]
				e.cursor++
				if j.State == env.Pending && j.Spec.GPUs <= e.left {
					e.job = j
					return
				}
			}
		}
		rate, t0 := 0.0, e.sim.Now()
		if e.view != nil {
			rate = CostRate(e.view.Active, e.cfg.WaitWeight)
		}
		v, err := e.sim.Next()
		if err == nil || errors.Is(err, env.ErrDone) {
			e.area += rate * (e.sim.Now() - t0)
		}
		if errors.Is(err, env.ErrDone) {
			e.done, e.job = true, nil
			return
		}
		if err != nil {
			panic(fmt.Sprintf("sched: %v", err))
		}
		e.view, e.begun = v, false
	}
}

// ActionMask implements gym.Masker.
func (e *Env) ActionMask(dst []bool) []bool {
	if e.job == nil {
		n := e.enc.Actions()
		dst = append(dst[:0], make([]bool, n)...)
		return dst
	}
	return e.enc.Mask(dst, e.view, e.job)
}

// Step implements gym.Env.
func (e *Env) Step(action int) ([]float64, float64, bool, bool, gym.Info) {
	return e.StepInto(nil, action)
}

// StepInto implements gym.StepperInto: it decides the current job as the
// action says and runs the simulation to the next decision.
func (e *Env) StepInto(dst []float64, action int) ([]float64, float64, bool, bool, gym.Info) {
	if e.done {
		panic(gym.ErrStepAfterEnd)
	}
	e.mask = e.enc.Mask(e.mask, e.view, e.job)
	if action < 0 || action >= len(e.mask) || !e.mask[action] {
		panic(fmt.Sprintf("sched: action %d is not valid for job %d", action, e.job.ID))
	}
	d, hold := e.enc.Decode(e.view, e.job, action)
	if !hold {
		e.enc.Commit(d)
		if err := e.sim.Apply([]env.Decision{d}); err != nil {
			panic(fmt.Sprintf("sched: %v", err))
		}
		e.left -= e.job.Spec.GPUs
	}
	e.job = nil
	e.advance()
	reward := -(e.area - e.lastArea) / 3600
	e.lastArea = e.area
	return e.observe(dst), reward, e.done, false, nil
}

// observe builds the observation in dst when it has room.
func (e *Env) observe(dst []float64) []float64 {
	return ObserveJob(dst, e.enc.ObsDim(), e.enc, e.view, e.job)
}

// CostRate is what the reward charges per second until the next decision
// point for the jobs of a decision point (View.Active): the running jobs
// plus waitWeight times the pending ones (EnvConfig.WaitWeight). Env and
// env/live's Env both charge it.
func CostRate(active []*env.Job, waitWeight float64) float64 {
	running, pending := 0, 0
	for _, j := range active {
		switch j.State {
		case env.Running:
			running++
		case env.Pending:
			pending++
		}
	}
	return float64(running) + waitWeight*float64(pending)
}

// ObserveJob returns the observation of job j at v in dst, reused when it
// has room: enc's (Encoder.Observe), or n zeros when there is no job to
// decide (j nil; enc and v are then not read). n is the observation's
// length, enc.ObsDim(). Env and env/live's Env both observe with it.
func ObserveJob(dst []float64, n int, enc *Encoder, v *env.View, j *env.Job) []float64 {
	if cap(dst) < n {
		dst = make([]float64, 0, n)
	}
	if j == nil {
		dst = dst[:n]
		clear(dst)
		return dst
	}
	return enc.Observe(dst[:0], v, j)
}

// View returns the current decision point (nil before the first).
func (e *Env) View() *env.View { return e.view }

// Job returns the job being decided (nil once the episode is over).
func (e *Env) Job() *env.Job { return e.job }

// Summary returns the run's summary so far.
func (e *Env) Summary() env.Summary { return e.sim.Summary() }

// Jobs returns the episode's jobs (index = ID) as the simulation has them
// now; the slice belongs to the environment.
func (e *Env) Jobs() []env.Job { return e.sim.Jobs() }
