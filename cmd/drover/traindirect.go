package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/compare"
	pdirect "github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/train"
	"github.com/drover-sched/drover/train/direct"
)

// isDirectAlgo reports whether --env sas-rl or strn-rl with algo trains the
// direct policy (policies/direct) rather than the candidate re-ranker.
func isDirectAlgo(algo string) bool {
	return algo == direct.AlgoBC || algo == direct.AlgoPPO || algo == direct.AlgoDQN
}

// directRun is `drover train --env strn-rl|sas-rl --algo bc|ppo|dqn`.
type directRun struct {
	name, algo string
	seed       uint64
	steps      int
	evalSeeds  int
	dir        string
	quiet      bool
}

// runTrainDirect trains a direct policy (train/direct), saves its
// checkpoint in r.dir, plots its learning curve and, with eval seeds,
// judges it against its heuristic on the held-out workloads with the
// convergence gate: the checkpoint says converged when the gate passes on
// the Helios, PAI and Philly-late episodes together.
func runTrainDirect(r directRun, stdout, stderr io.Writer) error {
	log := io.Discard
	if !r.quiet {
		log = stderr
	}
	start := time.Now()
	heur := map[string]string{pdirect.STRNRL: "strn", pdirect.SASRL: "sas"}[r.name]
	fmt.Fprintf(stdout, "%s: direct policy (node group or cluster x sync strategy per job, no heuristic in the loop), %s; teacher %s\n", r.name, r.algo, map[string]string{pdirect.STRNRL: "strn", pdirect.SASRL: "sas+strn-sync"}[r.name])
	res, err := direct.Train(direct.Config{Name: r.name, Algo: r.algo, Seed: r.seed, Steps: r.steps, Log: log})
	if err != nil {
		return err
	}
	if res.Samples > 0 {
		fmt.Fprintf(stdout, "behaviour cloning: %d teacher decisions, agreement on held-back ones %.1f%%\n", res.Samples, 100*res.Agreement)
	}
	fmt.Fprintf(stdout, "trained in %s\n", time.Since(start).Round(time.Millisecond))
	meta := res.Meta
	meta.Eval = map[string]float64{}
	if r.evalSeeds > 0 {
		held, missing, err := direct.DefaultHeldOut()
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			fmt.Fprintf(stdout, "held-out workloads missing (no ../shared/traces): %s\n", strings.Join(missing, ", "))
		}
		mk, err := pdirect.FromCheckpoint(meta, res.Nets)
		if err != nil {
			return err
		}
		hf, err := builtin.Registry().Factory(heur)
		if err != nil {
			return err
		}
		cs := []compare.Policy{{Name: r.name, New: func(uint64) (policies.Policy, error) { return mk(), nil }},
			{Name: heur, New: func(s uint64) (policies.Policy, error) { return hf(policies.Config{Seed: s}) }}}
		seeds := make([]uint64, r.evalSeeds)
		for i := range seeds {
			seeds[i] = 1001 + uint64(i)
		}
		var bar *progress.Bar
		prog := func(w string, done, total int) {
			if r.quiet {
				return
			}
			if done == 1 || bar == nil {
				bar = progress.New(stderr, "held-out "+w, total)
			}
			bar.Set(done)
			if done == total {
				bar.Finish()
			}
		}
		js, err := direct.Judge(cs, held, seeds, train.GateConfig{Seed: r.seed}, compare.Config{}, prog)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n%-12s %-8s %6s %14s %14s\n", "workload", "policy", "seeds", "avg TTA (s)", "avg JCT (s)")
		var learned, base []float64
		for _, j := range js {
			for _, p := range j.Result.Policies {
				fmt.Fprintf(stdout, "%-12s %-8s %6d %14.0f %14.0f\n", j.Workload, p.Name, len(p.Runs), p.AvgTTA.Mean, p.AvgJCT.Mean)
				meta.Eval["avg_tta_"+j.Workload+"_"+p.Name] = p.AvgTTA.Mean
			}
			fmt.Fprintf(stdout, "gate on %s, %s vs %s (avg TTA): %v\n", j.Workload, r.name, heur, j.Verdict)
			if j.Workload != "builtin" {
				for k := range j.Result.Policies[0].Runs {
					learned = append(learned, j.Result.Policies[0].Runs[k].Summary.AvgTTA)
					base = append(base, j.Result.Policies[1].Runs[k].Summary.AvgTTA)
				}
			}
		}
		if len(learned) > 0 {
			v := train.Gate(learned, base, train.GateConfig{Seed: r.seed})
			meta.Converged = v.Converged
			fmt.Fprintf(stdout, "\ngate, the held-out trace episodes together, %s vs %s (avg TTA): %v\n", r.name, heur, v)
		}
	} else {
		fmt.Fprintln(stdout, "no held-out evaluation (--eval-seeds 0): not converged")
	}
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
		path := filepath.Join(r.dir, CurveFile)
		if err := plot.WriteFile(path, func(w io.Writer) error { return plot.Lines(w, o, []plot.Series{raw}) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "checkpoint %s\n", r.dir)
	return nil
}
