package train

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/agents/bandit"
	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/train/runlog"
)

// Run is one training run: its effective configs, where it writes, and
// what it reports. Build it with NewRun, overlay a config file on its
// Sections (runlog.LoadConfig), then Execute it.
type Run struct {
	// Dir is the run directory: config.yaml, the TensorBoard event file,
	// scalars.csv, the learning curve and the checkpoint. Empty: Execute
	// sets it to runs/<env>__<algo>__<seed>__<unix time> (runlog.RunName).
	// It must not hold files yet (runlog.CheckFreshDir).
	Dir string
	// Train is the pipeline's config: environment, algorithm, steps,
	// seed, workloads and held-out evaluation.
	Train Config
	// PPO and DQN are the agents' configs; Execute sets their Seed and
	// TotalSteps from Train.
	PPO ppo.Config
	DQN dqn.Config
	// Out receives the run's report: the effective config at the start,
	// evaluations during training, the held-out tables, the gate's
	// verdicts and where the files went. Nil: the report is discarded.
	Out io.Writer
	// Progress, when not nil, receives a progress bar of the training
	// steps.
	Progress io.Writer

	w   io.Writer // Out, or io.Discard
	log *runlog.Logger
	// support is the box Algo bandit's choices are restricted to
	// (Config.Support), saved in the checkpoint; nil without one.
	support *checkpoints.Support
	start   time.Time
	bar     *progress.Bar
	// curve is the learning curve: the mean return of the episodes that
	// ended in each update (PPO) or each episode's return (DQN).
	curve [][2]float64
	// evalEnv, when set, is where the greedy policy is evaluated during
	// training, on periodicSeeds, about ten times per run (evalRuns).
	evalEnv  *placement.Env
	updates  int
	baseline [2]float64 // first-valid-action JCT and TTA on periodicSeeds (0: not yet)
}

// NewRun returns a run of cfg with the agents' default configs
// (ppo.DefaultConfig, dqn.DefaultConfig).
func NewRun(cfg Config) *Run {
	return &Run{Train: cfg, PPO: ppo.DefaultConfig(), DQN: dqn.DefaultConfig()}
}

// Result is what a run produced besides its files.
type Result struct {
	// Meta is the saved checkpoint's metadata; its Eval holds the run's
	// scores (held-out means, or CartPole's mean return).
	Meta checkpoints.Meta
	// Verdict is the convergence gate's verdict on the held-out
	// episodes (the zero Verdict for cartpole).
	Verdict Verdict
}

// Sections are the config file's sections, bound to r's configs: train
// (Config), ppo and dqn.
func (r *Run) Sections() []runlog.Section {
	return []runlog.Section{{Name: "train", Config: &r.Train}, {Name: "ppo", Config: &r.PPO}, {Name: "dqn", Config: &r.DQN}}
}

// isVariant reports whether env is a learned variant of a heuristic.
func isVariant(env string) bool { return env == "sas-rl" || env == "strn-rl" }

// resolve checks the environment and algorithm and fills in the defaults
// that depend on them: the steps, the agents' seed and steps, the
// variants' action prior and CartPole's DQN warm-up.
func (r *Run) resolve() error {
	tc := &r.Train
	cluster := tc.Env == "placement" || tc.Env == "sync" || isVariant(tc.Env)
	switch {
	case isVariant(tc.Env) && tc.Algo != "ppo" && tc.Algo != "bandit":
		return fmt.Errorf("--env %s trains with --algo ppo or bandit (got %s)", tc.Env, tc.Algo)
	case cluster && !isVariant(tc.Env) && tc.Algo != "ppo":
		return fmt.Errorf("--env %s trains with --algo ppo so far (got %s)", tc.Env, tc.Algo)
	case !cluster && (tc.Env != "cartpole" || (tc.Algo != "ppo" && tc.Algo != "dqn")):
		return fmt.Errorf("unknown environment or algorithm %s/%s (want placement, sync, sas-rl, strn-rl or cartpole; ppo or dqn)", tc.Env, tc.Algo)
	}
	if tc.Steps == 0 {
		tc.Steps = 500000
		if cluster {
			tc.Steps = 100000
		}
	}
	r.PPO.Seed, r.PPO.TotalSteps = tc.Seed, tc.Steps
	r.DQN.Seed, r.DQN.TotalSteps = tc.Seed, tc.Steps
	if isVariant(tc.Env) && r.PPO.ActionPrior == nil {
		r.PPO.ActionPrior = variantPrior()
	}
	if tc.Env == "cartpole" {
		r.DQN.LearningStarts = min(r.DQN.LearningStarts, tc.Steps/5)
	}
	return nil
}

// Execute runs the pipeline: it checks the config (Validate) and fills in
// its defaults, refuses a Dir that holds files (runlog.CheckFreshDir: a
// run never mixes its logs with an earlier run's), opens the run directory and reports the config, trains,
// evaluates (for the cluster environments: against the heuristics on
// held-out episodes, with the gate's verdict), saves the checkpoint and
// plots the learning curve. Training on placement, sync, sas-rl and
// strn-rl reads the shared traces from ../shared/traces relative to the
// working directory when it evaluates on Helios and PAI.
func (r *Run) Execute() (Result, error) {
	if err := r.Validate(); err != nil {
		return Result{}, err
	}
	if err := r.resolve(); err != nil {
		return Result{}, err
	}
	r.w = cmp.Or(r.Out, io.Writer(io.Discard))
	if r.Dir == "" {
		r.Dir = filepath.Join("runs", runlog.RunName(r.Train.Env, r.Train.Algo, r.Train.Seed, time.Now()))
	}
	if err := runlog.CheckFreshDir(r.Dir); err != nil {
		return Result{}, err
	}
	if err := r.open(); err != nil {
		return Result{}, err
	}
	defer r.close()
	be, dev := r.PPO.Backend, r.PPO.Device
	if r.Train.Algo == "dqn" {
		be, dev = r.DQN.Backend, r.DQN.Device
	}
	if be != "" && be != nn.GoBackend {
		fmt.Fprintf(r.w, "updates on the %s backend (device %s)\n", be, cmp.Or(dev, "cpu"))
	}
	if r.Train.Env == "cartpole" {
		return r.cartpole()
	}
	return r.cluster()
}

// cluster trains on a cluster environment (placement, sync, sas-rl,
// strn-rl), evaluates on held-out episodes and saves the checkpoint.
func (r *Run) cluster() (Result, error) {
	tc := &r.Train
	var nets map[string]*nn.MLP
	var scores map[string]float64
	var verdict Verdict
	var err error
	if isVariant(tc.Env) {
		nets, scores, verdict, err = trainVariant(r)
	} else {
		var agent *ppo.Agent
		agent, scores, verdict, err = trainPlacement(r, tc.Env == "sync")
		if agent != nil {
			nets = map[string]*nn.MLP{"actor": agent.Actor, "critic": agent.Critic}
		}
	}
	if err != nil {
		return Result{}, err
	}
	meta := checkpoints.Meta{Env: tc.Env, Algo: tc.Algo, Seed: tc.Seed, Steps: tc.Steps, Hidden: r.PPO.Hidden, Activation: "tanh",
		Networks: []string{"actor", "critic"}, Eval: scores, Converged: verdict.Converged, Hyperparams: ppoHyper(r.PPO)}
	first := nets["actor"]
	if tc.Algo == "bandit" {
		first = nets["q"]
		meta.Hidden, meta.Activation, meta.Networks, meta.Hyperparams = bandit.DefaultConfig().Hidden, "relu", []string{"q"}, nil
		if first == nil { // an ensemble: q0, q1, ... and its rule
			meta.Networks = nil
			for h := range len(nets) {
				meta.Networks = append(meta.Networks, fmt.Sprintf("q%d", h))
			}
			first = nets["q0"]
			meta.Hyperparams = map[string]float64{"heads": float64(len(nets)), "margin": tc.Margin, "lower_z": cmp.Or(tc.LowerZ, 1)}
		}
	}
	meta.ObsDim, meta.Actions = first.Linears()[0].In, first.Linears()[len(first.Linears())-1].Out
	if r.support != nil && r.support.Added() > 0 {
		meta.Support = r.support
	}
	if err := checkpoints.Save(r.Dir, meta, nets); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(r.w, "checkpoint %s\n", r.Dir)
	return Result{Meta: meta, Verdict: verdict}, r.finish()
}

// ppoHyper lists PPO's hyperparameters for the checkpoint metadata.
func ppoHyper(cfg ppo.Config) map[string]float64 {
	h := map[string]float64{"lr": cfg.LR, "gamma": float64(cfg.Gamma), "gae_lambda": float64(cfg.Lambda), "clip": float64(cfg.Clip),
		"ent_coef": float64(cfg.EntCoef), "vf_coef": float64(cfg.VfCoef), "max_grad_norm": cfg.MaxGradNorm,
		"num_envs": float64(cfg.NumEnvs), "num_steps": float64(cfg.NumSteps), "num_minibatches": float64(cfg.NumMinibatches), "update_epochs": float64(cfg.UpdateEpochs)}
	if cfg.Init != nil {
		h["init"] = 1 // started from a checkpoint (ResumeFrom)
	}
	return h
}
