// Package placement is the cluster placement environment for
// reinforcement learning: a gym.Env over the simulator (env.Sim) in which
// each step places one job. At every decision point the jobs waiting are
// taken in arrival order, and the agent decides for the first one that fits
// somewhere: action g < Groups packs it inside node group g (the nodes with
// the most free GPUs first), action Groups spreads it over the whole
// cluster the same way. The mask (true = valid) allows a group only when
// its free GPUs hold the job, and the spread action only when the cluster's
// do. Between decisions the simulator runs on by itself.
//
// With Config.Sync the agent instead chooses each job's synchronization
// strategy (SyncChoices: BSP, ASP, SSP(3), local SGD(8); BSP only for a
// one-GPU job) while the job is placed first-fit, and the observation
// ends with five features of that placement (size, nodes, whether it
// crosses racks, its nodes' worst CPU and NIC load). Choosing BSP for
// every job is exactly the first-fit heuristic (a test checks this).
//
// Observation (all roughly in [0, 1]): the job's GPUs over the largest
// group's, log1p(duration in hours)/5, a one-hot of its model (the six
// measured ones), its CPU, memory-bandwidth and network sensitivities
// (env.Sensitivities); then per group its free-GPU share and mean CPU,
// memory-bandwidth and network utilisation (from the model's
// env.Telemetry; 0 without it); then the waiting and running job counts
// over 100.
//
// Reward: minus the number of jobs in the system times the simulated time
// since the last step, in hours, so that an episode's undiscounted return
// is minus the sum of job completion times in hours (Little's law);
// optionally minus StragglerWeight per thousand straggling
// worker-iterations. An episode ends (terminated) when every job has
// finished.
//
// With Config.NewProposer the agent instead chooses among a heuristic's
// candidates (env.Proposer, implemented by policies/strn and policies/sas),
// and Learned is the deployed form of such a policy. The candidate
// protocol and the packing rules the actions use (env.PackMostFree,
// env.PackFirstFit) are defined in env, so that this package, like all of
// env, imports no policy.
//
// # Usage
//
//	e, _ := placement.New(placement.Config{Jobs: specs, Cluster: env.Homogeneous(64, 4), NewModel: mk})
//	obs, _ := e.Reset(seed)
//	for {
//		mask := e.ActionMask(nil)
//		obs, r, term, trunc, _ := e.Step(policy(obs, mask))
//		if term || trunc {
//			break
//		}
//	}
package placement
