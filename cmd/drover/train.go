package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/agents/bandit"
	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/cartpole"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/train"
	"github.com/drover-sched/drover/train/runlog"
)

// runTrain trains an agent. Every run writes its directory (--out, or
// runs/<env>__<algo>__<seed>__<unix time>): config.yaml, a TensorBoard
// event file and scalars.csv with CleanRL's tags, and the checkpoint
// (weights.safetensors + meta.json).
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	envName := fs.String("env", "placement", "environment: placement or sync (the built-in workload; learned vs the heuristics), sas-rl or strn-rl (choose among the heuristic's candidates; judged on the held-out Helios and PAI workloads), or cartpole (the known-answer check)")
	algo := fs.String("algo", "ppo", "algorithm: ppo or dqn (cartpole); ppo or bandit (sas-rl, strn-rl: a contextual bandit scoring each decision by counterfactual replays, or by its job's own slowdown with train.credit: own)")
	steps := fs.Int("steps", 0, "environment steps (default: 500000 for cartpole, 100000 for placement)")
	seed := fs.Uint64("seed", 1, "random seed")
	quiet := fs.Bool("quiet", false, "no progress output")
	out := fs.String("out", "", "the run directory: config.yaml, TensorBoard events, scalars.csv and the checkpoint (default runs/<env>__<algo>__<seed>__<unix time>)")
	evalSeeds := fs.Int("eval-seeds", 5, "sas-rl, strn-rl: held-out seeds per workload (Helios; PAI gets half; 0: no held-out evaluation)")
	configFile := fs.String("config", "", "YAML file with sections train (env, algo, steps, seed, eval_seeds, ...: docs/format/train-config.md), ppo and dqn (the agents' config fields in snake_case); flags given on the command line win")
	if err := parse(fs, args); err != nil {
		return err
	}
	r := &trainRun{train: trainConfig{Env: *envName, Algo: *algo, Steps: *steps, Seed: *seed, EvalSeeds: *evalSeeds}, ppo: ppo.DefaultConfig(), dqn: dqn.DefaultConfig()}
	if *configFile != "" {
		if err := runlog.LoadConfig(*configFile, r.sections()...); err != nil {
			return err
		}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "env":
				r.train.Env = *envName
			case "algo":
				r.train.Algo = *algo
			case "steps":
				r.train.Steps = *steps
			case "seed":
				r.train.Seed = *seed
			case "eval-seeds":
				r.train.EvalSeeds = *evalSeeds
			}
		})
	}
	tc := &r.train
	cluster := tc.Env == "placement" || tc.Env == "sync" || tc.Env == "sas-rl" || tc.Env == "strn-rl"
	switch {
	case (tc.Env == "sas-rl" || tc.Env == "strn-rl") && tc.Algo != "ppo" && tc.Algo != "bandit":
		return fmt.Errorf("--env %s trains with --algo ppo or bandit (got %s)", tc.Env, tc.Algo)
	case cluster && tc.Env != "sas-rl" && tc.Env != "strn-rl" && tc.Algo != "ppo":
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
	r.ppo.Seed, r.ppo.TotalSteps = tc.Seed, tc.Steps
	r.dqn.Seed, r.dqn.TotalSteps = tc.Seed, tc.Steps
	if (tc.Env == "sas-rl" || tc.Env == "strn-rl") && r.ppo.ActionPrior == nil {
		r.ppo.ActionPrior = variantPrior()
	}
	if tc.Env == "cartpole" {
		r.dqn.LearningStarts = min(r.dqn.LearningStarts, tc.Steps/5)
	}
	r.dir = *out
	if r.dir == "" {
		r.dir = filepath.Join("runs", runlog.RunName(tc.Env, tc.Algo, tc.Seed, time.Now()))
	}
	if err := r.open(*quiet, stdout, stderr); err != nil {
		return err
	}
	defer r.close()
	if cluster {
		var nets map[string]*nn.MLP
		var scores map[string]float64
		var verdict train.Verdict
		var err error
		if tc.Env == "sas-rl" || tc.Env == "strn-rl" {
			nets, scores, verdict, err = trainVariant(tc.Env, r, stdout)
		} else {
			var agent *ppo.Agent
			agent, scores, verdict, err = trainPlacement(tc.Env == "sync", r, stdout)
			if agent != nil {
				nets = map[string]*nn.MLP{"actor": agent.Actor, "critic": agent.Critic}
			}
		}
		if err != nil {
			return err
		}
		meta := checkpoints.Meta{Env: tc.Env, Algo: tc.Algo, Seed: tc.Seed, Steps: tc.Steps, Hidden: r.ppo.Hidden, Activation: "tanh",
			Networks: []string{"actor", "critic"}, Eval: scores, Converged: verdict.Converged, Hyperparams: ppoHyper(r.ppo)}
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
		if err := checkpoints.Save(r.dir, meta, nets); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "checkpoint %s\n", r.dir)
		return r.finish(stdout)
	}
	var episodes []float64
	start := time.Now()
	var err error
	var meta checkpoints.Meta
	nets := map[string]*nn.MLP{}
	if tc.Algo == "ppo" {
		var agent *ppo.Agent
		agent, err = ppo.Train(r.ppo, func(int) gym.Env { return cartpole.New() }, func(u ppo.Update) {
			episodes = append(episodes, u.Episodes...)
			r.ppoReport(u)
		})
		if agent != nil {
			nets["actor"], nets["critic"] = agent.Actor, agent.Critic
		}
		meta = checkpoints.Meta{Hidden: r.ppo.Hidden, Activation: "tanh", Networks: []string{"actor", "critic"}, Hyperparams: ppoHyper(r.ppo)}
	} else {
		cfg := r.dqn
		var q *nn.MLP
		q, err = dqn.Train(cfg, cartpole.New(), func(u dqn.Update) {
			episodes = append(episodes, u.Return)
			r.dqnReport(u)
		})
		nets["q"] = q
		meta = checkpoints.Meta{Hidden: cfg.Hidden, Activation: "relu", Networks: []string{"q"},
			Hyperparams: map[string]float64{"lr": cfg.LR, "gamma": float64(cfg.Gamma), "buffer_size": float64(cfg.BufferSize),
				"target_every": float64(cfg.TargetEvery), "batch_size": float64(cfg.BatchSize), "learning_starts": float64(cfg.LearningStarts),
				"train_every": float64(cfg.TrainEvery)}}
	}
	if err != nil {
		return err
	}
	if err := r.close(); err != nil {
		return err
	}
	n := min(20, len(episodes))
	mean := 0.0
	for _, ret := range episodes[len(episodes)-n:] {
		mean += ret
	}
	if n > 0 {
		mean /= float64(n)
	}
	verdict := "below"
	if mean >= 475 {
		verdict = "reaches"
	}
	ref := map[string]string{"ppo": "490 +- 6", "dqn": "489 +- 16"}[tc.Algo]
	fmt.Fprintf(stdout, "episodes %d; mean return over the last %d: %.1f (%s the 475 target; CleanRL's %s: %s)\n", len(episodes), n, mean, verdict, tc.Algo, ref)
	fmt.Fprintf(stdout, "wall time %s (%.0f steps/s)\n", time.Since(start).Round(time.Millisecond), float64(tc.Steps)/time.Since(start).Seconds())
	env := cartpole.New()
	meta.Env, meta.Algo, meta.Seed, meta.Steps = tc.Env, tc.Algo, tc.Seed, tc.Steps
	meta.ObsDim, meta.Actions = env.ObservationSpace().Shape(), env.ActionSpace().N
	meta.Eval = map[string]float64{fmt.Sprintf("mean_return_last%d", n): mean}
	if err := checkpoints.Save(r.dir, meta, nets); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "checkpoint %s\n", r.dir)
	return r.finish(stdout)
}

// ppoHyper lists PPO's hyperparameters for the checkpoint metadata.
func ppoHyper(cfg ppo.Config) map[string]float64 {
	return map[string]float64{"lr": cfg.LR, "gamma": float64(cfg.Gamma), "gae_lambda": float64(cfg.Lambda), "clip": float64(cfg.Clip),
		"ent_coef": float64(cfg.EntCoef), "vf_coef": float64(cfg.VfCoef), "max_grad_norm": cfg.MaxGradNorm,
		"num_envs": float64(cfg.NumEnvs), "num_steps": float64(cfg.NumSteps), "num_minibatches": float64(cfg.NumMinibatches), "update_epochs": float64(cfg.UpdateEpochs)}
}

// CurveFile is the learning-curve plot of a run directory.
const CurveFile = "learning-curve.png"

// finish closes the logs, plots the learning curve and says where they
// are.
func (r *trainRun) finish(stdout io.Writer) error {
	if err := r.close(); err != nil {
		return err
	}
	if len(r.curve) > 0 {
		raw := plot.Series{Name: "episodic return"}
		for _, p := range r.curve {
			raw.X, raw.Y = append(raw.X, p[0]), append(raw.Y, p[1])
		}
		// A trailing mean over 20 points, as one reads a noisy curve.
		smooth := plot.Series{Name: "mean of the last 20"}
		for i := range raw.Y {
			lo, sum := max(0, i-19), 0.0
			for _, y := range raw.Y[lo : i+1] {
				sum += y
			}
			smooth.X, smooth.Y = append(smooth.X, raw.X[i]), append(smooth.Y, sum/float64(i+1-lo))
		}
		path := filepath.Join(r.dir, CurveFile)
		o := plot.Options{Title: fmt.Sprintf("%s, %s, seed %d", r.train.Env, r.train.Algo, r.train.Seed), XLabel: "environment steps", YLabel: "episodic return"}
		if err := plot.WriteFile(path, func(w io.Writer) error { return plot.Lines(w, o, []plot.Series{raw, smooth}) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "logs %s (tensorboard --logdir %s; scalars.csv; %s)\n", r.dir, filepath.Dir(r.dir), CurveFile)
	return nil
}
