package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/policies/gate"
	ppdrl "github.com/drover-sched/drover/policies/pdrl"
	"github.com/drover-sched/drover/train/pdrl"
)

// pdrlEnv is drover train's --env for the learned inference router.
const pdrlEnv = ppdrl.Name

// Where drover train --env pd-rl reads its inputs, from the repository's
// root (beside ../shared/traces).
var (
	pdrlPerfPath  = filepath.Join("..", "shared", "traces", "llm", "calibration", "splitwise_perf_model.csv")
	pdrlTracePath = filepath.Join("..", "shared", "traces", "llm", "azure_llm_2023", "AzureLLMInferenceTrace_conv.csv")
)

// runTrainPDRL is `drover train --env pd-rl --algo bc|ppo`: behaviour
// cloning of the speed-aware rule (policies/pdrl.Speed) on windows of the Azure 2023 conv trace's
// first 2,400 s, then PPO (train/pdrl), judged by the gate against HACK on
// the held-out windows from 2,400 s at --eval-seeds gap-scale seeds; the
// checkpoint (converged as the gate says) goes to --out.
func runTrainPDRL(f *trainFlags, given map[string]bool, stdout io.Writer) error {
	for _, name := range []string{"resume", "from-log", "init", "config", "backend", "device"} {
		if given[name] {
			return fmt.Errorf("--env %s does not take --%s", pdrlEnv, name)
		}
	}
	algo := *f.algo
	if algo != "bc" && algo != "ppo" {
		return fmt.Errorf("--env %s --algo %q: want bc or ppo", pdrlEnv, algo)
	}
	if *f.evalSeeds < 0 || *f.evalSeeds > 1000 || *f.steps < 0 || *f.steps > 100_000_000 {
		return errors.New("--eval-seeds: want 0 to 1000; --steps: 0 to 1e8")
	}
	if t := *f.teacher; t != "" && t != ppdrl.SpeedName && t != ppdrl.HACKName {
		return fmt.Errorf("--teacher %q: want %s or %s", t, ppdrl.SpeedName, ppdrl.HACKName)
	}
	if *f.judge != "" {
		for _, name := range []string{"algo", "steps", "teacher", "out"} {
			if given[name] {
				return fmt.Errorf("--judge %s trains nothing: it does not take --%s", *f.judge, name)
			}
		}
		if *f.evalSeeds == 0 {
			return fmt.Errorf("--judge %s --eval-seeds 0: want 1 to 1000 held-out seeds", *f.judge)
		}
	}
	data, err := inputfile.ReadFile(pdrlPerfPath, inputfile.Document)
	if err != nil {
		return err
	}
	perf, err := infer.ParsePerfTable(data)
	if err != nil {
		return fmt.Errorf("%s: %w", pdrlPerfPath, err)
	}
	tr, err := llm.ReadFile(pdrlTracePath, llm.FormatAzure, llm.Options{})
	if err != nil {
		return err
	}
	deploy := infergym.Deployment(perf)
	if *f.judge != "" {
		return judgePDRL(*f.judge, deploy, tr, *f.evalSeeds, given["eval-seeds"], *f.seed, stdout)
	}
	dir := *f.out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s__%s__%d", pdrlEnv, algo, *f.seed))
	}
	var log io.Writer = stdout
	if *f.quiet {
		log = io.Discard
	}
	cfg := pdrl.Config{Seed: *f.seed, Deploy: deploy, Trace: tr.Requests, Steps: *f.steps, BCOnly: algo == "bc", Log: log, Teacher: *f.teacher}
	fmt.Fprintf(stdout, "%s: %s on %s (%d requests), deployment %d instances, teacher %s, seed %d\n", pdrlEnv, algo, tr.Name, len(tr.Requests), len(cfg.Deploy.Instances), cmp.Or(cfg.Teacher, ppdrl.SpeedName), cfg.Seed)
	res, err := pdrl.Train(cfg)
	if err != nil {
		return err
	}
	if *f.evalSeeds > 0 {
		newP, err := ppdrl.FromCheckpoint(res.Meta, res.Nets, res.Encoder)
		if err != nil {
			return err
		}
		eval, converged, err := judgePDRLPolicy(cfg.Deploy, tr, *f.evalSeeds, *f.seed, newP, stdout)
		if err != nil {
			return err
		}
		res.Meta.Eval, res.Meta.Converged = eval, converged
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := checkpoints.Save(dir, res.Meta, res.Nets); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "checkpoint: %s (converged %v)\n", dir, res.Meta.Converged)
	return nil
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x / float64(len(xs))
	}
	return s
}

// judgePDRLPolicy judges the pd-rl policies newP makes by the gate against
// HACK on the held-out windows of tr at seeds 1..evalSeeds (gate seed
// seed), prints the gate's line and returns the figures a checkpoint's
// meta.json records and the verdict.
func judgePDRLPolicy(deploy infer.Config, tr *llm.Trace, evalSeeds int, seed uint64, newP func() *ppdrl.Policy, stdout io.Writer) (map[string]float64, bool, error) {
	seeds := make([]uint64, evalSeeds)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	j, err := pdrl.Judge(deploy, tr.Requests, pdrl.DefaultHeldOut(), seeds, func() ppdrl.Decider { return newP() }, gate.Config{Seed: seed})
	if err != nil {
		return nil, false, err
	}
	ml, mb := meanOf(j.Learned), meanOf(j.Baseline)
	fmt.Fprintf(stdout, "gate vs hack on %d held-out episodes: mean JCT %.3f s (pd-rl) vs %.3f s (hack), SLO attainment %.4f vs %.4f; %v\n",
		len(j.Learned), ml, mb, j.SLOLearned, j.SLOBaseline, j.Verdict)
	return map[string]float64{"heldout_mean_jct": ml, "heldout_mean_jct_hack": mb, "heldout_slo": j.SLOLearned,
		"heldout_slo_hack": j.SLOBaseline, "gate_mean_gain": j.Verdict.MeanGain, "gate_lower": j.Verdict.Lower,
		"heldout_seeds": float64(evalSeeds)}, j.Verdict.Converged, nil
}

// judgePDRL is `drover train --env pd-rl --judge DIR`: the saved
// checkpoint in dir judged as drover train judges a new one (the same
// deployment, held-out windows, seeds and gate), its verdict printed beside
// the one its meta.json records. The held-out seeds are evalSeeds when
// seedsGiven, else as many as the record says it was judged on
// (eval.heldout_seeds, recorded since 2026-12-06), else evalSeeds. Nothing
// is written: a checkpoint whose recorded figures have gone stale (the
// simulator's costs changed since it was trained) is shown as such, and
// retraining is how to renew it.
func judgePDRL(dir string, deploy infer.Config, tr *llm.Trace, evalSeeds int, seedsGiven bool, seed uint64, stdout io.Writer) error {
	m, nets, err := checkpoints.Load(dir)
	if err != nil {
		return fmt.Errorf("--judge %s: %w", dir, err)
	}
	if n := m.Eval["heldout_seeds"]; !seedsGiven && n >= 1 && n <= 1000 && n == math.Trunc(n) {
		evalSeeds = int(n)
	}
	if m.Env != pdrlEnv {
		return fmt.Errorf("--judge %s: a checkpoint of --env %s, not %s", dir, m.Env, pdrlEnv)
	}
	newP, err := ppdrl.FromCheckpoint(m, nets, ppdrl.ConfigOf(m, deploy.Model.Arch))
	if err != nil {
		return fmt.Errorf("--judge %s: %w", dir, err)
	}
	fmt.Fprintf(stdout, "%s: judging %s (%s, seed %d) on %s (%d requests), deployment %d instances, gate seed %d\n", pdrlEnv, dir, m.Algo, m.Seed, tr.Name, len(tr.Requests), len(deploy.Instances), seed)
	eval, converged, err := judgePDRLPolicy(deploy, tr, evalSeeds, seed, newP, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "recorded in %s: converged %v", filepath.Join(dir, checkpoints.MetaFile), m.Converged)
	if len(m.Eval) > 0 {
		fmt.Fprintf(stdout, ", mean JCT %.3f s vs %.3f s (hack), gain %.1f%%", m.Eval["heldout_mean_jct"], m.Eval["heldout_mean_jct_hack"], 100*m.Eval["gate_mean_gain"])
	}
	// The figures the record holds must be the same (a record from before
	// heldout_seeds was kept lacks that one).
	same := converged == m.Converged && len(m.Eval) > 0
	for k, v := range m.Eval {
		if eval[k] != v {
			same = false
		}
	}
	fmt.Fprintf(stdout, "; now: converged %v (%s)\n", converged, map[bool]string{true: "the same figures", false: "differs from the record"}[same])
	return nil
}
