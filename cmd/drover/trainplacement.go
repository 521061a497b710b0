package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/train"
)

// evalSeeds are the held-out episode seeds (background load and jitter)
// on which the learned policy and the heuristics are compared; training
// uses seeds from the training seed up.
var evalSeeds = []uint64{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}

// trainPlacement trains PPO on the placement environment (or, with sync,
// the sync-strategy environment) over the built-in workload (16 nodes x 4
// GPUs, per-worker model) and prints the learned policy against the
// heuristics on held-out seeds.
func trainPlacement(sync bool, r *trainRun, stdout io.Writer) (*ppo.Agent, map[string]float64, train.Verdict, error) {
	seed := r.train.Seed
	const nodes, gpn = 16, 4
	pcfg, w, profiles, err := builtinEnvConfig(nodes, gpn, r.train.Profiles)
	if err != nil {
		return nil, nil, train.Verdict{}, err
	}
	pcfg.Sync, pcfg.Objective = sync, r.train.Objective
	mk := envMaker(pcfg)
	cfg := r.ppo
	fmt.Fprintf(stdout, "workload builtin (%d jobs), cluster %d x %d GPUs, per-worker model; eval seeds %v\n", len(w.Jobs), nodes, gpn, evalSeeds)
	start := time.Now()
	// Evaluate the greedy policy now and then on held-out seeds.
	r.evalEnv, r.stdout = mk(0).(*placement.Env), stdout
	agent, err := ppo.Train(cfg, mk, r.ppoReport)
	r.evalEnv = nil
	r.close()
	if err != nil {
		return nil, nil, train.Verdict{}, err
	}
	fmt.Fprintf(stdout, "trained %d steps in %s\n\n", r.train.Steps, time.Since(start).Round(time.Millisecond))

	// Evaluate: the learned policy greedily in the placement env, the
	// heuristics through the replay driver, all on the same seeds.
	e := mk(0).(*placement.Env)
	learned := func(obs []float64, mask []bool) int {
		x := nn.NewMat(1, len(obs))
		for i, v := range obs {
			x.Data[i] = float32(v)
		}
		return nn.NewCategorical(agent.Actor.Forward(x), mask).Mode()[0]
	}
	type row struct{ jct, tta, strag float64 }
	results := map[string]row{}
	perSeed := map[string][]float64{} // avg JCT per eval seed, for the gate
	add := func(name string, s env.Summary) {
		perSeed[name] = append(perSeed[name], s.AvgJCT)
		r := results[name]
		n := float64(len(evalSeeds))
		r.jct += s.AvgJCT / n
		r.tta += s.AvgTTA / n
		r.strag += s.StragglerFrac / n
		results[name] = r
	}
	names := []string{"learned (ppo)"}
	if !sync {
		names = append(names, "first-valid group")
	}
	for _, s := range evalSeeds {
		add(names[0], e.Run(s, learned))
		if !sync {
			add(names[1], e.Run(s, placement.FirstValid))
		}
	}
	reg := builtin.Registry()
	for _, h := range []string{"first-fit", "tiresias", "strn", "sas"} {
		names = append(names, h)
		for _, s := range evalSeeds {
			p, err := reg.New(h, policies.Config{Seed: s})
			if err != nil {
				return nil, nil, train.Verdict{}, err
			}
			res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
				Nodes: nodes, GPUsPerNode: gpn, Interval: 0, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: s}})
			if err != nil {
				return nil, nil, train.Verdict{}, err
			}
			add(h, res.Summary)
		}
	}
	fmt.Fprintf(stdout, "%-18s %12s %12s %22s\n", "policy", "avg JCT (s)", "avg TTA (s)", "iters with straggler")
	scores := map[string]float64{}
	for _, n := range names {
		r := results[n]
		fmt.Fprintf(stdout, "%-18s %12.0f %12.0f %21.2f%%\n", n, r.jct, r.tta, 100*r.strag)
		scores["avg_jct_"+n] = r.jct
	}
	// The gate: the learned policy replaces the heuristic it builds on
	// (first-fit) only if it beats it on the held-out episodes by 2% with
	// 95% confidence (paired bootstrap).
	v := train.Gate(perSeed[names[0]], perSeed["first-fit"], train.GateConfig{Seed: seed})
	fmt.Fprintf(stdout, "\ngate vs first-fit: %v\n", v)
	return agent, scores, v, nil
}

// builtinEnvConfig is the cluster environments' common setup: the built-in
// workload on nodes x gpn GPUs under the per-worker Drover model with the
// profiles in dir (train.profiles: a directory of measured profiles, or
// empty or "builtin" for the embedded fitted ones), the model's background
// and jitter seeded by each episode's seed. It also returns the workload
// and the profiles.
func builtinEnvConfig(nodes, gpn int, dir string) (placement.Config, *datasets.Workload, map[string]env.Profile, error) {
	profiles, _, err := trace.Profiles(cmp.Or(dir, "builtin"), "")
	if err != nil {
		return placement.Config{}, nil, nil, fmt.Errorf("train.profiles: %w", err)
	}
	w := datasets.Builtin()
	newModel := func(s uint64) env.Model {
		st, err := trace.Stragglers{Seed: s}.Workers(nodes)
		if err != nil {
			panic(err) // the embedded background parameters are valid
		}
		return &env.Drover{Profiles: profiles, Workers: st}
	}
	return placement.Config{Jobs: trace.Specs(w), Cluster: env.Homogeneous(nodes, gpn), NewModel: newModel,
		RestartDelay: env.DefaultRestartDelay}, w, profiles, nil
}

// envMaker returns a constructor of environments of cfg (validated by the
// caller's first call; a config that fails is a programming error).
func envMaker(cfg placement.Config) func(int) gym.Env {
	return func(int) gym.Env {
		e, err := placement.New(cfg)
		if err != nil {
			panic(err)
		}
		return e
	}
}
