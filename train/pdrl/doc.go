// Package pdrl trains pd-rl, the learned router of disaggregated LLM
// inference (issue 34, item 4; policies/pdrl), and judges it: behaviour
// cloning of a teacher on windows of a request trace (the speed-aware rule
// policies/pdrl.Speed by default, which sees the GPUs' speeds that HACK's
// router ignores; HACK's router with Config.Teacher "hack"), then PPO
// (agents/ppo) on env/infergym from the cloned actor, read top to bottom
// like train/direct. Judge replays held-out windows (the trace's last
// part, after every training window, at gap scales drawn per seed) under
// the learned router and HACK's and hands the paired mean JCTs to
// policies/gate; its verdict is the checkpoint's Converged, which decides
// whether the policy server's Route answers with the learned router.
//
// The learning is shared with train/direct: both clone their teacher with
// agents/bc and run agents/ppo.Train from the cloned actor. What stays
// here is what differs: the teacher's episodes replay trace windows on
// env/infer (train/direct's run its settings' job workloads on env), the
// environments are env/infergym's, the checkpoint records the encoding,
// and Judge replays held-out windows rather than held-out workloads.
//
// # Usage
//
//	res, err := pdrl.Train(pdrl.Config{Seed: 1, Deploy: infergym.Deployment(perf), Trace: conv.Requests, Steps: 100000})
//	newPolicy, _ := ppdrl.FromCheckpoint(res.Meta, res.Nets, encoding)
//	j, err := pdrl.Judge(deploy, conv.Requests, pdrl.DefaultHeldOut(), []uint64{1, 2, 3},
//		func() ppdrl.Decider { return newPolicy() }, gate.Config{Seed: 1})
//	fmt.Println(j.Verdict) // e.g. "converged: mean gain 13.4%, ..."
//	res.Meta.Converged = j.Verdict.Converged
//	err = checkpoints.Save("checkpoints/pd-rl", res.Meta, res.Nets)
package pdrl
