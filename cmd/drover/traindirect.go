package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/compare"
	pdirect "github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/train"
	"github.com/drover-sched/drover/train/direct"
	"github.com/drover-sched/drover/train/runlog"
)

// isDirectAlgo reports whether --env sas-rl or strn-rl with algo trains the
// direct policy (policies/direct) rather than the candidate re-ranker.
func isDirectAlgo(algo string) bool {
	return algo == direct.AlgoBC || algo == direct.AlgoPPO || algo == direct.AlgoDQN
}

// directRun is `drover train --env strn-rl|sas-rl --algo bc|ppo|dqn`,
// with --from-log and its flags when fine-tuning on a decision log.
type directRun struct {
	name, algo string
	seed       uint64
	steps      int
	evalSeeds  int
	dir        string
	quiet      bool

	fromLog, init string // --from-log DIR, --init CKPT
	resume        string // --resume CKPT (without --from-log)
	backend       string // --backend, --device: PPO's and DQN's updates
	device        string
	cluster       string // --cluster, --nodes (given or not), --gpus-per-node
	nodes         int
	nodesSet      bool
	gpusPerNode   int
}

// directIgnored lists the config keys r sets (away from their defaults)
// that a direct policy's training does not read: it takes the policy,
// algorithm, steps, seed and held-out seeds from the train section, and
// its network, PPO and DQN settings are train/direct's own (but for
// the backend and device of PPO's and DQN's updates).
func directIgnored(r *train.Run) []string {
	var keys []string
	diff := func(section string, got, def any) {
		g, d := reflect.ValueOf(got), reflect.ValueOf(def)
		for i := range g.NumField() {
			f := g.Type().Field(i)
			key := runlog.SnakeCase(f.Name)
			if section == "train" && slices.Contains([]string{"env", "algo", "steps", "seed", "eval_seeds"}, key) {
				continue
			}
			if section != "train" && (key == "backend" || key == "device") {
				continue // taken: PPO's and DQN's updates run there
			}
			if f.IsExported() && !reflect.DeepEqual(g.Field(i).Interface(), d.Field(i).Interface()) {
				keys = append(keys, section+"."+key)
			}
		}
	}
	diff("train", r.Train, train.Config{})
	diff("ppo", r.PPO, ppo.DefaultConfig())
	diff("dqn", r.DQN, dqn.DefaultConfig())
	return keys
}

// checkLogFlags refuses --from-log and its flags (given: the flags named
// on the command line) outside a direct policy's training, and --init or
// the cluster flags without --from-log.
func checkLogFlags(given map[string]bool, direct bool, envName, algo string) error {
	if given["from-log"] && !direct {
		return fmt.Errorf("--from-log trains a direct policy: want --env strn-rl or sas-rl with --algo bc, ppo or dqn (got --env %s --algo %s)", envName, algo)
	}
	if !given["from-log"] {
		for _, f := range []string{"init", "cluster", "nodes", "gpus-per-node"} {
			if given[f] {
				return fmt.Errorf("--%s goes with --from-log", f)
			}
		}
	}
	return nil
}

// runTrainDirect trains a direct policy (train/direct), saves its
// checkpoint in r.dir, plots its learning curve and, with eval seeds,
// judges it against its heuristic on the held-out workloads with the
// convergence gate: the checkpoint says converged when the gate passes on
// the Helios, PAI and Philly-late episodes together. A teacher other than
// the heuristic (sas-rl's sas+strn-sync) is replayed beside them and the
// learned policy's comparison with it reported (gate.Report.TeacherNote,
// meta.Eval's gate_vs_teacher_*); it does not decide.
func runTrainDirect(r directRun, stdout, stderr io.Writer) error {
	if r.fromLog != "" {
		return runTrainFromLog(r, stdout, stderr)
	}
	log := io.Discard
	if !r.quiet {
		log = stderr
	}
	start := time.Now()
	heur := map[string]string{pdirect.STRNRL: "strn", pdirect.SASRL: "sas"}[r.name]
	fmt.Fprintf(stdout, "%s: direct policy (node group or cluster x sync strategy per job, no heuristic in the loop), %s; teacher %s\n", r.name, r.algo, pdirect.TeacherOf(r.name))
	cfg := direct.Config{Name: r.name, Algo: r.algo, Seed: r.seed, Steps: r.steps, Log: log, Backend: r.backend, Device: r.device}
	if r.resume != "" {
		if _, _, err := warmStart(&cfg, "--resume", r.resume, stdout); err != nil {
			return err
		}
	}
	res, err := direct.Train(cfg)
	if err != nil {
		return err
	}
	printTrained(stdout, res, start)
	meta := res.Meta
	if r.resume != "" {
		meta.Hyperparams["init"] = 1
	}
	meta.Eval = map[string]float64{}
	if r.evalSeeds == 0 {
		fmt.Fprintln(stdout, "no held-out evaluation (--eval-seeds 0): not converged")
	} else if err := judgeHeldOut(r, heur, &meta, res, stdout, stderr); err != nil {
		return err
	}
	return saveDirect(r, meta, res, stdout)
}

// judgeHeldOut replays the trained policy, its heuristic heur and, when
// it is another policy, its teacher on the held-out workloads
// (r.evalSeeds seeds from 1001), prints each workload's figures and gate,
// and sets meta's Converged (the gate against heur on the trace episodes
// together) and Eval figures.
func judgeHeldOut(r directRun, heur string, meta *checkpoints.Meta, res direct.Result, stdout, stderr io.Writer) error {
	held, missing, err := direct.DefaultHeldOut()
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		fmt.Fprintf(stdout, "held-out workloads missing (no ../shared/traces): %s\n", strings.Join(missing, ", "))
	}
	mk, err := pdirect.FromCheckpoint(*meta, res.Nets)
	if err != nil {
		return err
	}
	cs := []compare.Policy{{Name: r.name, New: func(uint64) (policies.Policy, error) { return mk(), nil }}}
	// The teacher, when it is not the heuristic, is judged beside it
	// (reported; the gate decides on the heuristic alone).
	teacher := pdirect.TeacherOf(r.name)
	names := []string{heur}
	if teacher != heur {
		names = append(names, teacher)
	}
	for _, name := range names {
		f, err := builtin.Registry().Factory(name)
		if err != nil {
			return err
		}
		cs = append(cs, compare.Policy{Name: name, New: func(s uint64) (policies.Policy, error) { return f(policies.Config{Seed: s}) }})
	}
	seeds := make([]uint64, r.evalSeeds)
	for i := range seeds {
		seeds[i] = 1001 + uint64(i)
	}
	js, err := direct.Judge(cs, held, seeds, train.GateConfig{Seed: r.seed}, compare.Config{}, judgeProgress(r.quiet, stderr, "held-out "))
	if err != nil {
		return err
	}
	reportHeldOut(r, heur, teacher, js, meta, stdout)
	return nil
}

// reportHeldOut prints the held-out judgements js (the learned policy,
// heur, then the teacher when it is not heur) and sets meta from them.
func reportHeldOut(r directRun, heur, teacher string, js []direct.Judgement, meta *checkpoints.Meta, stdout io.Writer) {
	// teacherOf returns the teacher's costs among ps (nil when the
	// teacher is the heuristic: then its comparison is the verdict).
	teacherOf := func(ps []compare.PolicyResult) []float64 {
		if teacher == heur {
			return nil
		}
		return avgTTAs(ps[2])
	}
	fmt.Fprintf(stdout, "\n%-12s %-13s %6s %14s %14s\n", "workload", "policy", "seeds", "avg TTA (s)", "avg JCT (s)")
	var learned, base, taught []float64
	for _, j := range js {
		ps := j.Result.Policies
		for _, p := range ps {
			fmt.Fprintf(stdout, "%-12s %-13s %6d %14.0f %14.0f\n", j.Workload, p.Name, len(p.Runs), p.AvgTTA.Mean, p.AvgJCT.Mean)
			meta.Eval["avg_tta_"+j.Workload+"_"+p.Name] = p.AvgTTA.Mean
		}
		rep := gate.Evaluate(avgTTAs(ps[0]), avgTTAs(ps[1]), heur, teacherOf(ps), teacher, train.GateConfig{Seed: r.seed})
		fmt.Fprintf(stdout, "gate on %s, %s vs %s (avg TTA): %v%s\n", j.Workload, r.name, heur, j.Verdict, rep.TeacherNote())
		if j.Workload != "builtin" {
			learned, base, taught = append(learned, avgTTAs(ps[0])...), append(base, avgTTAs(ps[1])...), append(taught, teacherOf(ps)...)
		}
	}
	if len(learned) == 0 {
		return
	}
	rep := gate.Evaluate(learned, base, heur, taught, teacher, train.GateConfig{Seed: r.seed})
	meta.Converged = rep.Verdict.Converged
	if rep.Teacher != "" {
		meta.Eval["gate_vs_teacher_mean_gain"], meta.Eval["gate_vs_teacher_lower"] = rep.VsTeacher.MeanGain, rep.VsTeacher.Lower
	}
	fmt.Fprintf(stdout, "\ngate, the held-out trace episodes together, %s vs %s (avg TTA): %v%s\n", r.name, heur, rep.Verdict, rep.TeacherNote())
}

// avgTTAs returns the seconds trained per target reached of each of p's
// runs, in seed order: the average TTA when every job reached its target.
func avgTTAs(p compare.PolicyResult) []float64 {
	xs := make([]float64, len(p.Runs))
	for k, run := range p.Runs {
		xs[k] = run.Summary.TTAPerTarget
	}
	return xs
}

// saveDirect saves a trained direct policy's checkpoint with meta in
// r.dir, plots its learning curve when it has episodes, and says where.
func saveDirect(r directRun, meta checkpoints.Meta, res direct.Result, stdout io.Writer) error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	if err := checkpoints.Save(r.dir, meta, res.Nets); err != nil {
		return err
	}
	if len(res.Returns) > 0 {
		raw := plot.Series{Name: "episodic return"}
		for i, y := range res.Returns {
			raw.X, raw.Y = append(raw.X, float64(i+1)), append(raw.Y, y)
		}
		o := plot.Options{Title: fmt.Sprintf("%s, %s, seed %d", r.name, r.algo, r.seed), XLabel: "episode", YLabel: "return (minus GPU-held hours)"}
		path := filepath.Join(r.dir, train.CurveFile)
		if err := plot.WriteFile(path, func(w io.Writer) error { return plot.Lines(w, o, []plot.Series{raw}) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "checkpoint %s\n", r.dir)
	return nil
}

// logEvalSeeds are the seeds a --from-log run is judged on: far from the
// teacher's episode seeds (seed*1000 + episode) and standing for the
// deployment's unseen days (background load, jitter) over the same jobs.
func logEvalSeeds(n int) []uint64 {
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = 0x6c6f67<<32 + uint64(i) // "log"
	}
	return seeds
}

// runTrainFromLog is drover train --from-log: it rebuilds the served
// workload from the decision log (direct.FromLog), trains the direct
// policy on replays of it (from --init's actor when given), judges it
// against the init checkpoint (or the heuristic) on replays with paired
// seeds, and saves the checkpoint with the judgement in meta.Eval. The
// checkpoint is not marked converged: it is judged on the arrivals it
// trained on, and drover serve's gate judges it on what it serves.
func runTrainFromLog(r directRun, stdout, stderr io.Writer) error {
	log := io.Discard
	if !r.quiet {
		log = stderr
	}
	start := time.Now()
	nodes := r.nodes
	if r.cluster != "homogeneous" && r.cluster != "" && !r.nodesSet {
		nodes = 0 // a node list: all its GPU nodes
	}
	cluster, desc, err := trace.LoadCluster(r.cluster, nodes, r.gpusPerNode)
	if err != nil {
		return err
	}
	set, sum, err := direct.FromLog(r.fromLog, cluster, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: fine-tuning on the decision log %s, replayed on %s (%s regime)\n", r.name, r.fromLog, desc, set.Regime)
	fmt.Fprintln(stdout, sum)
	fmt.Fprintln(stdout, "learned from: the served jobs' arrivals, GPUs, models and run times, replayed in the simulator; not from the node loads the deployment saw (not in the log: the simulator's background stands in)")
	cfg := direct.Config{Name: r.name, Algo: r.algo, Seed: r.seed, Steps: r.steps, Log: log, Settings: []direct.Setting{set},
		Backend: r.backend, Device: r.device}
	var initMeta checkpoints.Meta
	var initNets map[string]*nn.MLP
	if r.init != "" {
		if initMeta, initNets, err = warmStart(&cfg, "--init", r.init, stdout); err != nil {
			return err
		}
	}
	res, err := direct.Train(cfg)
	if err != nil {
		return err
	}
	printTrained(stdout, res, start)
	meta := res.Meta
	meta.Hyperparams["log_jobs"], meta.Hyperparams["log_span_s"] = float64(sum.Replayed), sum.Span
	if r.init != "" {
		meta.Hyperparams["init"] = 1
	}
	meta.Eval = map[string]float64{}
	if r.evalSeeds <= 0 {
		fmt.Fprintln(stdout, "no evaluation (--eval-seeds 0): not converged")
		return saveDirect(r, meta, res, stdout)
	}
	cs, err := logContenders(r, meta, res.Nets, initMeta, initNets)
	if err != nil {
		return err
	}
	gate := train.GateConfig{Seed: r.seed}
	js, err := direct.Judge(cs, []direct.HeldOut{sum.HeldOut("log", set)}, logEvalSeeds(r.evalSeeds), gate, compare.Config{}, judgeProgress(r.quiet, stderr, "replays of "))
	if err != nil {
		return err
	}
	j := js[0]
	fmt.Fprintf(stdout, "\nreplays of the logged arrivals, %d seeds the training did not use:\n%-8s %6s %14s %14s\n", r.evalSeeds, "policy", "seeds", "avg TTA (s)", "avg JCT (s)")
	tta := func(p compare.PolicyResult) []float64 {
		xs := make([]float64, len(p.Runs))
		for k, run := range p.Runs {
			xs[k] = run.Summary.TTAPerTarget // AvgTTA when no job missed its target
		}
		return xs
	}
	for _, p := range j.Result.Policies {
		fmt.Fprintf(stdout, "%-8s %6d %14.0f %14.0f\n", p.Name, len(p.Runs), p.AvgTTA.Mean, p.AvgJCT.Mean)
		meta.Eval["avg_tta_log_"+p.Name], meta.Eval["avg_jct_log_"+p.Name] = p.AvgTTA.Mean, p.AvgJCT.Mean
	}
	for k, p := range j.Result.Policies[1:] {
		v := j.Verdict
		if k > 0 {
			v = train.Gate(tta(j.Result.Policies[0]), tta(p), gate)
		}
		fmt.Fprintf(stdout, "gate on the log's replays, %s vs %s (avg TTA): %v\n", r.name, p.Name, v)
		meta.Eval["gate_log_vs_"+p.Name+"_mean_gain"], meta.Eval["gate_log_vs_"+p.Name+"_lower"] = v.MeanGain, v.Lower
	}
	fmt.Fprintln(stdout, "not marked converged: judged on the arrivals it trained on (other seeds); drover serve's gate judges it on what it serves")
	return saveDirect(r, meta, res, stdout)
}

// logContenders are the policies --from-log judges: the trained one, the
// --init checkpoint's when given, and the heuristic.
func logContenders(r directRun, meta checkpoints.Meta, nets map[string]*nn.MLP, initMeta checkpoints.Meta, initNets map[string]*nn.MLP) ([]compare.Policy, error) {
	mk, err := pdirect.FromCheckpoint(meta, nets)
	if err != nil {
		return nil, err
	}
	heur := map[string]string{pdirect.STRNRL: "strn", pdirect.SASRL: "sas"}[r.name]
	hf, err := builtin.Registry().Factory(heur)
	if err != nil {
		return nil, err
	}
	cs := []compare.Policy{{Name: r.name, New: func(uint64) (policies.Policy, error) { return mk(), nil }}}
	if r.init != "" {
		mi, err := pdirect.FromCheckpoint(initMeta, initNets)
		if err != nil {
			return nil, fmt.Errorf("--init %s: %w", r.init, err)
		}
		cs = append(cs, compare.Policy{Name: "init", New: func(uint64) (policies.Policy, error) { return mi(), nil }})
	}
	cs = append(cs, compare.Policy{Name: heur, New: func(s uint64) (policies.Policy, error) { return hf(policies.Config{Seed: s}) }})
	return cs, nil
}

// judgeProgress is direct.Judge's progress callback: a bar per workload
// on stderr labelled prefix + the workload's name (nil when quiet).
func judgeProgress(quiet bool, stderr io.Writer, prefix string) func(w string, done, total int) {
	if quiet {
		return nil
	}
	var bar *progress.Bar
	return func(w string, done, total int) {
		if done == 1 || bar == nil {
			bar = progress.New(stderr, prefix+w, total)
		}
		bar.Set(done)
		if done == total {
			bar.Finish()
		}
	}
}

// printTrained reports a direct.Train result: behaviour cloning's figures
// (when it cloned) and the wall time since start.
func printTrained(stdout io.Writer, res direct.Result, start time.Time) {
	if res.Samples > 0 {
		fmt.Fprintf(stdout, "behaviour cloning: %d teacher decisions, agreement on held-back ones %.1f%%\n", res.Samples, 100*res.Agreement)
	}
	fmt.Fprintf(stdout, "trained in %s\n", time.Since(start).Round(time.Millisecond))
}

// warmStart loads the checkpoint at path (the value of flag, named in
// errors) into cfg's initial actor (direct.Config.InitFrom), says so on
// stdout, and returns the checkpoint.
func warmStart(cfg *direct.Config, flag, path string, stdout io.Writer) (checkpoints.Meta, map[string]*nn.MLP, error) {
	m, nets, err := checkpoints.Load(path)
	if err != nil {
		return m, nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if err := cfg.InitFrom(m, nets); err != nil {
		return m, nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	fmt.Fprintf(stdout, "starting from %s (%s/%s, %d groups, hold %v, hidden %v): a warm start of the actor\n", path, m.Env, m.Algo, cfg.Groups, cfg.Hold, cfg.Hidden)
	return m, nets, nil
}
