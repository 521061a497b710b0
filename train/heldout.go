package train

import (
	"cmp"
	"fmt"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
)

// evalWorkload is a held-out workload the learned variant is judged on.
type evalWorkload struct {
	name     string
	workload string             // datasets.Load spec
	jobs     *datasets.Workload // the jobs, when not loaded from workload
	cluster  string             // trace.LoadCluster spec
	fixed    *env.Cluster       // the cluster, when not loaded from cluster
	nodes    int
	gpn      int
	seeds    []uint64
}

// heldOut are the workloads strn-rl and sas-rl are evaluated on: the
// training workload (built-in, Philly-fitted) on held-out seeds, as a
// check that learning worked, then Helios and PAI, which training never
// sees and on which the gate decides. Helios gets heliosSeeds episodes
// when that is positive (they cost about a second each, and its per-seed
// spread needs 20 or more to show a gain of a few percent), else seeds.
func heldOut(seeds, heliosSeeds, paiSeeds int) []evalWorkload {
	s := func(n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = 1001 + uint64(i)
		}
		return out
	}
	return []evalWorkload{
		{name: "builtin", workload: "builtin", cluster: "homogeneous", nodes: 16, gpn: 4, seeds: s(seeds)},
		{name: "helios", workload: sharedTrace("helios/helios_venus_2vc_sept.csv"), cluster: "homogeneous", nodes: 22, gpn: 8, seeds: s(cmp.Or(heliosSeeds, seeds))},
		{name: "pai", workload: sharedTrace("alibaba_pai_v2023/openb_pod_list_default.csv"), cluster: "pai", seeds: s(cmp.Or(paiSeeds, max(1, seeds/2)))},
	}
}

// judge runs the learned variant r.Train.Env (act choosing among the
// candidates of newProp's heuristic) and the heuristic itself on the
// held-out workloads (heldOut, and late, a trace workload's later part,
// when not nil) with the same seeds, reports each workload's table and the
// gate's verdict on it, and returns the scores and the gate's verdict on
// the Helios and PAI episodes together. With Train.EvalSeeds 0 nothing is
// judged and the verdict is not converged.
func judge(r *Run, heuristic string, newProp func() env.Proposer, act func([]float64, []bool) int, late *evalWorkload) (map[string]float64, Verdict, error) {
	name, seed := r.Train.Env, r.Train.Seed
	var err error
	scores := map[string]float64{}
	var allLearned, allBase []float64
	fmt.Fprintf(r.w, "%-8s %-10s %6s %14s %14s %14s %11s\n", "workload", "policy", "seeds", "avg TTA (s)", "avg JCT (s)", "stragglers", "deviations")
	var held []evalWorkload
	if r.Train.EvalSeeds > 0 {
		held = heldOut(r.Train.EvalSeeds, r.Train.HeliosSeeds, r.Train.PAISeeds)
		if late != nil {
			late.seeds = held[1].seeds // a trace's later part costs what Helios does
			held = append(held, *late)
		}
	} else {
		fmt.Fprintln(r.w, "no held-out evaluation (--eval-seeds 0): not converged")
	}
	for _, ew := range held {
		wl := ew.jobs
		if wl == nil {
			wl, err = datasets.Load(ew.workload, datasets.FormatAuto, datasets.Options{})
			if err != nil {
				return nil, Verdict{}, fmt.Errorf("held-out workload %s: %w", ew.name, err)
			}
		}
		var cluster env.Cluster
		if ew.fixed != nil {
			cluster = *ew.fixed
		} else if cluster, _, err = trace.LoadCluster(ew.cluster, ew.nodes, ew.gpn); err != nil {
			return nil, Verdict{}, err
		}
		eprof, _, err := trace.Profiles("", ew.workload)
		if err != nil {
			return nil, Verdict{}, err
		}
		// The workload's runs differ only in the policy and the seed, so
		// they share one reference (env.Reference), as drover eval's do.
		ref, err := trace.Stragglers{}.NewReference(len(cluster.Nodes))
		if err != nil {
			return nil, Verdict{}, err
		}
		var tta = map[string][]float64{}
		for _, pname := range []string{name, heuristic} {
			var jct, strag float64
			deviated, choices := 0, 0
			for _, s := range ew.seeds {
				var p policies.Policy
				if pname == name {
					p = placement.Learned(newProp, placement.DefaultCandidates, act)
				} else {
					p = newProp()
				}
				res, err := trace.Run(trace.Options{Workload: wl, Model: trace.ModelDrover, Profiles: eprof, Policy: p, Cluster: &cluster,
					Nodes: ew.nodes, GPUsPerNode: ew.gpn, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: s, Reference: ref}})
				if err != nil {
					return nil, Verdict{}, fmt.Errorf("%s on %s: %w", pname, ew.name, err)
				}
				if d, ok := p.(policies.Deviator); ok {
					a, b := d.Deviations()
					deviated, choices = deviated+a, choices+b
				}
				tta[pname] = append(tta[pname], res.Summary.TTAPerTarget) // AvgTTA when no job missed its target
				jct += res.Summary.AvgJCT / float64(len(ew.seeds))
				strag += res.Summary.Stragglers / float64(len(ew.seeds))
			}
			mean := 0.0
			for _, x := range tta[pname] {
				mean += x / float64(len(ew.seeds))
			}
			scores["avg_tta_"+ew.name+"_"+pname] = mean
			dev := "-" // the share of the learned choices that were not the heuristic's
			if pname == name && choices > 0 {
				dev = fmt.Sprintf("%.2f%%", 100*float64(deviated)/float64(choices))
				scores["deviation_"+ew.name] = float64(deviated) / float64(choices)
			}
			fmt.Fprintf(r.w, "%-8s %-10s %6d %14.0f %14.0f %14.3g %11s\n", ew.name, pname, len(ew.seeds), mean, jct, strag, dev)
		}
		v := Gate(tta[name], tta[heuristic], GateConfig{Seed: seed})
		fmt.Fprintf(r.w, "gate on %s, %s vs %s (avg TTA): %v\n", ew.name, name, heuristic, v)
		if ew.name == "helios" || ew.name == "pai" {
			allLearned, allBase = append(allLearned, tta[name]...), append(allBase, tta[heuristic]...)
		}
	}
	verdict := Gate(allLearned, allBase, GateConfig{Seed: seed})
	fmt.Fprintf(r.w, "\ngate, Helios and PAI episodes, %s vs %s (avg TTA): %v\n", name, heuristic, verdict)
	if late != nil {
		fmt.Fprintf(r.w, "(trained on the first part of %s: where that is Helios or PAI, those episodes are not held out; \"late\" is)\n", r.Train.Workload)
	}
	return scores, verdict, nil
}

// sharedTrace is the path of a file of the shared traces, which sit beside
// the repository: ../shared/traces relative to the working directory, the
// repository's root when drover runs from it.
func sharedTrace(rel string) string { return "../shared/traces/" + rel }
