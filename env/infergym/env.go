package infergym

import (
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer"
)

// EnvConfig is a routing environment: a deployment, the requests of each
// episode and the reward's shape.
type EnvConfig struct {
	// Deploy is the simulated deployment (its Model.Arch sizes the
	// formats; its SLO sets the penalty's objectives).
	Deploy infer.Config
	// Encoder is the encoding (its Arch and LinkBytesPerSec default to
	// Deploy's).
	Encoder Config
	// Requests returns the requests of the episode seed starts (in
	// arrival order), a slice the env may modify (it renumbers their IDs
	// 0, 1, ...). It must be deterministic in seed.
	Requests func(seed uint64) []infer.Request
	// SLOPenalty is the seconds of JCT charged for each request that
	// misses Deploy.SLO's TTFT or TPOT objective.
	SLOPenalty float64
	// RewardScale divides the reward (default 1: seconds).
	RewardScale float64
}

// Env is the routing environment over package infer (gym.Env and
// gym.Masker): every arriving request is a step, whose action picks its
// prefill instance, KV format and decode instance (Encoder's joint
// action). The reward of a step is minus the requests' time in the system
// between this arrival and the next, sum over requests of (min(end, next)
// - now), so that an episode's return is minus the sum of the requests'
// JCTs (Little's law, exactly), less SLOPenalty for each request that
// finished in the step and missed an objective; all divided by
// RewardScale. An episode replays Requests(seed) to its end: the last
// step's reward holds the rest of the run, and it terminates.
//
// A run can end with requests unserved (Err): a request whose KV cache
// can never fit the instances its action names is rejected (the action
// mask allows that only when no action fits it) and charged SLOPenalty
// in its step, never entering the system; a request left that can never
// finish (the simulation stalled) is charged its time in the system until
// the simulation's last event, and SLOPenalty. The episode then
// terminates as any other, without a panic.
type Env struct {
	cfg EnvConfig
	enc *Encoder
	box gym.Box

	sim      *infer.Sim
	req      infer.Request
	view     *infer.View
	state    State
	inflight []int
	last     float64
	ended    bool
	started  bool

	sumJCT   float64
	missed   int
	finished int
	// rejected and unfinished count the requests left unserved; err is
	// the simulation's end when it left some (Err).
	rejected, unfinished int
	err                  error
}

var (
	_ gym.Env    = (*Env)(nil)
	_ gym.Masker = (*Env)(nil)
)

// NewEnv validates cfg and returns its environment.
func NewEnv(cfg EnvConfig) (*Env, error) {
	if cfg.Encoder.Arch == (Config{}).Arch {
		cfg.Encoder.Arch = cfg.Deploy.Model.Arch
	}
	if cfg.Encoder.LinkBytesPerSec == 0 {
		cfg.Encoder.LinkBytesPerSec = cfg.Deploy.Link.BytesPerSec
	}
	if cfg.RewardScale == 0 {
		cfg.RewardScale = 1
	}
	switch {
	case cfg.Requests == nil:
		return nil, fmt.Errorf("%w: no requests", ErrBadConfig)
	case !(cfg.SLOPenalty >= 0) || math.IsInf(cfg.SLOPenalty, 0) || !(cfg.RewardScale > 0) || math.IsInf(cfg.RewardScale, 0):
		return nil, fmt.Errorf("%w: SLO penalty %v, reward scale %v", ErrBadConfig, cfg.SLOPenalty, cfg.RewardScale)
	}
	pre, dec := false, false
	for _, ic := range cfg.Deploy.Instances {
		pre = pre || inPrefillPool(ic.Role)
		dec = dec || inDecodePool(ic.Role)
	}
	if !pre || !dec {
		return nil, fmt.Errorf("%w: the deployment needs prefill and decode instances", ErrBadConfig)
	}
	enc, err := NewEncoder(cfg.Encoder)
	if err != nil {
		return nil, err
	}
	cfg.Encoder = enc.Config()
	n := enc.ObsDim()
	lo, hi := make([]float64, n), make([]float64, n)
	for i := range hi {
		hi[i] = math.Inf(1)
	}
	return &Env{cfg: cfg, enc: enc, box: gym.Box{Low: lo, High: hi}}, nil
}

// Encoder returns the env's encoder.
func (e *Env) Encoder() *Encoder { return e.enc }

// ObservationSpace implements gym.Env: every feature is >= 0.
func (e *Env) ObservationSpace() gym.Box { return e.box }

// ActionSpace implements gym.Env.
func (e *Env) ActionSpace() gym.Discrete { return gym.Discrete{N: e.enc.Actions()} }

// Reset implements gym.Env. It panics when the episode's requests or
// the deployment cannot be simulated (a configuration error).
func (e *Env) Reset(seed uint64) ([]float64, gym.Info) {
	reqs := e.cfg.Requests(seed)
	for i := range reqs {
		reqs[i].ID = i // the env finds a request's result by its ID
	}
	s, err := infer.New(e.cfg.Deploy, reqs)
	if err != nil {
		panic(fmt.Sprintf("infergym: %v", err))
	}
	e.sim, e.inflight, e.last, e.ended, e.started = s, e.inflight[:0], 0, false, true
	e.sumJCT, e.missed, e.finished = 0, 0, 0
	e.rejected, e.unfinished, e.err = 0, 0, nil
	obs, _, done := e.advance()
	if done {
		panic("infergym: an episode without requests")
	}
	return obs, nil
}

// Sim returns the episode's simulation (its Results and Summary).
func (e *Env) Sim() *infer.Sim { return e.sim }

// Err returns why the episode's simulation left requests unserved: nil
// while the episode runs and after one that served every request; after
// one that did not, an error wrapping infer.ErrRejected (requests whose
// KV cache fits no instance they were routed to) or infer.ErrStalled
// (requests that could never finish).
func (e *Env) Err() error { return e.err }

// advance runs the simulation to the next arrival and returns its
// observation, the time in system since the last arrival (seconds, with
// penalties) and whether the run ended.
func (e *Env) advance() ([]float64, float64, bool) {
	req, v, err := e.sim.Next()
	now := math.Inf(1)
	done := false
	switch {
	case err == nil:
		now = v.Now()
	case errors.Is(err, infer.ErrDone):
		done = true
	case errors.Is(err, infer.ErrRejected), errors.Is(err, infer.ErrStalled):
		// The run is over with requests unserved: those still in the
		// system stay until the simulation's last event (the View reads
		// its clock).
		done, e.err = true, err
		now = e.view.Now()
	default:
		panic(fmt.Sprintf("infergym: %v", err))
	}
	res := e.sim.Results()
	slo := e.cfg.Deploy.SLO
	cost := 0.0
	keep := e.inflight[:0]
	for _, i := range e.inflight {
		r := res[i]
		if !math.IsNaN(r.End) && r.End <= now {
			cost += r.End - e.last
			e.finished++
			e.sumJCT += r.E2E()
			if (slo.TTFT > 0 && r.TTFT() > slo.TTFT) || (slo.TPOT > 0 && r.TPOT() > slo.TPOT) {
				e.missed++
				cost += e.cfg.SLOPenalty
			}
			continue
		}
		cost += now - e.last
		keep = append(keep, i)
	}
	e.inflight = keep
	e.last = now
	if done {
		// Requests still in the system never finish (ErrStalled).
		e.unfinished += len(e.inflight)
		cost += float64(len(e.inflight)) * e.cfg.SLOPenalty
		e.inflight = e.inflight[:0]
		return make([]float64, e.enc.ObsDim()), cost, true
	}
	e.req, e.view = req, v
	e.state = StateOf(v, e.state)
	e.enc.Begin(e.state)
	return e.enc.Observe(make([]float64, 0, e.enc.ObsDim()), e.state, req), cost, false
}

// ActionMask implements gym.Masker.
func (e *Env) ActionMask(dst []bool) []bool { return e.enc.Mask(dst, e.state, e.req) }

// Step implements gym.Env. At the episode's end its info holds the
// finished requests' mean JCT (mean_jct, s), the share of the requests
// that finished and met the SLO (slo_attainment) and the requests
// (requests); after a run that left requests unserved (Err), also those
// rejected (rejected) and those that never finished (unfinished).
func (e *Env) Step(action int) ([]float64, float64, bool, bool, gym.Info) {
	if !e.started {
		panic("infergym: Step before Reset")
	}
	if e.ended {
		panic(gym.ErrStepAfterEnd)
	}
	d, ok := e.enc.Decode(action)
	if !ok {
		panic(fmt.Sprintf("infergym: action %d outside the shown slots", action))
	}
	if err := e.sim.Apply(d); err != nil {
		panic(fmt.Sprintf("infergym: %v", err))
	}
	penalty := 0.0
	if e.sim.Results()[e.req.ID].Rejected {
		e.rejected++
		penalty = e.cfg.SLOPenalty
	} else {
		e.inflight = append(e.inflight, e.req.ID)
	}
	obs, cost, done := e.advance()
	r := -(cost + penalty) / e.cfg.RewardScale
	if !done {
		return obs, r, false, false, nil
	}
	e.ended = true
	unserved := e.rejected + e.unfinished
	n := float64(e.finished + unserved)
	info := gym.Info{"mean_jct": e.sumJCT / float64(e.finished), "slo_attainment": 1 - float64(e.missed+unserved)/n, "requests": n}
	if e.err != nil {
		info["rejected"], info["unfinished"] = float64(e.rejected), float64(e.unfinished)
	}
	return obs, r, true, false, info
}
