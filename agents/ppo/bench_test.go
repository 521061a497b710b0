package ppo

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
)

// updateShapes are the observation sizes and action counts BenchmarkUpdate
// times: CartPole-v1, and the placement env (env/placement, obs 13 + 4 per
// rack group, one action per group plus spread, with action masks) on the
// 16 x 4-GPU cluster of `drover train --env placement` and on 64 x 4 GPUs.
// scripts/bench_ppo_torch.py times the same shapes in PyTorch.
var updateShapes = []struct {
	name         string
	obs, actions int
	masked       bool
}{
	{"cartpole", 4, 2, false},
	{"placement-16x4", 21, 3, true},
	{"placement-64x4", 45, 9, true},
}

// benchRollout returns a rollout of n samples for agent: standard normal
// observations, actions drawn from the agent's policy with their
// log-probabilities and the critic's values (so the ratios start at 1, as
// in training), standard normal advantages and returns, and, when masked,
// each action valid with probability 3/4 (at least one per sample).
func benchRollout(agent *Agent, n, obsDim, nA int, masked bool, rng *rand.Rand) rollout {
	r := newRollout(n, obsDim, nA)
	for i := range r.obs {
		r.obs[i] = float32(rng.NormFloat64())
	}
	if masked {
		r.mask = make([]bool, n*nA)
		for i := range n {
			row := r.mask[i*nA : (i+1)*nA]
			for j := range row {
				row[j] = rng.IntN(4) != 0
			}
			row[rng.IntN(nA)] = true
		}
	}
	x := nn.MatFrom(n, obsDim, r.obs)
	dist := nn.NewCategorical(agent.Actor.Forward(x), r.mask)
	copy(r.act, dist.Sample(rng))
	copy(r.logp, dist.LogProb(r.act))
	copy(r.value, agent.Critic.Forward(x).Data)
	for i := range n {
		r.adv[i], r.ret[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	return r
}

// BenchmarkUpdate times one full PPO update with CleanRL's defaults: a
// rollout of 4 envs x 128 steps (512 samples), 4 epochs of 4 shuffled
// minibatches of 128, separate 64-64 tanh actor and critic, clipped
// surrogate and value losses with entropy, global grad-norm clipping at 0.5
// and Adam (16 optimiser steps per update). It reports wall time and, on
// Unix, the process's CPU time per update (the fairer figure on a loaded
// machine; with GOMAXPROCS=1 the two agree on an idle one). The documented
// comparison with PyTorch is scripts/bench_ppo_ratio.sh.
func BenchmarkUpdate(b *testing.B) {
	for _, be := range nn.Backends() {
		for _, s := range updateShapes {
			name := fmt.Sprintf("env=%s/obs=%d/actions=%d", s.name, s.obs, s.actions)
			if be != nn.GoBackend {
				name = "backend=" + be + "/" + name // the Go backend's names stay as they were
			}
			b.Run(name, func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.Backend = be
				rng := rand.New(rand.NewPCG(1, 2))
				agent := NewAgent(s.obs, s.actions, cfg.Hidden, rng)
				r := benchRollout(agent, cfg.NumEnvs*cfg.NumSteps, s.obs, s.actions, s.masked, rng)
				l, err := newLearner(cfg, agent, rng)
				if err != nil {
					b.Fatal(err)
				}
				defer l.tr.Close()
				var up Update
				if err := l.update(&r, &up); err != nil { // allocate the learner's buffers
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu0, ok := cpuTime()
				for b.Loop() {
					if err := l.update(&r, &up); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/update")
				if cpu1, ok1 := cpuTime(); ok && ok1 {
					b.ReportMetric((cpu1-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/update")
				}
			})
		}
	}
}
