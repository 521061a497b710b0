package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
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
	dir := *f.out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s__%s__%d", pdrlEnv, algo, *f.seed))
	}
	var log io.Writer = stdout
	if *f.quiet {
		log = io.Discard
	}
	cfg := pdrl.Config{Seed: *f.seed, Deploy: infergym.Deployment(perf), Trace: tr.Requests, Steps: *f.steps, BCOnly: algo == "bc", Log: log, Teacher: *f.teacher}
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
		seeds := make([]uint64, *f.evalSeeds)
		for i := range seeds {
			seeds[i] = uint64(i + 1)
		}
		j, err := pdrl.Judge(cfg.Deploy, tr.Requests, pdrl.DefaultHeldOut(), seeds, func() ppdrl.Decider { return newP() }, gate.Config{Seed: *f.seed})
		if err != nil {
			return err
		}
		ml, mb := meanOf(j.Learned), meanOf(j.Baseline)
		fmt.Fprintf(stdout, "gate vs hack on %d held-out episodes: mean JCT %.3f s (pd-rl) vs %.3f s (hack), SLO attainment %.4f vs %.4f; %v\n",
			len(j.Learned), ml, mb, j.SLOLearned, j.SLOBaseline, j.Verdict)
		res.Meta.Eval = map[string]float64{"heldout_mean_jct": ml, "heldout_mean_jct_hack": mb, "heldout_slo": j.SLOLearned,
			"heldout_slo_hack": j.SLOBaseline, "gate_mean_gain": j.Verdict.MeanGain, "gate_lower": j.Verdict.Lower}
		res.Meta.Converged = j.Verdict.Converged
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
