// Package dqn holds the pieces of deep Q-learning (Mnih et al., 2015) as
// CleanRL's dqn.py implements them, with double Q-learning (van Hasselt et
// al., 2016) as an option: a uniform replay buffer with an injected random
// source, the linear exploration schedule, and the TD targets, where only
// termination (not truncation) stops bootstrapping. The training loop that
// drives them comes with the learning issue.
//
// # Usage
//
//	buf := dqn.NewReplay(10000, obsDim, rand.NewPCG(seed, 1))
//	eps := dqn.LinearSchedule(1, 0.05, 0.5*totalSteps, step)
//	buf.Add(obs, action, reward, nextObs, terminated)
//	b := buf.Sample(128)
//	dqn.Targets(b.Reward, b.Terminated, qTargetNext, qOnlineNext, nActions, 0.99, double, y)
package dqn
