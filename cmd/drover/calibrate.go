package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/jitter"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies/firstfit"
)

// minibatchFiles are the per-worker time series of the PAI v2020 data.
var minibatchFiles = []string{"job_1_norm.csv", "job_2_norm.csv", "job_3_norm.csv", "job_4_norm.csv.gz"}

func runCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "traces", "alibaba_v2020_minibatch"), "directory of the Alibaba PAI v2020 mini-batch data (coefficient_variation.csv.gz, job_N_norm.csv)")
	traces := fs.String("traces", filepath.Join("..", "shared", "traces"), "the shared traces directory, for the dedicated regime's Philly and Helios replays (the built-in workload needs none)")
	seed := fs.Uint64("seed", 1, "seed of the shared regime's simulation")
	fit := fs.Bool("fit", false, "refit the shared regime's params to the data (seed jitter.FitSeed) instead of using jitter.Default, and print them as JSON")
	regime := fs.String("regime", "both", "which regime to check: shared (GPU-sharing jobs vs the PAI mini-batch times), dedicated (whole GPUs vs the papers' straggler inflation), or both")
	dseeds := fs.String("dedicated-seeds", "1-20", "seeds of the dedicated regime's replays (LO-HI or a comma list); Helios's average JCT swings 0.3-4x the job-level model's from seed to seed, so the check needs many")
	quiet := fs.Bool("quiet", false, "no progress output")
	fitDedicated := fs.Bool("fit-dedicated", false, "refit the dedicated regime's jitter level and burst noise to its targets and print them")
	conv := fs.Bool("convergence", false, "check the convergence model (env/converge) instead of the straggler model: every fitted parameter with its 95% interval and source, every fitted curve against its data with PASS/FAIL, and a PNG per model family under --out")
	out := fs.String("out", defaultConvergenceOut, "--convergence: directory for the figures, one <family>.png per model family")
	fs.StringVar(out, "o", defaultConvergenceOut, "the same as --out")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover calibrate [flags]\n       drover calibrate --convergence [-o DIR]\n\nChecks the per-worker straggler model against its two calibrations, each with\nPASS/FAIL against its target:\n\n  shared     the per-worker slowdown process of GPU-sharing jobs (env/jitter.Default)\n             against the Alibaba PAI v2020 mini-batch data: KS distance of the\n             per-iteration CoV, CoV quantiles and straggler fractions, simulated vs real.\n  dedicated  jobs on whole GPUs (jitter.Dedicated, env/trace.DedicatedBurstNoise)\n             replayed under first-fit and BSP on the built-in workload, Philly\n             (125 x 8 GPUs) and Helios (22 x 8): the median over multi-node jobs of\n             training time over straggler-free time (target 1.3-1.7x, STRET's ~50%),\n             the communication share of that delay (STRET: communication first,\n             compounded by computation), and on Helios the average JCT against the\n             job-level model's (at most 2x).\n\nWith --convergence it checks the convergence model instead (env/converge: iterations\nto a target accuracy and final accuracy against batch size and staleness, fitted to\npublished training curves): per model family its parameters, each check of the fit\nagainst its data with PASS/FAIL, and DIR/<family>.png. It exits non-zero when a check\nfails that the package does not document as a known disagreement of its sources.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	if conv, err := convergenceFlags(fs, *conv); err != nil || conv {
		if err != nil {
			return err
		}
		return runConvergence(*out, stdout)
	}
	switch *regime {
	case "both", trace.RegimeShared, trace.RegimeDedicated:
	default:
		return fmt.Errorf("--regime %q: want shared, dedicated or both", *regime)
	}
	pass := true
	if *regime != trace.RegimeDedicated {
		ok, err := calibrateShared(*data, *seed, *fit, stdout)
		if err != nil {
			return err
		}
		pass = pass && ok
	}
	if *regime != trace.RegimeShared {
		if *regime == "both" {
			fmt.Fprintln(stdout)
		}
		seeds, err := parseSeeds(*dseeds)
		if err != nil {
			return fmt.Errorf("--dedicated-seeds: %w", err)
		}
		ok, err := calibrateDedicated(*traces, seeds, *fitDedicated, *quiet, stdout, stderr)
		if err != nil {
			return err
		}
		pass = pass && ok
	}
	if !pass {
		return errCalibrationFailed
	}
	return nil
}

// newFirstFit builds the first-fit scheduler the dedicated regime's
// targets are defined under, for trace.CalibrateDedicated.
func newFirstFit() env.Scheduler { return new(firstfit.FirstFit) }

// errCalibrationFailed is returned when a calibration misses its target
// (the report says which), so that scripts see a non-zero exit.
var errCalibrationFailed = errors.New("calibration: a target was missed (FAIL above)")

// calibrateShared checks the shared regime's jitter against the PAI
// mini-batch data in dir and prints the report; ok is false on FAIL.
func calibrateShared(data string, seed uint64, fit bool, stdout io.Writer) (ok bool, err error) {
	fmt.Fprintln(stdout, "== shared regime: GPU-sharing jobs vs the Alibaba PAI v2020 mini-batch times")
	if st, err := os.Stat(data); err != nil || !st.IsDir() {
		return false, fmt.Errorf("data directory %s not found (get the traces, or pass --data DIR)", data)
	}
	tab, err := datasets.ReadCoV(filepath.Join(data, "coefficient_variation.csv.gz"), datasets.Options{})
	if err != nil {
		return false, err
	}
	real := jitter.Data{CoV: tab.Values()}
	for _, f := range minibatchFiles {
		// The jobs' last iterations lack some workers, and job_2 repeats
		// a row: leave them out and say so. A row with a bad value
		// (malformed, NaN, negative, past datasets.MaxBatchTimeNorm, a
		// second time for one iteration and worker) is refused with its
		// file:line and field, not dropped.
		mb, err := datasets.ReadMiniBatch(filepath.Join(data, f), datasets.Options{SkipBad: true})
		if err != nil {
			return false, err
		}
		if mb.FirstBad != nil {
			return false, fmt.Errorf("calibration data: %w (%d bad rows in %s; only iterations that lack a worker and exact repeats are left out)", mb.FirstBad, mb.Bad, f)
		}
		if mb.Incomplete > 0 || mb.Repeated > 0 {
			fmt.Fprintf(stdout, "%s: left out %d iterations that lack a worker and %d repeated rows (%d rows in all)\n", f, mb.Incomplete, mb.Repeated, mb.Skipped)
		}
		real.Traces = append(real.Traces, jitter.Trace{Name: f, Times: mb.Times})
	}
	p := jitter.Default()
	if fit {
		var obj float64
		p, obj = jitter.Fit(jitter.Summarize(real.CoV), jitter.FitSeed)
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return false, err
		}
		fmt.Fprintf(stdout, "fitted params (objective %.4f):\n%s\n\n", obj, b)
	}
	r, err := jitter.Calibrate(p, real, seed)
	if err != nil {
		return false, err
	}
	return r.KS <= jitter.Target, writeCalibration(stdout, r)
}

// calibrateDedicated replays the dedicated regime's cases from the traces
// in dir (the built-in workload always; Philly and Helios when found),
// prints their figures with PASS/FAIL, and with fit first refits the
// regime's two numbers; ok is false when a case misses a target.
func calibrateDedicated(dir string, seeds []uint64, fit, quiet bool, stdout, stderr io.Writer) (ok bool, err error) {
	fmt.Fprintln(stdout, "== dedicated regime: whole GPUs, first-fit, BSP, vs STRET's measurement (~1.5x, communication first)")
	cases, err := dedicatedCases(dir, stdout)
	if err != nil {
		return false, err
	}
	st := trace.Stragglers{Background: "builtin"}
	if fit {
		level, burst, obj, err := trace.FitDedicated(cases, seeds, st, newFirstFit, 60, func(l, b, o float64) {
			fmt.Fprintf(stderr, "fit: level_median %.5f burst_noise %.4f objective %.5f\n", l, b, o)
		})
		if err != nil {
			return false, err
		}
		fmt.Fprintf(stdout, "fitted: level_median %.5g (jitter/dedicated.json), burst_noise %.4g (trace.DedicatedBurstNoise); objective %.5f\n\n", level, burst, obj)
		p := jitter.Dedicated()
		p.LevelMedian = level
		st.Jitter, st.BurstNoise = &p, &burst
	}
	var bar *progress.Bar
	if !quiet {
		bar = progress.New(stderr, "calibrate", len(cases)*len(seeds))
	}
	n := 0
	rs, err := trace.CalibrateDedicated(cases, seeds, st, newFirstFit, func(string, uint64) {
		if bar != nil {
			bar.Set(n)
		}
		n++
	})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return false, err
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\tseeds\tmulti-node jobs\tinflation: median (range)\tcommunication share\titerations with a straggler\tavg JCT / job-level: mean over seeds (range)\tverdict\n")
	ok = true
	mr := func(xs []float64, f string) string {
		lo, hi := trace.Range(xs)
		med := slices.Clone(xs)
		slices.Sort(med)
		return fmt.Sprintf(f+" ("+f+"-"+f+")", env.Quantile(med, 0.5), lo, hi)
	}
	for _, r := range rs {
		pass, why := r.Pass()
		ok = ok && pass
		verdict := "PASS"
		if !pass {
			verdict = "FAIL: " + why
		}
		ratio := "-"
		if r.JobLevelJCT > 0 {
			lo, hi := trace.Range(r.JCT)
			ratio = fmt.Sprintf("%.2fx (%.2f-%.2fx; %.0f s vs %.0f s)", r.JCTRatio(), lo/r.JobLevelJCT, hi/r.JobLevelJCT, r.AvgJCT, r.JobLevelJCT)
		}
		multi := make([]float64, len(r.MultiNode))
		for i, n := range r.MultiNode {
			multi[i] = float64(n)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, len(r.Seeds), mr(multi, "%.0f"), mr(r.Inflation, "%.3f"),
			mr(r.CommShare, "%.2f"), mr(r.StragglerFrac, "%.3f"), ratio, verdict)
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "targets: inflation in [%.1f, %.1f], communication share in [%.2f, %.2f], avg JCT <= %gx the job-level model's (Helios)\n",
		trace.InflationLow, trace.InflationHigh, trace.CommShareLow, trace.CommShareHigh, float64(trace.JCTRatioMax))
	return ok, nil
}

// dedicatedCases returns the dedicated regime's calibration cases: the
// built-in workload on 16 x 4 GPUs, and, when found under dir, the Philly
// job list on 125 x 8 and the Helios slice on 22 x 8 (with the job-level
// comparison); it notes a missing trace on w.
func dedicatedCases(dir string, w io.Writer) ([]trace.CalibrationCase, error) {
	specs := []struct {
		name, path string
		nodes, gpn int
		jobLevel   bool
	}{
		{"builtin", "builtin", 16, 4, false},
		{"philly", filepath.Join(dir, "philly", "pollux_philly.csv.gz"), 125, 8, false},
		{"helios", filepath.Join(dir, "helios", "helios_venus_2vc_sept.csv"), 22, 8, true},
	}
	var cases []trace.CalibrationCase
	for _, s := range specs {
		if s.path != "builtin" {
			if _, err := os.Stat(s.path); err != nil {
				fmt.Fprintf(w, "(%s: %s not found; skipped)\n", s.name, s.path)
				continue
			}
		}
		wl, err := datasets.Load(s.path, datasets.FormatAuto, datasets.Options{SkipBad: true})
		if err != nil {
			return nil, err
		}
		prof, _, err := trace.Profiles("", s.path)
		if err != nil {
			return nil, err
		}
		cases = append(cases, trace.CalibrationCase{Name: s.name, Workload: wl, Profiles: prof, Nodes: s.nodes, GPUsPerNode: s.gpn, JobLevel: s.jobLevel})
	}
	return cases, nil
}

// writeCalibration prints r as a small table.
func writeCalibration(w io.Writer, r jitter.Report) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("real: %d jobs, %d iterations; simulated: %d x %d jobs x %d workers, seed %d\n\n",
		r.Jobs, r.Iterations, r.Replicas, r.Jobs, jitter.Workers, r.Seed)
	p("CoV\tsim\treal\n")
	for _, q := range []struct {
		name      string
		sim, real float64
	}{{"p10", r.SimCoV.P10, r.RealCoV.P10}, {"p50", r.SimCoV.P50, r.RealCoV.P50}, {"p90", r.SimCoV.P90, r.RealCoV.P90}, {"p99", r.SimCoV.P99, r.RealCoV.P99}} {
		p("%s\t%.4f\t%.4f\n", q.name, q.sim, q.real)
	}
	p("\nstragglers (> median +%.0f%%)\tsim\treal\n", 100*r.Threshold)
	p("pooled\t%.3f\t%.3f\n", r.SimStragglers, r.RealStragglers)
	for _, t := range r.Traces {
		p("%s (%d it)\t\t%.3f\n", t.Name, t.Iterations, t.Fraction)
	}
	verdict := "PASS"
	if r.KS > jitter.Target {
		verdict = "FAIL"
	}
	p("\nKS distance (pooled CoV, sim vs real)\t%.4f\t%s (target <= %.2f)\n", r.KS, verdict, jitter.Target)
	return tw.Flush()
}
