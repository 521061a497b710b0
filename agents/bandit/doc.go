// Package bandit learns a contextual bandit with an MLP: for each context
// (an observation) and each of its valid actions, the expected reward,
// fitted by regression on logged (context, action, reward) samples, and
// acts greedily on those values. It suits decisions whose outcome belongs
// to the decision alone, such as a job's own slowdown under the placement
// chosen for it, where a reinforcement-learning return would mix in
// every other job's.
//
// The samples can come from any behaviour policy (the regression is on
// the action taken, with no bootstrapping, so it is off-policy): drover
// train runs the heuristic with epsilon exploration and lets the learner
// take over as it improves. The learner is deterministic given its seed
// and the samples' order.
//
// An Ensemble of bootstrapped learners deviates from the heuristic's
// action only where its heads agree (ActLower), and a checkpoints.Support
// (saved with the checkpoint, so that serving needs no agents package)
// restricts any learner to the box of contexts it was fitted on (Gate):
// outside both, the heuristic's action 0 stands.
//
// # Usage
//
//	l := bandit.New(bandit.DefaultConfig(), obsDim, actions)
//	for round := range rounds {
//		samples := collect(round, l)   // play episodes, score each decision
//		l.Add(samples...)
//		l.Fit()
//	}
//	a := l.Act(obs, mask)
package bandit
