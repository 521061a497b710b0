// Package restore turns a checkpoint directory that drover train wrote
// for the view-level envs (sas-rl, strn-rl) into a policy the simulator
// runs, as drover eval --policies DIR does: a direct policy
// (policies/direct: --algo bc, ppo or dqn) as it is, or a candidate
// re-ranker (--algo bandit or rerank-ppo, a bootstrapped bandit ensemble
// included) over its heuristic's candidates (env/placement.Learned).
// Checkpoints of the placement and sync envs are served by drover serve
// instead, and are refused.
//
// # Usage
//
//	c, err := restore.Policy("checkpoints/sas-rl")
//	if err != nil {
//		return err
//	}
//	res, err := compare.Compare(compare.Config{Policies: []compare.Policy{c}, Seeds: seeds, Options: options})
package restore
