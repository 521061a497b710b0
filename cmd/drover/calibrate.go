package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/jitter"
)

// minibatchFiles are the per-worker time series of the PAI v2020 data.
var minibatchFiles = []string{"job_1_norm.csv", "job_2_norm.csv", "job_3_norm.csv", "job_4_norm.csv.gz"}

func runCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", stderr)
	data := fs.String("data", filepath.Join("..", "shared", "traces", "alibaba_v2020_minibatch"), "directory of the Alibaba PAI v2020 mini-batch data (coefficient_variation.csv.gz, job_N_norm.csv)")
	seed := fs.Uint64("seed", 1, "seed of the simulation")
	fit := fs.Bool("fit", false, "refit the params to the data (seed jitter.FitSeed) instead of using jitter.Default, and print them as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover calibrate [flags]\n\nCompares the per-worker slowdown process (env/jitter) with the Alibaba PAI\nmini-batch data: KS distance of the per-iteration CoV, CoV quantiles and\nstraggler fractions, simulated vs real.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	if st, err := os.Stat(*data); err != nil || !st.IsDir() {
		return fmt.Errorf("data directory %s not found (get the traces, or pass --data DIR)", *data)
	}
	tab, err := datasets.ReadCoV(filepath.Join(*data, "coefficient_variation.csv.gz"), datasets.Options{})
	if err != nil {
		return err
	}
	real := jitter.Data{CoV: tab.Values()}
	for _, f := range minibatchFiles {
		// The jobs' last iterations lack some workers; leave them out.
		mb, err := datasets.ReadMiniBatch(filepath.Join(*data, f), datasets.Options{SkipBad: true})
		if err != nil {
			return err
		}
		real.Traces = append(real.Traces, jitter.Trace{Name: f, Times: mb.Times})
	}
	p := jitter.Default
	if *fit {
		var obj float64
		p, obj = jitter.Fit(jitter.Summarize(real.CoV), jitter.FitSeed)
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "fitted params (objective %.4f):\n%s\n\n", obj, b)
	}
	r, err := jitter.Calibrate(p, real, *seed)
	if err != nil {
		return err
	}
	return writeCalibration(stdout, r)
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
