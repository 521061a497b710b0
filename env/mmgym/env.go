package mmgym

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/infer/mm/autoscale"
)

// Factors are what an action multiplies ModServe's ask for a pool by:
// down (at least one fewer instance, never below one), as asked, up (at
// least one more).
var Factors = [3]float64{2.0 / 3, 1, 1.5}

// Rule is the action that keeps ModServe's asks for both pools.
const Rule = 4

// ObsDim is the observation's length.
const ObsDim = 13

// Config is an environment's setting.
type Config struct {
	// Model is the served model.
	Model mm.Model
	// Requests is the week's expected requests (datasets/llm.LMMSynth's;
	// 0: the trace's 1,000,000).
	Requests int
	// Days are the days of the week (0-6) episodes are drawn from; an
	// episode of seed s plays day Days[s % len(Days)] of the week drawn
	// from s.
	Days []int
	// Hours is an episode's length (default 24).
	Hours float64
	// Scale is the rule's settings: period, monitor, threshold,
	// objective, bounds (and the rule's own: target, stabilization).
	Scale autoscale.Config
	// Profile is the instances' offline profile (the observation's
	// scale).
	Profile autoscale.Profile
	// NewRule returns, for an episode, the rule whose asks the action
	// scales, its initial sizes the pools' at the episode's start
	// (ModServe's: policies/mmscale.NewModServe on Scale and Profile).
	NewRule func() (autoscale.Scaler, error)
	// Penalty is the GPU-hours one request missing its objective costs.
	Penalty float64
	// RewardScale divides the reward (default 1).
	RewardScale float64
	// Router returns the decoupled pools' router for an episode.
	Router func() mm.Router
	// Fixed896 simulates every image as 896x896 and reads prompts as
	// text (mm.Config.Fixed896), as env/infer/mm did before it drew image
	// sizes.
	Fixed896 bool
}

// ErrBadConfig is returned by New for a setting no episode can run.
var ErrBadConfig = errors.New("mmgym: bad config")

// Env is the autoscaling environment: a step is one scaling period.
type Env struct {
	cfg     Config
	rule    autoscale.Scaler
	drv     *autoscale.Driver
	ask     autoscale.Sizes
	last    autoscale.Window
	gpuSec  float64
	missed  int
	started bool
	ended   bool
	day     int
}

var _ gym.Env = (*Env)(nil)

// New returns an environment; Reset starts its episodes.
func New(cfg Config) (*Env, error) {
	if cfg.Hours == 0 {
		cfg.Hours = 24
	}
	if cfg.RewardScale == 0 {
		cfg.RewardScale = 1
	}
	if len(cfg.Days) == 0 || cfg.Router == nil || cfg.NewRule == nil || !(cfg.Hours > 0 && cfg.Hours <= 24*7) || !(cfg.Penalty >= 0) || !(cfg.RewardScale > 0) {
		return nil, fmt.Errorf("%w: %d days, router %v, rule %v, %v hours, penalty %v, reward scale %v", ErrBadConfig, len(cfg.Days), cfg.Router != nil, cfg.NewRule != nil, cfg.Hours, cfg.Penalty, cfg.RewardScale)
	}
	for _, d := range cfg.Days {
		if d < 0 || float64(d*1440)+cfg.Hours*60 > llm.LMM2025Minutes {
			return nil, fmt.Errorf("%w: day %d with %v hours is past the week", ErrBadConfig, d, cfg.Hours)
		}
	}
	if err := cfg.Scale.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Profile.Validate(); err != nil {
		return nil, err
	}
	if _, err := cfg.NewRule(); err != nil {
		return nil, err
	}
	return &Env{cfg: cfg}, nil
}

// ObservationSpace is 13 numbers, each scaled to about 0..1 for the
// loads the week sees (see Observe).
func (e *Env) ObservationSpace() gym.Box {
	lo := make([]float64, ObsDim)
	hi := make([]float64, ObsDim)
	for i := range hi {
		hi[i] = math.Inf(1)
	}
	lo[11], lo[12] = -1, -1
	return gym.Box{Low: lo, High: hi}
}

// ActionSpace is 9 actions: (image factor, text factor) of Factors, the
// image factor major; Rule (4) keeps ModServe's asks.
func (e *Env) ActionSpace() gym.Discrete { return gym.Discrete{N: 9} }

// Reset starts an episode on the day seed picks, of the week drawn from
// seed, under ModServe's rule until the first period ends.
func (e *Env) Reset(seed uint64) ([]float64, gym.Info) {
	c := &e.cfg
	e.day = c.Days[seed%uint64(len(c.Days))]
	reqs, err := llm.LMMSynth{Requests: c.Requests, Start: e.day * 1440, Minutes: int(math.Round(c.Hours * 60))}.Generate(rand.NewPCG(seed, 0x6d6d67796d)) // "mmgym"
	if err != nil {
		panic(fmt.Sprintf("mmgym: generate: %v", err)) // New checked the window
	}
	sc := mm.Decoupled(c.Model, 1, 1)
	if c.Fixed896 {
		sc = sc.Fixed896()
	}
	s, err := mm.New(sc, reqs)
	if err != nil {
		panic(fmt.Sprintf("mmgym: %v", err))
	}
	e.rule, err = c.NewRule()
	if err != nil {
		panic(fmt.Sprintf("mmgym: %v", err))
	}
	e.drv, err = autoscale.NewDriver(s, reqs, c.Router(), c.Scale, e.rule.Initial())
	if err != nil {
		panic(fmt.Sprintf("mmgym: %v", err))
	}
	e.gpuSec, e.missed, e.started, e.ended = 0, 0, true, false
	if err := e.period(); err != nil {
		panic(fmt.Sprintf("mmgym: %v", err))
	}
	return e.obs(), nil
}

// period runs monitoring windows, applying the rule's triggers, until a
// period ends or the episode does; at a period's end it records the
// rule's ask and the window.
func (e *Env) period() error {
	for !e.drv.Done() {
		w, tick, err := e.drv.Next()
		if err != nil {
			return err
		}
		if tick {
			e.ask = e.rule.Decide(w, e.drv.Sizes(), true)
			e.last = w
			return nil
		}
		if err := e.drv.Set(e.rule.Decide(w, e.drv.Sizes(), false)); err != nil {
			return err
		}
	}
	return nil
}

// Step sizes the pools for the next period (ModServe's asks times the
// action's factors), runs it, and returns minus its GPU-hours and the
// penalty of its missed requests.
func (e *Env) Step(action int) ([]float64, float64, bool, bool, gym.Info) {
	if !e.started || e.ended {
		panic(gym.ErrStepAfterEnd)
	}
	if action < 0 || action >= 9 {
		panic(fmt.Sprintf("mmgym: action %d outside [0, 9)", action))
	}
	next := Scale(e.ask, action, e.cfg.Scale)
	if err := e.drv.Set(next); err != nil {
		panic(fmt.Sprintf("mmgym: %v", err))
	}
	before := e.drv.GPUSeconds()
	f0, m0 := e.drv.Totals()
	if err := e.period(); err != nil {
		panic(fmt.Sprintf("mmgym: %v", err))
	}
	gpuH := (e.drv.GPUSeconds() - before) / 3600
	f1, m1 := e.drv.Totals()
	missed := (f1 - m1) - (f0 - m0)
	e.ended = e.drv.Done()
	e.gpuSec += gpuH * 3600
	e.missed += missed
	r := -(gpuH + e.cfg.Penalty*float64(missed)) / e.cfg.RewardScale
	var info gym.Info
	if e.ended {
		out := e.drv.Outcome()
		info = gym.Info{"gpu_hours": out.Summary.GPUHours, "attainment": out.Attainment, "day": float64(e.day)}
	}
	return e.obs(), r, e.ended, false, info
}

// Scale returns the sizes action asks for: the rule's ask times the
// action's factors (Factors[action/3] for the image pool,
// Factors[action%3] for the text pool), down by at least one, up by at
// least one, within c's bounds. A served mm-rl policy applies it to the
// rule's ask at each period's end as Step does.
func Scale(ask autoscale.Sizes, action int, c autoscale.Config) autoscale.Sizes {
	if action < 0 || action >= 9 {
		panic(fmt.Sprintf("mmgym: action %d outside [0, 9)", action))
	}
	return autoscale.Sizes{Image: scale(ask.Image, Factors[action/3], c), Text: scale(ask.Text, Factors[action%3], c)}
}

// scale multiplies an ask by f: down by at least one, up by at least one,
// within the config's bounds.
func scale(ask int, f float64, c autoscale.Config) int {
	n := ask
	switch {
	case f < 1:
		n = min(ask-1, int(math.Floor(float64(ask)*f)))
	case f > 1:
		n = max(ask+1, int(math.Ceil(float64(ask)*f)))
	}
	return c.Clamp(n)
}

// obs is the observation of the period that just ended (Observe).
func (e *Env) obs() []float64 {
	return Observe(e.last, e.drv.Sizes(), e.ask, e.drv.Now(), e.cfg.Profile)
}

// Observe is the observation (ObsDim numbers) of the period w closes, at
// simulated time now (s), with the pools at cur and the rule asking for
// ask: current sizes and the rule's asks (/ 10), the period's peak and
// mean image and text loads over one instance's capacity in p (/ 10), its
// attainment, its backlog in minutes of one instance's capacity (/ 10),
// and the time of day (sin, cos). A served mm-rl policy observes its
// periods with it as the environment does.
func Observe(w autoscale.Window, cur, ask autoscale.Sizes, now float64, p autoscale.Profile) []float64 {
	secs := max(w.Seconds, 1)
	day := 2 * math.Pi * math.Mod(now, 86400) / 86400
	return []float64{
		float64(cur.Image) / 10, float64(cur.Text) / 10,
		float64(ask.Image) / 10, float64(ask.Text) / 10,
		w.Peak.ImageTokens / p.ImageTokensPerSec / 10, w.Peak.TextLoad / p.TextTokensPerSec / 10,
		w.ImageTokens / secs / p.ImageTokensPerSec / 10, w.TextLoad / secs / p.TextTokensPerSec / 10,
		w.Attainment(),
		w.PendingImageTokens / (60 * p.ImageTokensPerSec) / 10, w.PendingTextLoad / (60 * p.TextTokensPerSec) / 10,
		math.Sin(day), math.Cos(day),
	}
}
