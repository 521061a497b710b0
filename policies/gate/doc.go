// Package gate is the convergence gate: it judges whether a learned policy
// may replace a heuristic, from the two policies' costs on the same
// held-out episodes. It judges and does not train: it imports only the
// standard library, so that the policy server (serve), which asks it on
// evidence from its own deployment, links no trainer, and the training
// pipeline (train), which asks it on held-out evaluation, calls the same
// code (train.Gate is Judge).
//
// The test is a paired bootstrap of the per-episode relative gains
// (baseline - learned) / baseline: the gate opens when the Confidence
// lower bound of the mean gain exceeds Margin (defaults 95% and 2%). Its
// resamples come from a PCG source seeded by Config.Seed, so a seed fixes
// the verdict.
//
// # Usage
//
// Per-episode costs of the learned and the heuristic policy (same seeds,
// lower is better):
//
//	v := gate.Judge(learnedTTA, heuristicTTA, gate.Config{Seed: 1})
//	if v.Converged {
//		// switch to the learned policy
//	}
//	fmt.Println(v) // converged: mean gain 12.0%, lower bound 8.1% over 8 paired episodes
//
// Evaluate makes the same verdict and adds, in a Report, the learned
// policy's comparison with its teacher (the policy it was cloned from),
// which does not decide anything but says when the learned policy's gain
// over the heuristic is its teacher's:
//
//	r := gate.Evaluate(learnedTTA, sasTTA, "sas", teacherTTA, "sas+strn-sync", gate.Config{Seed: 1})
//	fmt.Println(r) // vs sas: converged: ...; vs its teacher sas+strn-sync: mean gain -5.0%, lower bound -8.1% (its gain over sas is its teacher's)
package gate
