package direct

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/drover-sched/drover/agents/bc"
	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/policies"
	pdirect "github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/policies/sas"
	"github.com/drover-sched/drover/policies/strn"
)

// Algorithms.
const (
	// AlgoBC is behaviour cloning of the heuristic only.
	AlgoBC = "bc"
	// AlgoPPO is behaviour cloning, then PPO from the cloned actor.
	AlgoPPO = "ppo"
	// AlgoDQN is DQN on the scheduling environment (its Q-network learns
	// from the environment's reward alone).
	AlgoDQN = "dqn"
)

// Config is one training run.
type Config struct {
	// Name is the policy: policies/direct's STRNRL or SASRL.
	Name string
	// Algo is AlgoBC, AlgoPPO (the default) or AlgoDQN.
	Algo string
	// Seed seeds the episodes, the networks and the updates.
	Seed uint64
	// Groups and Hold shape the action (sched.Config; default 8 groups,
	// no hold).
	Groups int
	Hold   bool
	// WaitWeight weights the pending jobs' time in PPO's and DQN's reward
	// (sched.EnvConfig.WaitWeight; 0: GPU-held time only). With Hold, a
	// positive weight keeps holding from trading queueing delay for a
	// lower time to accuracy for free.
	WaitWeight float64
	// NormalizeReward divides PPO's rewards by a running standard
	// deviation of the discounted return (Gymnasium's NormalizeReward);
	// the reported returns are then in those units.
	NormalizeReward bool
	// Hidden are the networks' hidden widths (default 64, 64).
	Hidden []int
	// Settings are the training environments (default DefaultSettings).
	Settings []Setting
	// TeacherEpisodes is the number of the heuristic's episodes per
	// setting behaviour cloning learns from (default 6).
	TeacherEpisodes int
	// BCEpochs, BCBatch and BCLR shape behaviour cloning: passes over the
	// samples, minibatch size and Adam's learning rate (defaults 40, 256,
	// 1e-3).
	BCEpochs, BCBatch int
	BCLR              float64
	// Steps is the environment steps of PPO or DQN (default 40,000).
	Steps int
	// PPO and DQN are the agents' settings (Seed, TotalSteps and Hidden
	// are set from this Config; zero values take the defaults below).
	PPO ppo.Config
	DQN dqn.Config
	// Backend and Device are the NN backend and device of PPO's and DQN's
	// updates (nn.OpenBackend: "" is Go on the CPU; "torch" in a torch
	// build). Behaviour cloning runs on the Go backend.
	Backend, Device string
	// Init, when set, is the actor training starts from (a direct
	// checkpoint's "actor", of this Config's encoding and Hidden):
	// behaviour cloning and PPO continue from its weights (fine-tuning).
	// DQN does not take it.
	Init *nn.MLP
	// Log, when set, gets progress lines.
	Log io.Writer
	// Parallel bounds the teacher episodes run at once (0: GOMAXPROCS).
	Parallel int
}

// DefaultPPO is PPO's fine-tuning config: CleanRL's defaults with a
// smaller learning rate and entropy bonus and a critic warm-up, so that the
// cloned actor improves rather than being relearned.
func DefaultPPO() ppo.Config {
	c := ppo.DefaultConfig()
	c.LR, c.EntCoef, c.NumSteps, c.CriticWarmup = 1e-4, 0.001, 256, 10
	return c
}

// DefaultDQN is DQN's config on the scheduling environment: CleanRL's
// defaults with a schedule scaled to the steps.
func DefaultDQN(steps int) dqn.Config {
	c := dqn.DefaultConfig()
	c.TotalSteps, c.LearningStarts, c.ExplorationFraction, c.TargetEvery = steps, min(2000, steps/10), 0.3, 500
	return c
}

// Result is a trained policy.
type Result struct {
	// Meta is the checkpoint's metadata (Eval and Converged unset).
	Meta checkpoints.Meta
	// Nets are the networks: "actor" and "critic" (BC, PPO) or "q" (DQN).
	Nets map[string]*nn.MLP
	// Samples is the number of teacher decisions cloned; Agreement the
	// share of held-back teacher decisions the cloned actor matches.
	Samples   int
	Agreement float64
	// Returns are the episodic returns PPO or DQN saw, in order.
	Returns []float64
}

// teacherName is the heuristic a direct policy clones (newTeacher builds
// it).
func teacherName(name string) string { return pdirect.TeacherOf(name) }

// newTeacher returns a fresh heuristic for name and its sync rule (nil when
// the heuristic chooses its own strategies).
func newTeacher(name string) (env.Proposer, policies.SyncRule) {
	if name == pdirect.SASRL {
		p, _ := sas.New(policies.Config{})
		r, _ := strn.NewSyncRule(policies.Config{})
		return p.(env.Proposer), r
	}
	p, _ := strn.New(policies.Config{})
	return p.(env.Proposer), nil
}

func (c *Config) defaults() error {
	c.Algo = cmp.Or(c.Algo, AlgoPPO)
	if c.Groups == 0 {
		c.Groups = sched.DefaultGroups
	}
	if c.Hidden == nil {
		c.Hidden = []int{64, 64}
	}
	c.TeacherEpisodes = cmp.Or(c.TeacherEpisodes, 6)
	c.BCEpochs, c.BCBatch, c.BCLR = cmp.Or(c.BCEpochs, 40), cmp.Or(c.BCBatch, 256), cmp.Or(c.BCLR, 1e-3)
	c.Steps = cmp.Or(c.Steps, 40000)
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Settings == nil {
		s, err := DefaultSettings()
		if err != nil {
			return err
		}
		c.Settings = s
	}
	switch {
	case c.Name != pdirect.STRNRL && c.Name != pdirect.SASRL:
		return fmt.Errorf("direct: unknown policy %q (want %s or %s)", c.Name, pdirect.STRNRL, pdirect.SASRL)
	case c.Algo != AlgoBC && c.Algo != AlgoPPO && c.Algo != AlgoDQN:
		return fmt.Errorf("direct: unknown algorithm %q (want %s, %s or %s)", c.Algo, AlgoBC, AlgoPPO, AlgoDQN)
	case c.Init != nil && c.Algo == AlgoDQN:
		return errors.New("direct: DQN does not start from an actor (Init)")
	case c.TeacherEpisodes < 0 || c.BCEpochs < 0 || c.BCBatch < 1 || !(c.BCLR > 0) || c.Steps < 1:
		return errors.New("direct: teacher episodes, epochs, batch, learning rate and steps must be positive")
	case slices.Contains(c.Hidden, 0) || slices.ContainsFunc(c.Hidden, func(h int) bool { return h < 0 || h > 4096 }):
		return fmt.Errorf("direct: hidden widths %v: want each in 1..4096", c.Hidden)
	}
	for i := range c.Settings {
		if err := c.Settings[i].prepare(); err != nil {
			return err
		}
	}
	return nil
}

// Train trains the direct policy cfg names: behaviour cloning on the
// heuristic's decisions (STRN's, or SAS's with STRN's sync rule), then PPO
// from the cloned actor; or DQN on the environments. The same config gives
// the same networks, bit for bit.
func Train(cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	scfg, err := pdirect.Config(cfg.Name, cfg.Groups, cfg.Hold)
	if err != nil {
		return Result{}, err
	}
	enc, err := sched.NewEncoder(scfg, &cfg.Settings[0].Cluster)
	if err != nil {
		return Result{}, err
	}
	obsDim, nA := enc.ObsDim(), enc.Actions()
	meta := checkpoints.Meta{Env: cfg.Name, Algo: cfg.Algo, Seed: cfg.Seed, ObsDim: obsDim, Actions: nA,
		Hidden: cfg.Hidden, Activation: "tanh", Networks: []string{"actor", "critic"}, Hyperparams: map[string]float64{}}
	if err := pdirect.PutConfig(meta.Hyperparams, scfg); err != nil {
		return Result{}, err
	}
	res := Result{Nets: map[string]*nn.MLP{}}
	if cfg.Algo == AlgoDQN {
		dc := cfg.DQN
		if dc.TotalSteps == 0 {
			dc = DefaultDQN(cfg.Steps)
		}
		dc.Seed, dc.TotalSteps, dc.Hidden = cfg.Seed, cfg.Steps, cfg.Hidden
		dc.Backend, dc.Device = cfg.Backend, cfg.Device
		if cfg.Backend != "" && cfg.Backend != nn.GoBackend {
			fmt.Fprintf(cfg.Log, "dqn: updates on the %s backend (device %s)\n", cfg.Backend, cmp.Or(cfg.Device, "cpu"))
		}
		e, err := newEnv(scfg, &cfg.Settings[0], cfg.WaitWeight)
		if err != nil {
			return Result{}, err
		}
		fmt.Fprintf(cfg.Log, "dqn: %d steps on %s\n", dc.TotalSteps, cfg.Settings[0].Name)
		q, err := dqn.Train(dc, e, func(u dqn.Update) {
			res.Returns = append(res.Returns, u.Return)
			fmt.Fprintf(cfg.Log, "dqn: step %d return %.1f epsilon %.2f td loss %.3g\n", u.Step, u.Return, u.Epsilon, u.TDLoss)
		})
		if err != nil {
			return Result{}, err
		}
		res.Nets["q"] = q
		meta.Activation, meta.Networks, meta.Steps = "relu", []string{"q"}, dc.TotalSteps
		meta.Hyperparams["lr"], meta.Hyperparams["gamma"] = dc.LR, float64(dc.Gamma)
		res.Meta = meta
		return res, nil
	}

	// Behaviour cloning.
	samples := collect(cfg, scfg)
	res.Samples = len(samples)
	if len(samples) == 0 {
		return Result{}, errors.New("direct: the teacher made no decision to clone")
	}
	fmt.Fprintf(cfg.Log, "bc: %d decisions of %s over %d settings x %d episodes\n", len(samples), teacherName(cfg.Name), len(cfg.Settings), cfg.TeacherEpisodes)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6263))
	agent := ppo.NewAgent(obsDim, nA, cfg.Hidden, rng)
	if cfg.Init != nil {
		dst, src := agent.Actor.Params(), cfg.Init.Params()
		if len(dst) != len(src) {
			return Result{}, fmt.Errorf("direct: Init has %d parameter tensors, want %d (hidden %v)", len(src), len(dst), cfg.Hidden)
		}
		for i := range dst {
			if len(dst[i].Value) != len(src[i].Value) {
				return Result{}, fmt.Errorf("direct: Init's %s has %d values, want %d (obs %d, actions %d, hidden %v)", src[i].Name, len(src[i].Value), len(dst[i].Value), obsDim, nA, cfg.Hidden)
			}
			copy(dst[i].Value, src[i].Value)
		}
	}
	res.Agreement = clone(agent.Actor, samples, cfg, rng)
	fmt.Fprintf(cfg.Log, "bc: agreement with the teacher on held-back decisions %.1f%%\n", 100*res.Agreement)
	meta.Hyperparams["bc_samples"], meta.Hyperparams["bc_agreement"] = float64(len(samples)), res.Agreement
	if cfg.Algo == AlgoPPO {
		pc := cfg.PPO
		if pc.TotalSteps == 0 {
			pc = DefaultPPO()
		}
		pc.Seed, pc.TotalSteps, pc.Hidden, pc.Init = cfg.Seed, cfg.Steps, cfg.Hidden, agent
		pc.Backend, pc.Device = cfg.Backend, cfg.Device
		if cfg.Backend != "" && cfg.Backend != nn.GoBackend {
			fmt.Fprintf(cfg.Log, "ppo: updates on the %s backend (device %s)\n", cfg.Backend, cmp.Or(cfg.Device, "cpu"))
		}
		pc.NumEnvs = max(pc.NumEnvs, len(cfg.Settings))
		pc.NumEnvs -= pc.NumEnvs % len(cfg.Settings)
		for (pc.NumEnvs*pc.NumSteps)%pc.NumMinibatches != 0 {
			pc.NumMinibatches--
		}
		fmt.Fprintf(cfg.Log, "ppo: %d steps on %d environments (%d settings), critic warm-up %d updates\n", pc.TotalSteps, pc.NumEnvs, len(cfg.Settings), pc.CriticWarmup)
		var mu sync.Mutex
		var mkErr error
		a, err := ppo.Train(pc, func(i int) gym.Env {
			e, err := newEnv(scfg, &cfg.Settings[i%len(cfg.Settings)], cfg.WaitWeight)
			if err != nil {
				mu.Lock()
				mkErr = err
				mu.Unlock()
				panic(err)
			}
			if cfg.NormalizeReward {
				return normalize(e, float64(pc.Gamma))
			}
			return e
		}, func(u ppo.Update) {
			res.Returns = append(res.Returns, u.Episodes...)
			if len(u.Episodes) > 0 {
				m := 0.0
				for _, r := range u.Episodes {
					m += r / float64(len(u.Episodes))
				}
				fmt.Fprintf(cfg.Log, "ppo: step %d mean return %.1f (%d episodes) value loss %.3g approx kl %.3g\n", u.Step, m, len(u.Episodes), u.ValueLoss, u.ApproxKL)
			}
		})
		if mkErr != nil {
			return Result{}, mkErr
		}
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
	res.Meta = meta
	return res, nil
}

// newEnv returns the scheduling environment of setting s.
func newEnv(scfg sched.Config, s *Setting, wait float64) (*sched.Env, error) {
	return sched.NewEnv(sched.EnvConfig{Encoder: scfg, NewJobs: s.NewJobs, Cluster: s.Cluster, NewModel: s.NewModel,
		RestartDelay: env.DefaultRestartDelay, WaitWeight: wait})
}

// collect runs the teacher's episodes (seeds from cfg.Seed up, per
// setting) and returns its decisions, in setting, episode and decision
// order whatever the parallelism.
func collect(cfg Config, scfg sched.Config) []pdirect.Sample {
	type job struct{ s, ep int }
	var jobs []job
	for s := range cfg.Settings {
		for ep := range cfg.TeacherEpisodes {
			jobs = append(jobs, job{s, ep})
		}
	}
	out := make([][]pdirect.Sample, len(jobs))
	par := cmp.Or(cfg.Parallel, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for i, jb := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			st := &cfg.Settings[jb.s]
			seed := cfg.Seed*1000 + uint64(jb.ep)
			prop, rule := newTeacher(cfg.Name)
			t := pdirect.Teacher(scfg, prop, rule, func(s pdirect.Sample) { out[i] = append(out[i], s) })
			sim, err := env.New(env.Config{Cluster: st.Cluster, Model: st.NewModel(seed), RestartDelay: env.DefaultRestartDelay}, st.NewJobs(seed))
			if err == nil {
				err = sim.Run(t, nil)
			}
			if err != nil {
				panic(fmt.Sprintf("direct: teacher episode on %s: %v", st.Name, err))
			}
		}()
	}
	wg.Wait()
	var all []pdirect.Sample
	for _, o := range out {
		all = append(all, o...)
	}
	fmt.Fprintf(cfg.Log, "bc: %d teacher episodes\n", len(jobs))
	return all
}

// clone fits actor to the teacher's samples (bc.Clone, logging every
// 10 epochs) and returns the share of held-back samples on which the
// greedy policy takes the teacher's action.
func clone(actor *nn.MLP, samples []pdirect.Sample, cfg Config, rng *rand.Rand) float64 {
	bs := make([]bc.Sample, len(samples))
	for i, s := range samples {
		bs[i] = bc.Sample(s)
	}
	c := bc.Config{Epochs: cfg.BCEpochs, Batch: cfg.BCBatch, LR: cfg.BCLR, LogEvery: 10, Log: cfg.Log}
	return bc.Clone(actor, bs, c, rng, func(a *nn.MLP) bc.Actor { return pdirect.Greedy(a) })
}
