// Package direct trains Drover's direct learned policies (policies/direct:
// strn-rl, sas-rl) and judges them on held-out workloads.
//
// Training is behaviour cloning, then reinforcement learning. The teacher
// (STRN for strn-rl; SAS with STRN's sync rule for sas-rl, since SAS alone
// keeps BSP) runs TeacherEpisodes episodes per training Setting, recorded
// by policies/direct.Teacher; the actor learns its choices by minimising
// the masked cross-entropy (agents/bc, as train/pdrl's does). PPO then starts from the cloned actor with a
// critic warm-up, a small learning rate and entropy bonus on env/sched's
// environments, one per setting (reward: minus GPU-held time). DQN (AlgoDQN)
// learns from the reward alone on the first setting, with masked
// exploration and targets.
//
// The default settings are fresh Philly-fitted synthetic workloads on the
// built-in 16 x 4 cluster, on 22 x 8 GPUs, and on 64 nodes of the PAI GPU
// node types in the shared straggler regime: none is a held-out workload.
// Judge replays the learned policy, its heuristic and any other contenders
// on the held-out workloads (DefaultHeldOut: built-in, Philly's later half,
// Helios, PAI) over paired seeds and gates learned against heuristic on
// average TTA (train.Gate).
//
// # Usage
//
//	res, _ := direct.Train(direct.Config{Name: "strn-rl", Seed: 1})
//	_ = checkpoints.Save(dir, res.Meta, res.Nets)
//	held, _, _ := direct.DefaultHeldOut()
//	js, _ := direct.Judge(contenders, held, seeds, train.GateConfig{Seed: 1}, compare.Config{}, nil)
//	for _, j := range js {
//		fmt.Println(j.Workload, j.Verdict)
//	}
package direct
