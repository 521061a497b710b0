package train

import (
	"cmp"
	"fmt"
	"time"

	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// placementSeeds are the held-out episode seeds (background load and
// jitter) on which the learned placement or sync policy and the heuristics
// are compared; training uses seeds from the training seed up.
var placementSeeds = []uint64{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008}

// trainPlacement trains PPO on the placement environment (or, with sync,
// the sync-strategy environment) over the built-in workload (16 nodes x 4
// GPUs, per-worker model) and reports the learned policy against the
// heuristics on held-out seeds, with the gate's verdict against first-fit.
func trainPlacement(r *Run, sync bool) (*ppo.Agent, map[string]float64, Verdict, error) {
	seed := r.Train.Seed
	const nodes, gpn = 16, 4
	// Training, the greedy evaluations and the heuristics' runs below all
	// run the built-in workload on this cluster with these profiles, so
	// they share one reference (each job shape's factor is computed once).
	ref, err := trace.Stragglers{}.NewReference(nodes)
	if err != nil {
		return nil, nil, Verdict{}, err
	}
	pcfg, w, profiles, err := builtinEnvConfig(nodes, gpn, r.Train.Profiles, ref)
	if err != nil {
		return nil, nil, Verdict{}, err
	}
	pcfg.Sync, pcfg.Objective = sync, r.Train.Objective
	mk := envMaker(pcfg)
	cfg := r.PPO
	fmt.Fprintf(r.w, "workload builtin (%d jobs), cluster %d x %d GPUs, per-worker model; eval seeds %v\n", len(w.Jobs), nodes, gpn, placementSeeds)
	start := time.Now()
	// Evaluate the greedy policy now and then on held-out seeds.
	r.evalEnv = mk(0).(*placement.Env)
	agent, err := ppo.Train(cfg, mk, r.ppoReport)
	r.evalEnv = nil
	r.close()
	if err != nil {
		return nil, nil, Verdict{}, err
	}
	fmt.Fprintf(r.w, "trained %d steps in %s\n\n", r.Train.Steps, time.Since(start).Round(time.Millisecond))

	// Evaluate: the learned policy greedily in the placement env, the
	// heuristics through the replay driver, all on the same seeds.
	e := mk(0).(*placement.Env)
	learned := Greedy(agent.Actor)
	type row struct{ jct, tta, strag float64 }
	results := map[string]row{}
	perSeed := map[string][]float64{} // avg JCT per eval seed, for the gate
	add := func(name string, s env.Summary) {
		perSeed[name] = append(perSeed[name], s.AvgJCT)
		acc := results[name]
		n := float64(len(placementSeeds))
		acc.jct += s.AvgJCT / n
		acc.tta += s.AvgTTA / n
		acc.strag += s.StragglerFrac / n
		results[name] = acc
	}
	names := []string{"learned (ppo)"}
	if !sync {
		names = append(names, "first-valid group")
	}
	for _, s := range placementSeeds {
		add(names[0], e.Run(s, learned))
		if !sync {
			add(names[1], e.Run(s, placement.FirstValid))
		}
	}
	reg := builtin.Registry()
	for _, h := range []string{"first-fit", "tiresias", "strn", "sas"} {
		names = append(names, h)
		for _, s := range placementSeeds {
			p, err := reg.New(h, policies.Config{Seed: s})
			if err != nil {
				return nil, nil, Verdict{}, err
			}
			res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
				Nodes: nodes, GPUsPerNode: gpn, Interval: 0, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: s, Reference: ref}})
			if err != nil {
				return nil, nil, Verdict{}, err
			}
			add(h, res.Summary)
		}
	}
	fmt.Fprintf(r.w, "%-18s %12s %12s %22s\n", "policy", "avg JCT (s)", "avg TTA (s)", "iters with straggler")
	scores := map[string]float64{}
	for _, n := range names {
		res := results[n]
		fmt.Fprintf(r.w, "%-18s %12.0f %12.0f %21.2f%%\n", n, res.jct, res.tta, 100*res.strag)
		scores["avg_jct_"+n] = res.jct
	}
	// The gate: the learned policy replaces the heuristic it builds on
	// (first-fit) only if it beats it on the held-out episodes by 2% with
	// 95% confidence (paired bootstrap).
	v := Gate(perSeed[names[0]], perSeed["first-fit"], GateConfig{Seed: seed})
	fmt.Fprintf(r.w, "\ngate vs first-fit: %v\n", v)
	return agent, scores, v, nil
}

// builtinEnvConfig is the cluster environments' common setup: the built-in
// workload on nodes x gpn GPUs under the per-worker Drover model (its
// packed reference on gpn-GPU nodes) with the
// profiles in dir (Config.Profiles: a directory of measured profiles, or
// empty or "builtin" for the embedded fitted ones), the model's background
// and jitter seeded by each episode's seed. It also returns the workload
// and the profiles. The episodes share ref, the dedicated regime's
// env.Reference (nil: a new one): its factors depend on a job's shape,
// the profiles and the Workers' parameters, none of which change with the
// seed, so each shape's Monte Carlo runs once per run rather than once
// per episode, with the same factors. A caller that passes its own must
// share it only with runs of these profiles under the default straggler
// model (trace.Stragglers with only Seed set), as trainPlacement does.
func builtinEnvConfig(nodes, gpn int, dir string, ref *env.Reference) (placement.Config, *datasets.Workload, map[string]env.Profile, error) {
	profiles, _, err := trace.Profiles(cmp.Or(dir, "builtin"), "")
	if err != nil {
		return placement.Config{}, nil, nil, fmt.Errorf("train.profiles: %w", err)
	}
	w := datasets.Builtin()
	if ref == nil {
		if ref, err = (trace.Stragglers{}).NewReference(nodes); err != nil {
			return placement.Config{}, nil, nil, err
		}
	}
	newModel := func(s uint64) env.Model {
		st, err := trace.Stragglers{Seed: s, Reference: ref}.Workers(nodes)
		if err != nil {
			panic(err) // the embedded background parameters are valid
		}
		return &env.Drover{Profiles: profiles, GPUsPerNode: gpn, Workers: st}
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
