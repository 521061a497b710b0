package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-sched/drover/agents/bandit"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/train"
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

// trainVariant trains the learned variant of a heuristic that proposes
// candidates (strn-rl, sas-rl): PPO chooses among the heuristic's
// candidates for each job on the built-in workload (16 nodes x 4 GPUs,
// per-worker model; reward: minus the GPU-held time, the TTA objective),
// then the learned policy and the heuristic run on the
// held-out workloads with the same seeds, and the gate compares their
// average time-to-accuracy episode by episode.
func trainVariant(name string, r *trainRun, stdout io.Writer) (map[string]*nn.MLP, map[string]float64, train.Verdict, error) {
	seed, steps, evalSeeds := r.train.Seed, r.train.Steps, r.train.EvalSeeds
	heuristic := variantHeuristic[name]
	newProp, err := proposer(heuristic)
	if err != nil {
		return nil, nil, train.Verdict{}, err
	}
	pcfg, wname, cdesc, late, err := variantConfig(r, newProp)
	if err != nil {
		return nil, nil, train.Verdict{}, err
	}
	// The environments share pcfg, which is safe: its functions build a
	// fresh model, proposer and job list per episode, and the profiles
	// they share are safe for concurrent use. PPO's environments may step
	// in parallel goroutines (ppo.parallel), and the bandit's replays do.
	mk := envMaker(pcfg)
	algo := "PPO"
	if r.train.Algo == "bandit" {
		switch r.train.credit() {
		case "own":
			algo = "a contextual bandit (each decision scored by its job's own slowdown)"
		default:
			algo = "a contextual bandit (each decision scored by counterfactual replays: the GPU-held hours it saved)"
		}
	}
	if r.train.Profiles != "" && late == nil { // a trace's description names its profiles
		wname += ", profiles " + r.train.Profiles
	}
	fmt.Fprintf(stdout, "%s: %s chooses among %s's candidates; trained on %s, %s, per-worker model\n",
		name, algo, heuristic, wname, cdesc)
	start := time.Now()
	var act func([]float64, []bool) int
	var nets map[string]*nn.MLP
	if r.train.Algo == "bandit" {
		act, nets, err = trainBandit(r, mk(0).(*placement.Env), func() *placement.Env { return mk(0).(*placement.Env) }, stdout)
		if err != nil {
			return nil, nil, train.Verdict{}, err
		}
	} else {
		// Evaluate the greedy policy now and then on held-out seeds.
		r.evalEnv, r.stdout = mk(0).(*placement.Env), stdout
		agent, err := ppo.Train(r.ppo, mk, r.ppoReport)
		r.evalEnv = nil
		if err != nil {
			return nil, nil, train.Verdict{}, err
		}
		act, nets = greedy(agent.Actor), map[string]*nn.MLP{"actor": agent.Actor, "critic": agent.Critic}
	}
	r.close()
	fmt.Fprintf(stdout, "trained %d steps in %s\n\n", steps, time.Since(start).Round(time.Millisecond))

	scores := map[string]float64{}
	var verdict train.Verdict
	var allLearned, allBase []float64
	fmt.Fprintf(stdout, "%-8s %-10s %6s %14s %14s %14s %11s\n", "workload", "policy", "seeds", "avg TTA (s)", "avg JCT (s)", "stragglers", "deviations")
	var held []evalWorkload
	if evalSeeds > 0 {
		held = heldOut(evalSeeds, r.train.HeliosSeeds, r.train.PAISeeds)
		if late != nil {
			late.seeds = held[1].seeds // a trace's later part costs what Helios does
			held = append(held, *late)
		}
	} else {
		fmt.Fprintln(stdout, "no held-out evaluation (--eval-seeds 0): not converged")
	}
	for _, ew := range held {
		wl := ew.jobs
		if wl == nil {
			wl, err = datasets.Load(ew.workload, datasets.FormatAuto, datasets.Options{})
			if err != nil {
				return nil, nil, train.Verdict{}, fmt.Errorf("held-out workload %s: %w", ew.name, err)
			}
		}
		var cluster env.Cluster
		if ew.fixed != nil {
			cluster = *ew.fixed
		} else if cluster, _, err = trace.LoadCluster(ew.cluster, ew.nodes, ew.gpn); err != nil {
			return nil, nil, train.Verdict{}, err
		}
		eprof, _, err := trace.Profiles("", ew.workload)
		if err != nil {
			return nil, nil, train.Verdict{}, err
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
					Nodes: ew.nodes, GPUsPerNode: ew.gpn, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: s}})
				if err != nil {
					return nil, nil, train.Verdict{}, fmt.Errorf("%s on %s: %w", pname, ew.name, err)
				}
				if d, ok := p.(policies.Deviator); ok {
					a, b := d.Deviations()
					deviated, choices = deviated+a, choices+b
				}
				tta[pname] = append(tta[pname], res.Summary.AvgTTA)
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
			fmt.Fprintf(stdout, "%-8s %-10s %6d %14.0f %14.0f %14.3g %11s\n", ew.name, pname, len(ew.seeds), mean, jct, strag, dev)
		}
		v := train.Gate(tta[name], tta[heuristic], train.GateConfig{Seed: seed})
		fmt.Fprintf(stdout, "gate on %s, %s vs %s (avg TTA): %v\n", ew.name, name, heuristic, v)
		if ew.name == "helios" || ew.name == "pai" {
			allLearned, allBase = append(allLearned, tta[name]...), append(allBase, tta[heuristic]...)
		}
	}
	verdict = train.Gate(allLearned, allBase, train.GateConfig{Seed: seed})
	fmt.Fprintf(stdout, "\ngate, Helios and PAI episodes, %s vs %s (avg TTA): %v\n", name, heuristic, verdict)
	if late != nil {
		fmt.Fprintf(stdout, "(trained on the first part of %s: where that is Helios or PAI, those episodes are not held out; \"late\" is)\n", r.train.Workload)
	}
	return nets, scores, verdict, nil
}

// variantConfig builds the training environment's config of sas-rl and
// strn-rl from train's settings (cluster, workload, profiles, objective),
// with the name of the workload and of the cluster and, for a trace
// workload, its held-out later part.
func variantConfig(r *trainRun, newProp func() policies.Proposer) (placement.Config, string, string, *evalWorkload, error) {
	nodes, gpn := cmp.Or(r.train.Nodes, 16), cmp.Or(r.train.GPUsPerNode, 4)
	cdesc, gpus := fmt.Sprintf("%d x %d GPUs", nodes, gpn), nodes*gpn
	var list *env.Cluster // train.cluster's node list, if any
	if spec := r.train.Cluster; spec != "" && spec != "homogeneous" {
		c, desc, err := trace.LoadCluster(spec, r.train.Nodes, gpn)
		if err != nil {
			return placement.Config{}, "", "", nil, fmt.Errorf("train.cluster: %w", err)
		}
		list, nodes, cdesc, gpus = &c, len(c.Nodes), desc, c.TotalGPUs()
	}
	pcfg, w, _, err := builtinEnvConfig(nodes, gpn, r.train.Profiles)
	if err != nil {
		return placement.Config{}, "", "", nil, err
	}
	if list != nil {
		pcfg.Cluster = *list
	}
	pcfg.NewProposer, pcfg.Objective = newProp, cmp.Or(r.train.Objective, placement.ObjectiveTTA)
	wname := fmt.Sprintf("builtin (%d jobs, Philly-fitted)", len(w.Jobs))
	var late *evalWorkload // a trace workload's held-out later jobs
	switch r.train.Workload {
	case "", "builtin":
	case "synthetic":
		sp := datasets.DefaultParams()
		sp.MaxGPUs = gpus
		sp.RateScale *= float64(gpus) / float64(datasets.DefaultMaxGPUs) * cmp.Or(r.train.Load, 1)
		tilt, rho := r.train.Tilt, r.train.OfferedLoad
		pcfg.NewJobs = func(s uint64) []env.JobSpec {
			p := sp
			if tilt > 0 {
				// The exponent has its own stream: with Tilt 0 the jobs
				// are those of an untilted run, draw for draw.
				p = sp.Tilt(tilt * rand.New(rand.NewPCG(s, 0x74696c74)).Float64())
			}
			w := datasets.Synthetic(p, datasets.DefaultJobs, rand.NewPCG(s, s))
			if rho > 0 {
				w.ScaleLoad(gpus, rho)
			}
			return trace.Specs(w)
		}
		wname = fmt.Sprintf("a fresh Philly-fitted synthetic workload per episode (%d jobs)", datasets.DefaultJobs)
		if tilt > 0 {
			wname += fmt.Sprintf(", GPU mix tilted by g^a, a uniform in [0, %g]", tilt)
		}
		if rho > 0 {
			wname += fmt.Sprintf(", offered load %g", rho)
		}
	default:
		tw, err := traceWorkload(r.train.Workload, cmp.Or(r.train.Split, 0.5), r.train.OfferedLoad, pcfg.Cluster, r.train.Profiles)
		if err != nil {
			return placement.Config{}, "", "", nil, err
		}
		pcfg.NewJobs, pcfg.NewModel = tw.newJobs, tw.newModel
		wname = tw.desc
		late = &tw.late
	}
	return pcfg, wname, cdesc, late, nil
}

// variantPrior is the default ppo.Config.ActionPrior of sas-rl and
// strn-rl: start near the heuristic, whose own choice (action 0) gets a
// logit prior of 3, e^3 against 1 for each other candidate (91% with two
// others), while the others are still explored.
func variantPrior() []float32 {
	p := make([]float32, placement.DefaultCandidates)
	p[0] = 3
	return p
}

// sharedTrace is the path of a file of the shared traces, which sit beside
// the repository (run from its root).
func sharedTrace(rel string) string { return "../shared/traces/" + rel }

// variantHeuristic maps a learned variant to the heuristic whose
// candidates it chooses among.
var variantHeuristic = map[string]string{"sas-rl": "sas", "strn-rl": "strn"}

// proposer returns a constructor of fresh heuristics of the named
// policies.Proposer.
func proposer(heuristic string) (func() policies.Proposer, error) {
	reg := builtin.Registry()
	p, err := reg.New(heuristic, policies.Config{})
	if err != nil {
		return nil, err
	}
	if _, ok := p.(policies.Proposer); !ok {
		return nil, fmt.Errorf("policy %s does not propose candidates", heuristic)
	}
	return func() policies.Proposer {
		p, _ := reg.New(heuristic, policies.Config{})
		return p.(policies.Proposer)
	}, nil
}

// greedy acts with the most probable valid action of actor.
func greedy(actor *nn.MLP) func(obs []float64, mask []bool) int {
	x := nn.NewMat(1, 0)
	return func(obs []float64, mask []bool) int {
		if x.Cols != len(obs) {
			x = nn.NewMat(1, len(obs))
		}
		for i, v := range obs {
			x.Data[i] = float32(v)
		}
		return nn.NewCategorical(actor.Forward(x), mask).Mode()[0]
	}
}

// trainBandit trains the contextual bandit on e: episodes (seeds from the
// training seed up) in which the heuristic, then the learner, decides with
// epsilon exploration. How a decision is scored is train.credit:
//
//   - counterfactual (the default): for up to counterfactuals decisions
//     per episode that differ from the heuristic's choice, the episode is
//     replayed twice from its seed (the same background and jitter: common
//     random numbers), both times with the episode's choices before the
//     decision and the heuristic's after it, once with the decision and
//     once with the heuristic's choice in its place; the decision is worth
//     the GPU-held hours it saved over all jobs (negative when it cost).
//     The heuristic's own choice is worth 0 by definition and anchors the
//     values.
//   - own: every decision with a real choice is worth minus the log of its
//     job's own slowdown, TTA over its trace duration (the run time on a
//     packed, idle placement).
//
// The learner is refitted every few episodes. The counterfactual replays
// of an episode run on train.workers environments at once (default
// GOMAXPROCS; newEnv builds each beyond e); each replay is deterministic
// given its seed and actions, so the result does not depend on their
// number.
func trainBandit(r *trainRun, e *placement.Env, newEnv func() *placement.Env, stdout io.Writer) (func([]float64, []bool) int, map[string]*nn.MLP, error) {
	const (
		epsilon         = 0.2 // share of random valid choices
		warmup          = 5   // episodes decided by the heuristic (plus exploration)
		fitEvery        = 5   // episodes between fits
		reportEvery     = 25  // episodes between progress lines
		counterfactuals = 8   // replays per episode (counterfactual credit)
	)
	credit := r.train.credit()
	margin := float32(r.train.Margin)
	if credit != "counterfactual" && credit != "own" {
		return nil, nil, fmt.Errorf("train.credit %q: want counterfactual or own", credit)
	}
	cfg := bandit.DefaultConfig()
	cfg.Seed = r.train.Seed
	heads, z := max(r.train.Heads, 1), cmp.Or(r.train.LowerZ, 1)
	var l interface {
		Add(...bandit.Sample)
		Fit() float64
		Len() int
	}
	var choose func(obs []float64, mask []bool) int
	if heads > 1 {
		ens := bandit.NewEnsemble(cfg, e.ObservationSpace().Shape(), e.ActionSpace().N, heads)
		l, choose = ens, func(o []float64, m []bool) int { return ens.ActLower(o, m, float64(margin), z) }
	} else {
		one := bandit.New(cfg, e.ObservationSpace().Shape(), e.ActionSpace().N)
		l, choose = one, func(o []float64, m []bool) int { return one.ActMargin(o, m, margin) }
	}
	switch r.train.Support {
	case "", "none":
	case "job":
		r.support = bandit.NewSupport(placement.JobFeatures)
	case "all":
		r.support = bandit.NewSupport(e.ObservationSpace().Shape())
	default:
		return nil, nil, fmt.Errorf("train.support %q: want none, job or all", r.train.Support)
	}
	if r.support != nil {
		// The box grows with the samples the values are fitted on.
		choose = r.support.Gate(choose)
	}
	rng := rand.New(rand.NewPCG(r.train.Seed, 0x65787072))
	type decision struct {
		obs    []float32
		action int
		job    int
		step   int
	}
	mask := make([]bool, 0, e.ActionSpace().N)
	workers := []*placement.Env{e}
	if credit == "counterfactual" {
		n := min(cmp.Or(r.train.Workers, runtime.GOMAXPROCS(0)), 2*counterfactuals)
		if n < 1 {
			return nil, nil, fmt.Errorf("train.workers %d: want at least 1", r.train.Workers)
		}
		for len(workers) < n {
			workers = append(workers, newEnv())
		}
	}
	steps := 0
	for ep := 0; steps < r.train.Steps; ep++ {
		seed := r.train.Seed*1_000_000 + uint64(ep)
		obs, _ := e.Reset(seed)
		var ds []decision
		var actions []int
		for {
			mask = e.ActionMask(mask)
			valid := 0
			for _, ok := range mask {
				if ok {
					valid++
				}
			}
			a := 0
			switch {
			case valid > 1 && rng.Float64() < epsilon:
				k := rng.IntN(valid)
				for i, ok := range mask {
					if ok {
						if k == 0 {
							a = i
							break
						}
						k--
					}
				}
			case ep >= warmup:
				a = choose(obs, mask)
			}
			if valid > 1 {
				o := make([]float32, len(obs))
				for i, v := range obs {
					o[i] = float32(v)
				}
				ds = append(ds, decision{o, a, e.Job().ID, len(actions)})
			}
			actions = append(actions, a)
			var term, trunc bool
			obs, _, term, trunc, _ = e.Step(a)
			steps++
			if term || trunc {
				break
			}
		}
		var samples []bandit.Sample
		var mean float64
		switch credit {
		case "own":
			jobs := e.Jobs()
			for _, d := range ds {
				j := &jobs[d.job]
				tta := max(j.Held-float64(j.Starts)*env.DefaultRestartDelay, 1)
				rew := -math.Log(tta / max(j.Spec.Duration, 1))
				samples = append(samples, bandit.Sample{Obs: d.obs, Action: d.action, Reward: float32(rew)})
				mean += rew / float64(len(ds))
			}
		case "counterfactual":
			var off []decision
			for _, d := range ds {
				if d.action != 0 {
					off = append(off, d)
				}
			}
			rng.Shuffle(len(off), func(i, j int) { off[i], off[j] = off[j], off[i] })
			off = off[:min(len(off), counterfactuals)]
			// Both branches follow the episode up to the decision, differ
			// there, and let the heuristic decide every later job, so the
			// difference is the decision's alone.
			prefixes := make([][]int, 0, 2*len(off))
			for _, d := range off {
				prefixes = append(prefixes, actions[:d.step], actions[:d.step+1])
			}
			held := replayAll(workers, seed, prefixes)
			for i, d := range off {
				gain := held[2*i] - held[2*i+1]
				samples = append(samples, bandit.Sample{Obs: d.obs, Action: d.action, Reward: float32(gain)},
					bandit.Sample{Obs: d.obs, Action: 0, Reward: 0})
				mean += gain / float64(len(off))
			}
		}
		l.Add(samples...)
		if r.support != nil {
			for _, smp := range samples {
				r.support.Add(smp.Obs)
			}
		}
		if r.bar != nil {
			r.bar.Set(min(steps, r.train.Steps))
		}
		if r.log != nil {
			r.log.Scalar("bandit/mean_reward", steps, mean)
		}
		if (ep+1)%fitEvery == 0 && l.Len() > 0 {
			loss := l.Fit()
			if r.log != nil {
				r.log.Scalar("bandit/loss", steps, loss)
			}
			if (ep+1)%reportEvery == 0 {
				sum := e.Run(periodicSeeds[0], choose)
				fmt.Fprintf(stdout, "episode %d (%d steps): mean reward %.3f, fit loss %.4f; greedy on seed %d: avg TTA %.0f s\n",
					ep+1, steps, mean, loss, periodicSeeds[0], sum.AvgTTA)
			}
		}
	}
	if ens, ok := l.(*bandit.Ensemble); ok {
		// The rule needs every head: the checkpoint keeps them all, with
		// the margin and z in its hyperparameters (see ensembleAct).
		nets := map[string]*nn.MLP{}
		for h, q := range ens.Heads {
			nets[fmt.Sprintf("q%d", h)] = q.Q
		}
		return choose, nets, nil
	}
	// Bake the margin into the values: every action but the heuristic's
	// loses margin, so the plain argmax is ActMargin.
	one := l.(*bandit.Learner)
	ls := one.Q.Linears()
	for a := 1; a < len(ls[len(ls)-1].B.Value); a++ {
		ls[len(ls)-1].B.Value[a] -= margin
	}
	act := one.Act
	if r.support != nil {
		act = r.support.Gate(act)
	}
	return act, map[string]*nn.MLP{"q": one.Q}, nil
}

// traceTraining is a trace file as sas-rl's and strn-rl's training
// workload (train.workload: a path).
type traceTraining struct {
	newJobs  func(seed uint64) []env.JobSpec
	newModel func(seed uint64) env.Model
	late     evalWorkload // the jobs after the split
	desc     string
}

// traceWorkload splits the trace at path after the first split of its
// jobs (in submit order). Each training episode is a window of
// datasets.DefaultJobs consecutive jobs of the first part, starting at an
// offset drawn from the episode's seed, its submit times rebased to 0;
// the rest of the trace is the held-out evaluation workload "late" on the
// same cluster, cut to its first lateJobs jobs. With rho > 0 each window,
// and the late part, is rescaled to offered load rho on the cluster
// (datasets.Workload.ScaleLoad), so that a trace from a larger cluster
// (Philly's) loads the training cluster as the held-out ones are loaded.
// The model uses the profiles in dir (train.profiles) or, with dir empty,
// those drover sim finds for the trace (the measured ones near it, if any),
// as the evaluation does.
func traceWorkload(path string, split, rho float64, cluster env.Cluster, dir string) (traceTraining, error) {
	if !(split > 0 && split < 1) {
		return traceTraining{}, fmt.Errorf("train.split %v: want a share in (0, 1)", split)
	}
	w, err := datasets.Load(path, datasets.FormatAuto, datasets.Options{})
	if err != nil {
		return traceTraining{}, fmt.Errorf("train.workload: %w", err)
	}
	nodes, gpus := len(cluster.Nodes), cluster.TotalGPUs()
	cut, rest, err := lateWorkload(w, split, rho, gpus)
	if err != nil {
		return traceTraining{}, fmt.Errorf("train.workload %s: %w", path, err)
	}
	profiles, pdesc, err := trace.Profiles(dir, path)
	if err != nil {
		return traceTraining{}, fmt.Errorf("train.profiles: %w", err)
	}
	// Jobs larger than the cluster could never start.
	var first []datasets.Job
	for _, j := range w.Jobs[:cut] {
		if j.GPUs <= gpus {
			first = append(first, j)
		}
	}
	if len(first) == 0 {
		return traceTraining{}, fmt.Errorf("train.workload %s: none of the first %d jobs fits the %d-GPU training cluster", path, cut, gpus)
	}
	win := min(datasets.DefaultJobs, len(first))
	t := traceTraining{
		newJobs: func(seed uint64) []env.JobSpec {
			off := rand.New(rand.NewPCG(seed, 0x77696e)).IntN(len(first) - win + 1)
			jobs := &datasets.Workload{Jobs: slices.Clone(first[off : off+win])}
			rebase(jobs.Jobs)
			if rho > 0 {
				jobs.ScaleLoad(gpus, rho)
			}
			return trace.Specs(jobs)
		},
		newModel: func(s uint64) env.Model {
			st, err := trace.Stragglers{Seed: s}.Workers(nodes)
			if err != nil {
				panic(err) // the embedded background parameters are valid
			}
			return &env.Drover{Profiles: profiles, Workers: st}
		},
		late: evalWorkload{name: "late", workload: path, jobs: rest, fixed: &cluster},
		desc: fmt.Sprintf("windows of %d consecutive jobs from the first %d of %s's %d jobs (%d of them fit the cluster; profiles: %s); the %d jobs after them are held out as \"late\"",
			win, cut, path, len(w.Jobs), len(first), pdesc, len(rest.Jobs)),
	}
	if rho > 0 {
		t.desc += fmt.Sprintf("; each window and the late part at offered load %g", rho)
	}
	return t, nil
}

// replayAll plays episode seed once per prefix, on the environments envs
// in parallel, and returns the GPU-held hours of all jobs in each replay,
// in prefixes' order. A replay takes the prefix's actions, then the
// heuristic's choice (action 0) for every later job; an action no longer
// valid becomes the heuristic's. Each replay depends only on seed and its
// prefix, so the result does not depend on len(envs).
func replayAll(envs []*placement.Env, seed uint64, prefixes [][]int) []float64 {
	out := make([]float64, len(prefixes))
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, e := range envs[:min(len(envs), len(prefixes))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mask []bool
			for {
				i := int(next.Add(1) - 1)
				if i >= len(prefixes) {
					return
				}
				actions := prefixes[i]
				e.Reset(seed)
				for k := 0; ; k++ {
					mask = e.ActionMask(mask)
					a := 0
					if k < len(actions) && mask[actions[k]] {
						a = actions[k]
					}
					if _, _, term, trunc, _ := e.Step(a); term || trunc {
						break
					}
				}
				h := 0.0
				for j := range e.Jobs() {
					h += e.Jobs()[j].Held
				}
				out[i] = h / 3600
			}
		}()
	}
	wg.Wait()
	return out
}

// lateWorkload splits w after the first share split of its jobs (in submit
// order, rounded) and returns the cut and the held-out "late" part drover
// train judges: the jobs after the cut, at most lateJobs of them, their
// submit times rebased to 0 and, with rho > 0, rescaled to offered load rho
// on gpus GPUs. drover trace convert -late writes the same part. w is not
// changed.
func lateWorkload(w *datasets.Workload, split, rho float64, gpus int) (int, *datasets.Workload, error) {
	if !(split > 0 && split < 1) {
		return 0, nil, fmt.Errorf("split %v: want a share in (0, 1)", split)
	}
	cut := int(math.Round(split * float64(len(w.Jobs))))
	if cut < 1 || cut >= len(w.Jobs) {
		return 0, nil, fmt.Errorf("%d jobs cannot be split at %v", len(w.Jobs), split)
	}
	rest := w.Clone()
	rest.Jobs = rest.Jobs[cut:]
	if len(rest.Jobs) > lateJobs {
		rest.Jobs = rest.Jobs[:lateJobs]
	}
	rebase(rest.Jobs)
	if rho > 0 {
		rest.ScaleLoad(gpus, rho)
	}
	return cut, rest, nil
}

// lateJobs caps a trace workload's held-out "late" part, so that a long
// trace (Philly's 82k jobs) is judged on a window as long as the other
// held-out workloads rather than on months of jobs.
const lateJobs = 2000

// rebase shifts the jobs' submit times so that the first is 0.
func rebase(jobs []datasets.Job) {
	if len(jobs) == 0 {
		return
	}
	t0 := jobs[0].Submit
	for i := range jobs {
		jobs[i].Submit -= t0
	}
}
