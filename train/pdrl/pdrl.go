package pdrl

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/bc"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/policies/hack"
	ppdrl "github.com/drover-sched/drover/policies/pdrl"
)

// Windows draws replay windows of a trace: an episode of seed s replays
// the Duration seconds from a start drawn uniformly in [From, To -
// Duration), with its gaps scaled by a factor drawn uniformly in
// [GapLo, GapHi] (GapScale: below 1 raises the rate).
type Windows struct {
	// From and To bound the part of the trace the windows come from (s).
	From, To float64
	// Duration is each window's length (s).
	Duration float64
	// GapLo and GapHi bound the gap scale.
	GapLo, GapHi float64
}

// Replay returns the replay of seed's window.
func (w Windows) Replay(seed uint64) llm.Replay {
	rng := rand.New(rand.NewPCG(seed, 0x77696e))
	start := w.From + rng.Float64()*max(w.To-w.Duration-w.From, 0)
	return llm.Replay{Start: start, Duration: w.Duration, GapScale: w.GapLo + rng.Float64()*(w.GapHi-w.GapLo), Shift: 1}
}

// Requests returns the requests of seed's window of reqs, or an error
// when it holds none.
func (w Windows) Requests(reqs []infer.Request, seed uint64) ([]infer.Request, error) {
	return w.Replay(seed).Apply(reqs)
}

// Config is one training run of pd-rl: behaviour cloning of a teacher
// (the speed-aware rule by default), then PPO from the cloned actor.
type Config struct {
	// Seed seeds the teacher's windows, the networks and the updates.
	Seed uint64
	// Deploy is the deployment (default infergym.Deployment).
	Deploy infer.Config
	// Encoder is the encoding (infergym.Config; defaults there).
	Encoder infergym.Config
	// Trace is the request trace windows are cut from (the Azure 2023
	// conv trace in drover train).
	Trace []infer.Request
	// Train are the training windows (default: 120 s windows of the
	// trace's first 2,400 s, gap scale 0.5-0.8).
	Train Windows
	// SLOPenalty is the seconds charged per request missing an SLO
	// (default 5) and RewardScale the reward's divisor (default 10).
	SLOPenalty, RewardScale float64
	// Hidden are the networks' hidden widths (default 64, 64).
	Hidden []int
	// Teacher is the rule cloned: ppdrl.SpeedName (default, the
	// speed-aware rule policies/pdrl.Speed) or ppdrl.HACKName (HACK's
	// router).
	Teacher string
	// TeacherEpisodes is the teacher's windows cloned (default 8).
	TeacherEpisodes int
	// BCEpochs, BCBatch and BCLR shape behaviour cloning (defaults 100,
	// 256, 3e-3: the speed-aware rule's argmin over the slots' expected
	// times takes that long to fit, 98% agreement on held-back decisions).
	BCEpochs, BCBatch int
	BCLR              float64
	// Soften scales the cloned actor's output layer (default 1: not at
	// all): below 1 it flattens the cloned distribution around the
	// teacher's action, so that PPO explores the other instances.
	Soften float64
	// Steps is PPO's environment steps (default 20,000; 0 with AlgoBC).
	Steps int
	// BCOnly stops after behaviour cloning.
	BCOnly bool
	// PPO is PPO's config (zero: train/direct's fine-tuning defaults, LR
	// 1e-4, entropy 0.001, 256 steps per rollout, 10 critic warm-up
	// updates, 4 environments).
	PPO ppo.Config
	// Log gets progress lines.
	Log io.Writer
}

// DefaultTrain are the default training windows.
var DefaultTrain = Windows{From: 0, To: 2400, Duration: 120, GapLo: 0.5, GapHi: 0.8}

func (c *Config) defaults() error {
	if c.Deploy.Perf == nil {
		return errors.New("pdrl: no deployment (Deploy.Perf)")
	}
	if len(c.Trace) == 0 {
		return errors.New("pdrl: no trace")
	}
	if c.Train == (Windows{}) {
		c.Train = DefaultTrain
	}
	c.SLOPenalty, c.RewardScale = cmp.Or(c.SLOPenalty, 5), cmp.Or(c.RewardScale, 100)
	if c.Hidden == nil {
		c.Hidden = []int{64, 64}
	}
	c.TeacherEpisodes = cmp.Or(c.TeacherEpisodes, 8)
	c.Teacher = cmp.Or(c.Teacher, ppdrl.SpeedName)
	if c.Teacher != ppdrl.SpeedName && c.Teacher != ppdrl.HACKName {
		return fmt.Errorf("pdrl: teacher %q, want %q or %q", c.Teacher, ppdrl.SpeedName, ppdrl.HACKName)
	}
	c.BCEpochs, c.BCBatch, c.BCLR = cmp.Or(c.BCEpochs, 100), cmp.Or(c.BCBatch, 256), cmp.Or(c.BCLR, 3e-3)
	c.Steps = cmp.Or(c.Steps, 20000)
	c.Soften = cmp.Or(c.Soften, 1)
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Encoder.Arch == (infergym.Config{}).Arch {
		c.Encoder.Arch = c.Deploy.Model.Arch
	}
	if c.Encoder.LinkBytesPerSec == 0 {
		c.Encoder.LinkBytesPerSec = c.Deploy.Link.BytesPerSec
	}
	enc, err := infergym.NewEncoder(c.Encoder)
	if err != nil {
		return err
	}
	c.Encoder = enc.Config()
	return nil
}

// Result is a trained pd-rl.
type Result struct {
	// Meta is the checkpoint's metadata (Eval and Converged unset).
	Meta checkpoints.Meta
	// Nets are "actor" and "critic".
	Nets map[string]*nn.MLP
	// Samples is the teacher's decisions cloned, Agreement the share of
	// held-back ones the cloned actor matches.
	Samples   int
	Agreement float64
	// Returns are PPO's episodic returns, in order.
	Returns []float64
	// Encoder is the encoding trained on (defaults filled in), which
	// policies/pdrl.FromCheckpoint needs.
	Encoder infergym.Config
}

// NewEnv returns the training environment of cfg (after its defaults).
func newEnv(c *Config) (*infergym.Env, error) {
	return infergym.NewEnv(infergym.EnvConfig{Deploy: c.Deploy, Encoder: c.Encoder, SLOPenalty: c.SLOPenalty, RewardScale: c.RewardScale,
		Requests: func(seed uint64) []infer.Request {
			r, err := c.Train.Requests(c.Trace, seed)
			if err != nil {
				panic(fmt.Sprintf("pdrl: window of seed %d: %v", seed, err))
			}
			return r
		}})
}

// Train clones the teacher (policies/pdrl.Speed, or policies/pdrl.HACK,
// policies/hack's rule on the encoder's State) on TeacherEpisodes windows,
// then runs PPO
// from the cloned actor. The same config gives the same networks, bit for
// bit.
func Train(cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	probe, err := newEnv(&cfg)
	if err != nil {
		return Result{}, err
	}
	obsDim, nA := probe.ObservationSpace().Shape(), probe.ActionSpace().N
	algo := "ppo"
	if cfg.BCOnly {
		algo = "bc"
	}
	meta := checkpoints.Meta{Env: ppdrl.Name, Algo: algo, Seed: cfg.Seed, ObsDim: obsDim, Actions: nA,
		Hidden: cfg.Hidden, Activation: "tanh", Networks: []string{"actor", "critic"}, Hyperparams: map[string]float64{}}
	ppdrl.PutConfig(meta.Hyperparams, cfg.Encoder)
	meta.Hyperparams["slo_penalty"], meta.Hyperparams["reward_scale"] = cfg.SLOPenalty, cfg.RewardScale
	meta.Hyperparams["bc_teacher_speed"] = 0
	if cfg.Teacher == ppdrl.SpeedName {
		meta.Hyperparams["bc_teacher_speed"] = 1
	}

	// Behaviour cloning of HACK.
	var samples []ppdrl.Sample
	for ep := range cfg.TeacherEpisodes {
		reqs, err := cfg.Train.Requests(cfg.Trace, cfg.Seed*1000+uint64(ep))
		if err != nil {
			return Result{}, err
		}
		var rule ppdrl.Decider = ppdrl.NewHACK(cfg.Deploy.Model.Arch)
		if cfg.Teacher == ppdrl.SpeedName {
			rule = ppdrl.NewSpeed(cfg.Deploy.Model.Arch)
		}
		t, err := ppdrl.Teacher(cfg.Encoder, rule, func(s ppdrl.Sample) { samples = append(samples, s) })
		if err != nil {
			return Result{}, err
		}
		s, err := infer.New(cfg.Deploy, reqs)
		if err != nil {
			return Result{}, err
		}
		if _, err := s.Run(ppdrl.Router(t)); err != nil {
			return Result{}, fmt.Errorf("pdrl: teacher episode %d: %w", ep, err)
		}
	}
	if len(samples) == 0 {
		return Result{}, errors.New("pdrl: the teacher made no decision to clone")
	}
	fmt.Fprintf(cfg.Log, "bc: %d decisions of %s over %d windows\n", len(samples), cfg.Teacher, cfg.TeacherEpisodes)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6263))
	agent := ppo.NewAgent(obsDim, nA, cfg.Hidden, rng)
	res := Result{Nets: map[string]*nn.MLP{}, Samples: len(samples)}
	res.Agreement = clone(agent.Actor, samples, cfg, rng)
	fmt.Fprintf(cfg.Log, "bc: agreement with the teacher on held-back decisions %.1f%%\n", 100*res.Agreement)
	meta.Hyperparams["bc_samples"], meta.Hyperparams["bc_agreement"] = float64(len(samples)), res.Agreement
	if cfg.Soften != 1 {
		ls := agent.Actor.Linears()
		out := ls[len(ls)-1]
		for _, p := range []*nn.Param{out.W, out.B} {
			for i := range p.Value {
				p.Value[i] *= float32(cfg.Soften)
			}
		}
		meta.Hyperparams["bc_soften"] = cfg.Soften
	}

	if !cfg.BCOnly {
		pc := cfg.PPO
		if pc.TotalSteps == 0 {
			pc = ppo.DefaultConfig()
			pc.LR, pc.EntCoef, pc.NumSteps, pc.CriticWarmup = 3e-4, 0.01, 256, 5
		}
		pc.Seed, pc.TotalSteps, pc.Hidden, pc.Init = cfg.Seed, cfg.Steps, cfg.Hidden, agent
		fmt.Fprintf(cfg.Log, "ppo: %d steps on %d environments, critic warm-up %d updates\n", pc.TotalSteps, pc.NumEnvs, pc.CriticWarmup)
		envs := make([]*infergym.Env, pc.NumEnvs)
		for i := range envs {
			if envs[i], err = newEnv(&cfg); err != nil {
				return Result{}, err
			}
		}
		a, err := ppo.Train(pc, func(i int) gym.Env { return envs[i] }, func(u ppo.Update) {
			res.Returns = append(res.Returns, u.Episodes...)
			if len(u.Episodes) > 0 {
				m := 0.0
				for _, r := range u.Episodes {
					m += r / float64(len(u.Episodes))
				}
				fmt.Fprintf(cfg.Log, "ppo: step %d mean return %.1f (%d episodes) value loss %.3g approx kl %.3g\n", u.Step, m, len(u.Episodes), u.ValueLoss, u.ApproxKL)
			}
		})
		if err != nil {
			return Result{}, err
		}
		agent = a
		meta.Steps = pc.TotalSteps
		for k, v := range map[string]float64{"lr": pc.LR, "ent_coef": float64(pc.EntCoef), "num_envs": float64(pc.NumEnvs), "num_steps": float64(pc.NumSteps), "critic_warmup": float64(pc.CriticWarmup)} {
			meta.Hyperparams["ppo_"+k] = v
		}
	}
	res.Nets["actor"], res.Nets["critic"] = agent.Actor, agent.Critic
	res.Meta, res.Encoder = meta, cfg.Encoder
	return res, nil
}

// clone fits actor to the teacher's samples (bc.Clone, logging every
// 5 epochs) and returns the share of held-back samples on which the
// greedy policy takes the teacher's action.
func clone(actor *nn.MLP, samples []ppdrl.Sample, cfg Config, rng *rand.Rand) float64 {
	bs := make([]bc.Sample, len(samples))
	for i, s := range samples {
		bs[i] = bc.Sample(s)
	}
	c := bc.Config{Epochs: cfg.BCEpochs, Batch: cfg.BCBatch, LR: cfg.BCLR, LogEvery: 5, Log: cfg.Log}
	return bc.Clone(actor, bs, c, rng, func(a *nn.MLP) bc.Actor { return ppdrl.Greedy(a) })
}

// HeldOut are the gate's held-out episodes: each Window of the trace's
// last part, replayed at each seed's gap scale.
type HeldOut struct {
	// Starts are the windows' starts (s) and Duration their length.
	Starts   []float64
	Duration float64
	// GapLo and GapHi bound the gap scales drawn per seed.
	GapLo, GapHi float64
}

// DefaultHeldOut are the 120 s windows from 2,400 s to 3,480 s of the
// trace (after every training window), at gap scales 0.5-0.8.
func DefaultHeldOut() HeldOut {
	h := HeldOut{Duration: 120, GapLo: 0.5, GapHi: 0.8}
	for s := 2400.0; s+120 <= 3480; s += 120 {
		h.Starts = append(h.Starts, s)
	}
	return h
}

// Replay is window w's replay at seed's gap scale.
func (h HeldOut) Replay(w int, seed uint64) llm.Replay {
	rng := rand.New(rand.NewPCG(seed, 0x6761))
	return llm.Replay{Start: h.Starts[w], Duration: h.Duration, GapScale: h.GapLo + rng.Float64()*(h.GapHi-h.GapLo), Shift: 1}
}

// Judgement is the gate's verdict on pd-rl against HACK.
type Judgement struct {
	// Learned and Baseline are the mean JCTs (s) per paired episode.
	Learned, Baseline []float64
	// SLOLearned and SLOBaseline are the mean SLO attainments.
	SLOLearned, SLOBaseline float64
	// Verdict is policies/gate's.
	Verdict gate.Verdict
}

// Judge runs the learned Decider (a fresh one per episode from newLearned)
// and HACK's router (policies/hack, Pi = 64) on every held-out window and
// seed, and judges the
// paired mean JCTs with policies/gate.
func Judge(deploy infer.Config, trace []infer.Request, h HeldOut, seeds []uint64, newLearned func() ppdrl.Decider, g gate.Config) (Judgement, error) {
	var j Judgement
	n := 0.0
	for w := range h.Starts {
		for _, seed := range seeds {
			reqs, err := h.Replay(w, seed).Apply(trace)
			if err != nil {
				return j, err
			}
			run := func(r infer.Router) (infer.Summary, error) {
				s, err := infer.New(deploy, reqs)
				if err != nil {
					return infer.Summary{}, err
				}
				return s.Run(r)
			}
			ls, err := run(ppdrl.Router(newLearned()))
			if err != nil {
				return j, fmt.Errorf("pdrl: learned on window %d seed %d: %w", w, seed, err)
			}
			bs, err := run(hack.New(kv.HACKPi(64)))
			if err != nil {
				return j, fmt.Errorf("pdrl: hack on window %d seed %d: %w", w, seed, err)
			}
			j.Learned, j.Baseline = append(j.Learned, ls.E2E.Mean), append(j.Baseline, bs.E2E.Mean)
			j.SLOLearned += ls.SLOAttainment
			j.SLOBaseline += bs.SLOAttainment
			n++
		}
	}
	j.SLOLearned /= n
	j.SLOBaseline /= n
	j.Verdict = gate.Judge(j.Learned, j.Baseline, g)
	return j, nil
}
