package runlog

// Tags of the scalars `drover train` logs. They are CleanRL's (ppo.py and
// dqn.py), so that Drover's runs and CleanRL's plot side by side in
// TensorBoard.
const (
	// TagEpisodicReturn is an episode's undiscounted return, logged at the
	// step the episode ended.
	TagEpisodicReturn = "charts/episodic_return"
	// TagEpisodicLength is an episode's length in steps.
	TagEpisodicLength = "charts/episodic_length"
	// TagLearningRate is the optimizer's learning rate after annealing.
	TagLearningRate = "charts/learning_rate"
	// TagSPS is the environment steps per second since the start.
	TagSPS = "charts/SPS"
	// TagEpsilon is DQN's exploration rate.
	TagEpsilon = "charts/epsilon"

	// TagValueLoss is PPO's (clipped) value loss of the update's last minibatch.
	TagValueLoss = "losses/value_loss"
	// TagPolicyLoss is PPO's clipped surrogate loss.
	TagPolicyLoss = "losses/policy_loss"
	// TagEntropy is the policy's mean entropy.
	TagEntropy = "losses/entropy"
	// TagOldApproxKL is the KL estimate mean(-log ratio).
	TagOldApproxKL = "losses/old_approx_kl"
	// TagApproxKL is the KL estimate mean((ratio-1) - log ratio).
	TagApproxKL = "losses/approx_kl"
	// TagClipFrac is the fraction of samples whose ratio was clipped.
	TagClipFrac = "losses/clipfrac"
	// TagExplainedVariance is 1 - Var(returns - values)/Var(returns), NaN
	// when the returns do not vary.
	TagExplainedVariance = "losses/explained_variance"
	// TagTDLoss is DQN's mean squared TD error.
	TagTDLoss = "losses/td_loss"
	// TagQValues is DQN's mean Q-value of the actions taken.
	TagQValues = "losses/q_values"

	// TagEvalEpisodicReturn is the return of an evaluation episode
	// (CleanRL's dqn.py logs it by episode index).
	TagEvalEpisodicReturn = "eval/episodic_return"
)
