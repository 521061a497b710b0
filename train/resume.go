package train

import (
	"errors"
	"fmt"
	"slices"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
)

// ErrNotResumable is what ResumeFrom returns for a run whose trainer
// cannot start from a checkpoint: DQN (dqn.Train builds its Q-network
// afresh) and the bandit re-ranker.
var ErrNotResumable = errors.New("train: this run cannot start from a checkpoint")

// ResumeFrom makes r start from the checkpoint (m, nets) that an earlier
// run of the same environment saved with PPO: the actor and critic are
// copied (ppo.Config.Init) and the checkpoint's hidden widths kept. It is
// a warm start, not a bit-exact continuation: Adam's moments, the
// learning-rate schedule and the step count start afresh, and the run
// trains Train.Steps more steps. The checkpoint is marked with the
// hyperparameter init = 1. DQN and bandit runs are ErrNotResumable; a
// checkpoint of another environment or algorithm, or without a tanh actor
// and critic, is an error.
func (r *Run) ResumeFrom(m checkpoints.Meta, nets map[string]*nn.MLP) error {
	algo := r.Train.Algo
	if algo == "rerank-ppo" {
		algo = "ppo"
	}
	if algo != "ppo" {
		return fmt.Errorf("%w: --env %s --algo %s (only PPO runs start from a checkpoint's actor and critic)", ErrNotResumable, r.Train.Env, r.Train.Algo)
	}
	if m.Env != "" && m.Env != r.Train.Env || m.Algo != "" && m.Algo != "ppo" {
		return fmt.Errorf("train: resume: the checkpoint is of %s/%s, training %s/ppo", m.Env, m.Algo, r.Train.Env)
	}
	actor, critic := nets["actor"], nets["critic"]
	if actor == nil || critic == nil || m.Activation != "tanh" {
		return fmt.Errorf("train: resume: the checkpoint (%s/%s, %s) has no tanh actor and critic to start from", m.Env, m.Algo, m.Activation)
	}
	if err := nn.CheckHidden(m.Hidden); err != nil {
		return fmt.Errorf("train: resume: the checkpoint's hidden %v: %w", m.Hidden, err)
	}
	r.PPO.Hidden = slices.Clone(m.Hidden)
	r.PPO.Init = &ppo.Agent{Actor: actor, Critic: critic}
	return nil
}
