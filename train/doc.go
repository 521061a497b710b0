// Package train holds what turns a training run into a decision: the
// convergence gate that lets a learned policy replace the heuristic only
// when it beats it on held-out episodes by a margin, with confidence. (The
// training loops live with the algorithms, in agents/ppo and agents/dqn;
// `drover train` drives them.)
//
// # Usage
//
//	// Per held-out episode (same seeds), the learned and the heuristic
//	// policy's average JCT (lower is better):
//	v := train.Gate(learnedJCT, heuristicJCT, train.GateConfig{Seed: 1})
//	if v.Converged { ... switch to the learned policy ... }
package train
