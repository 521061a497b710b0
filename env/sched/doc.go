// Package sched is the scheduling environment of Drover's direct learned
// policies (strn-rl, sas-rl): a gym-style env over the simulator in which
// one step decides one job with a joint action, node group (or the whole
// cluster) x sync strategy, or hold, without running a heuristic first.
//
// The Encoder is the shared part: it turns a decision point and a pending
// job into an observation whose size does not depend on the cluster's
// (the job's features, then per slot the features of one template
// placement there), a mask of the valid actions, and an action back into
// an env.Decision. Its per-decision cost is O(nodes) cheap passes (no
// probes, no scoring of candidate sets), and its telemetry reads are
// bounded per decision point (Config.ReadBudget), which is what makes a
// learned policy an order of magnitude faster per decision than STRN and
// SAS. Node groups are racks (GroupRack, STRN-RL) or bands of predicted
// pace, a per-node moving P90 of the telemetry's pressure plus the GPUs'
// slowness (GroupLoad, SAS-RL: nodes that behave alike, as SAS groups
// them).
//
// Env steps one job at a time, in arrival order with backfilling, as the
// heuristics take them; its reward is minus the running jobs' time (plus
// WaitWeight times the pending jobs'), so an episode's return is minus the
// GPU-held time, the time-to-accuracy objective. policies/direct runs the
// same Encoder as a policies.Policy, and train/direct trains on Env.
//
// # Usage
//
//	e, _ := sched.NewEnv(sched.EnvConfig{Jobs: jobs, Cluster: c, NewModel: newModel})
//	obs, _ := e.Reset(seed)
//	var mask []bool
//	for {
//		mask = e.ActionMask(mask)
//		var done bool
//		obs, _, done, _, _ = e.Step(policy(obs, mask))
//		if done {
//			break
//		}
//	}
package sched
