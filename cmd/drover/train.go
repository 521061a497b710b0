package main

import (
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/env/cartpole"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/internal/progress"
)

// runTrain trains an agent. This first version covers PPO and DQN on CartPole-v1,
// the known-answer check of the learning issue; the cluster environments,
// DQN, checkpoints and the convergence gate follow.
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	envName := fs.String("env", "cartpole", "environment: cartpole")
	algo := fs.String("algo", "ppo", "algorithm: ppo or dqn")
	steps := fs.Int("steps", 500000, "environment steps")
	seed := fs.Uint64("seed", 1, "random seed")
	quiet := fs.Bool("quiet", false, "no progress output")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *envName != "cartpole" || (*algo != "ppo" && *algo != "dqn") {
		return fmt.Errorf("only --env cartpole with --algo ppo or dqn is built so far (got %s/%s)", *envName, *algo)
	}
	var bar *progress.Bar
	if !*quiet {
		bar = progress.New(stderr, "train", *steps)
	}
	var episodes []float64
	start := time.Now()
	var err error
	if *algo == "ppo" {
		cfg := ppo.DefaultConfig()
		cfg.Seed, cfg.TotalSteps = *seed, *steps
		fmt.Fprintf(stdout, "config %+v\n", cfg)
		_, err = ppo.Train(cfg, func(int) gym.Env { return cartpole.New() }, func(u ppo.Update) {
			episodes = append(episodes, u.Episodes...)
			if bar != nil {
				bar.Set(u.Step)
			}
		})
	} else {
		cfg := dqn.DefaultConfig()
		cfg.Seed, cfg.TotalSteps = *seed, *steps
		cfg.LearningStarts = min(cfg.LearningStarts, *steps/5)
		fmt.Fprintf(stdout, "config %+v\n", cfg)
		_, err = dqn.Train(cfg, cartpole.New(), func(u dqn.Update) {
			episodes = append(episodes, u.Return)
			if bar != nil {
				bar.Set(u.Step)
			}
		})
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
	return nil
}
