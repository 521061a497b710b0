// Package bc is behaviour cloning: an actor network learns a teacher's
// decisions by minimising the masked cross-entropy of the teacher's
// actions (Adam, shuffled minibatches, gradients clipped to norm 1), the
// warm start both learned-policy trainers give PPO (train/direct clones
// STRN and SAS, train/pdrl clones HACK's router). A Sample is one
// recorded decision: the observation, the valid actions and the action
// the teacher took.
//
// # Usage
//
//	samples := record(teacher) // []bc.Sample
//	agent := ppo.NewAgent(obsDim, nA, hidden, rng)
//	agreement := bc.Clone(agent.Actor, samples, bc.Config{Epochs: 20, Batch: 256, LR: 1e-3, LogEvery: 5, Log: os.Stderr},
//		rng, greedy) // greedy: the actor as the policy runs it
//	fmt.Printf("agreement on held-back decisions %.1f%%\n", 100*agreement)
package bc
