// Package ppo holds the pieces of proximal policy optimization (Schulman et
// al., 2017) as CleanRL's ppo.py implements it, checked against worked
// numbers and naive reference implementations: generalized advantage
// estimation that keeps termination and truncation apart, and the clipped
// surrogate and value losses. The training loop that drives them comes with
// the learning issue.
//
// # Usage
//
//	// After a rollout of T steps from one environment:
//	ppo.GAE(rewards, values, nextValues, terminated, truncated, 0.99, 0.95, adv, ret)
//	// For each minibatch:
//	ppo.NormalizeAdvantages(mbAdv)
//	pl, dLogp := ppo.ClippedPolicyLoss(newLogp, oldLogp, mbAdv, 0.2, dLogp)
//	vl, dV := ppo.ClippedValueLoss(newV, oldV, mbRet, 0.2, dV)
package ppo
