package main

import (
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/cartpole"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/train"
)

// runTrain trains an agent. This first version covers PPO and DQN on CartPole-v1,
// the known-answer check of the learning issue; the cluster environments,
// DQN, checkpoints and the convergence gate follow.
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	envName := fs.String("env", "placement", "environment: placement or sync (the built-in workload; learned vs the heuristics), sas-rl or strn-rl (choose among the heuristic's candidates; judged on the held-out Helios and PAI workloads), or cartpole (the known-answer check)")
	algo := fs.String("algo", "ppo", "algorithm: ppo or dqn")
	steps := fs.Int("steps", 0, "environment steps (default: 500000 for cartpole, 100000 for placement)")
	seed := fs.Uint64("seed", 1, "random seed")
	quiet := fs.Bool("quiet", false, "no progress output")
	out := fs.String("out", "", "write a checkpoint (weights.safetensors + meta.json) to this directory")
	evalSeeds := fs.Int("eval-seeds", 5, "sas-rl, strn-rl: held-out seeds per workload (Helios; PAI gets half)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *envName == "placement" || *envName == "sync" || *envName == "sas-rl" || *envName == "strn-rl" {
		if *algo != "ppo" {
			return fmt.Errorf("--env %s trains with --algo ppo so far (got %s)", *envName, *algo)
		}
		if *steps == 0 {
			*steps = 100000
		}
		var agent *ppo.Agent
		var scores map[string]float64
		var verdict train.Verdict
		var err error
		if *envName == "sas-rl" || *envName == "strn-rl" {
			agent, scores, verdict, err = trainVariant(*envName, *steps, *seed, *evalSeeds, *quiet, stdout, stderr)
		} else {
			agent, scores, verdict, err = trainPlacement(*steps, *seed, *envName == "sync", *quiet, stdout, stderr)
		}
		if err != nil {
			return err
		}
		if *out != "" {
			meta := checkpoints.Meta{Env: *envName, Algo: "ppo", Seed: *seed, Steps: *steps, Hidden: ppo.DefaultConfig().Hidden, Activation: "tanh",
				Networks: []string{"actor", "critic"}, Eval: scores, Converged: verdict.Converged}
			meta.ObsDim, meta.Actions = agent.Actor.Linears()[0].In, agent.Actor.Linears()[len(agent.Actor.Linears())-1].Out
			if err := checkpoints.Save(*out, meta, map[string]*nn.MLP{"actor": agent.Actor, "critic": agent.Critic}); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "checkpoint %s\n", *out)
		}
		return nil
	}
	if *envName != "cartpole" || (*algo != "ppo" && *algo != "dqn") {
		return fmt.Errorf("unknown environment or algorithm %s/%s (want placement, sync or cartpole; ppo or dqn)", *envName, *algo)
	}
	if *steps == 0 {
		*steps = 500000
	}
	var bar *progress.Bar
	if !*quiet {
		bar = progress.New(stderr, "train", *steps)
	}
	var episodes []float64
	start := time.Now()
	var err error
	var meta checkpoints.Meta
	nets := map[string]*nn.MLP{}
	if *algo == "ppo" {
		cfg := ppo.DefaultConfig()
		cfg.Seed, cfg.TotalSteps = *seed, *steps
		fmt.Fprintf(stdout, "config %+v\n", cfg)
		var agent *ppo.Agent
		agent, err = ppo.Train(cfg, func(int) gym.Env { return cartpole.New() }, func(u ppo.Update) {
			episodes = append(episodes, u.Episodes...)
			if bar != nil {
				bar.Set(u.Step)
			}
		})
		if agent != nil {
			nets["actor"], nets["critic"] = agent.Actor, agent.Critic
		}
		meta = checkpoints.Meta{Hidden: cfg.Hidden, Activation: "tanh", Networks: []string{"actor", "critic"},
			Hyperparams: map[string]float64{"lr": cfg.LR, "gamma": float64(cfg.Gamma), "gae_lambda": float64(cfg.Lambda), "clip": float64(cfg.Clip),
				"ent_coef": float64(cfg.EntCoef), "vf_coef": float64(cfg.VfCoef), "max_grad_norm": cfg.MaxGradNorm,
				"num_envs": float64(cfg.NumEnvs), "num_steps": float64(cfg.NumSteps), "num_minibatches": float64(cfg.NumMinibatches), "update_epochs": float64(cfg.UpdateEpochs)}}
	} else {
		cfg := dqn.DefaultConfig()
		cfg.Seed, cfg.TotalSteps = *seed, *steps
		cfg.LearningStarts = min(cfg.LearningStarts, *steps/5)
		fmt.Fprintf(stdout, "config %+v\n", cfg)
		var q *nn.MLP
		q, err = dqn.Train(cfg, cartpole.New(), func(u dqn.Update) {
			episodes = append(episodes, u.Return)
			if bar != nil {
				bar.Set(u.Step)
			}
		})
		nets["q"] = q
		meta = checkpoints.Meta{Hidden: cfg.Hidden, Activation: "relu", Networks: []string{"q"},
			Hyperparams: map[string]float64{"lr": cfg.LR, "gamma": float64(cfg.Gamma), "buffer_size": float64(cfg.BufferSize),
				"target_every": float64(cfg.TargetEvery), "batch_size": float64(cfg.BatchSize), "learning_starts": float64(cfg.LearningStarts),
				"train_every": float64(cfg.TrainEvery)}}
	}
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	n := min(20, len(episodes))
	mean := 0.0
	for _, r := range episodes[len(episodes)-n:] {
		mean += r
	}
	if n > 0 {
		mean /= float64(n)
	}
	verdict := "below"
	if mean >= 475 {
		verdict = "reaches"
	}
	ref := map[string]string{"ppo": "490 +- 6", "dqn": "489 +- 16"}[*algo]
	fmt.Fprintf(stdout, "episodes %d; mean return over the last %d: %.1f (%s the 475 target; CleanRL's %s: %s)\n", len(episodes), n, mean, verdict, *algo, ref)
	fmt.Fprintf(stdout, "wall time %s (%.0f steps/s)\n", time.Since(start).Round(time.Millisecond), float64(*steps)/time.Since(start).Seconds())
	if *out != "" {
		env := cartpole.New()
		meta.Env, meta.Algo, meta.Seed, meta.Steps = *envName, *algo, *seed, *steps
		meta.ObsDim, meta.Actions = env.ObservationSpace().Shape(), env.ActionSpace().N
		meta.Eval = map[string]float64{fmt.Sprintf("mean_return_last%d", n): mean}
		if err := checkpoints.Save(*out, meta, nets); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "checkpoint %s\n", *out)
	}
	return nil
}
