package train

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/cartpole"
	"github.com/drover-sched/drover/env/gym"
)

// cartpole trains PPO or DQN on CartPole, the known-answer check: it
// reports the mean return of the last 20 episodes against the 475 target
// and CleanRL's results, and saves the checkpoint.
func (r *Run) cartpole() (Result, error) {
	tc := &r.Train
	var episodes []float64
	start := time.Now()
	var err error
	var meta checkpoints.Meta
	nets := map[string]*nn.MLP{}
	if tc.Algo == "ppo" {
		var agent *ppo.Agent
		agent, err = ppo.Train(r.PPO, func(int) gym.Env { return cartpole.New() }, func(u ppo.Update) {
			episodes = append(episodes, u.Episodes...)
			r.ppoReport(u)
		})
		if agent != nil {
			nets["actor"], nets["critic"] = agent.Actor, agent.Critic
		}
		meta = checkpoints.Meta{Hidden: r.PPO.Hidden, Activation: "tanh", Networks: []string{"actor", "critic"}, Hyperparams: ppoHyper(r.PPO)}
	} else {
		cfg := r.DQN
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
		return Result{}, err
	}
	if err := r.close(); err != nil {
		return Result{}, err
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
	fmt.Fprintf(r.w, "episodes %d; mean return over the last %d: %.1f (%s the 475 target; CleanRL's %s: %s)\n", len(episodes), n, mean, verdict, tc.Algo, ref)
	fmt.Fprintf(r.w, "wall time %s (%.0f steps/s)\n", time.Since(start).Round(time.Millisecond), float64(tc.Steps)/time.Since(start).Seconds())
	env := cartpole.New()
	meta.Env, meta.Algo, meta.Seed, meta.Steps = tc.Env, tc.Algo, tc.Seed, tc.Steps
	meta.ObsDim, meta.Actions = env.ObservationSpace().Shape(), env.ActionSpace().N
	meta.Eval = map[string]float64{fmt.Sprintf("mean_return_last%d", n): mean}
	if err := checkpoints.Save(r.Dir, meta, nets); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(r.w, "checkpoint %s\n", r.Dir)
	return Result{Meta: meta}, r.finish()
}
