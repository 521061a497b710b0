package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/background"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// defaultMachineUsage is the v2018 machine-usage head, relative to the
// repository root.
var defaultMachineUsage = filepath.Join("..", "shared", "traces", "alibaba_v2018", "machine_usage.csv.gz")

const forecastUsage = `usage: drover forecast eval [flags]
       drover forecast fit [-o FILE] [flags]

SAS's node-load forecaster (policies/sas/forecast): linear quantile
regressions of a node's utilisation over the next hour on its own recent
history, fitted on the Alibaba v2018 machine usage.

  eval  scores the embedded model (or --model, or a --refit one) on the
        held-out time of every machine (after --split of it) against today's
        empirical window (the last 64 samples' quantiles): pinball loss at
        P10, P50 and P90 and coverage of the P10-P90 band, per resource, with
        PASS when the model's mean pinball loss is below the window's on
        every resource (exit status 1 on FAIL). --folds N adds machines held
        out: N folds, each scored by a model fitted on the others.
  fit   fits the model on the first --split of every machine's time and
        writes the model file; -o policies/sas/forecast/model.json
        regenerates the embedded one.`

// forecastFlags are drover forecast's flags.
type forecastFlags struct {
	tracePath *string
	split     *float64
	horizon   *int
	minHist   *int
	out       *string
	model     *string
	refit     *bool
	folds     *int
	window    *int
	simulated *bool
}

// defineForecastFlags defines drover forecast's flags on fs.
func defineForecastFlags(fs *flag.FlagSet) *forecastFlags {
	f := new(forecastFlags)
	f.tracePath = fs.String("trace", defaultMachineUsage, "the Alibaba v2018 machine_usage.csv(.gz)")
	f.split = fs.Float64("split", 0.7, "share of each machine's time to fit on; the rest is held out")
	f.horizon = fs.Int("horizon", forecast.DefaultHorizon, "fit: steps of 300 s a forecast covers")
	f.minHist = fs.Int("min-history", forecast.DefaultMinHistory, "fit: fewest samples a forecast needs")
	f.out = fs.String("o", "-", "fit: output model file (- for stdout)")
	f.model = fs.String("model", "", "eval: a model file to score instead of the embedded one")
	f.refit = fs.Bool("refit", false, "eval: fit a model on the training time (with --horizon, --min-history) and score it")
	f.folds = fs.Int("folds", 0, "eval: also score on machines held out, in this many folds (0: off; each fold refits)")
	f.window = fs.Int("window", forecast.DefaultWindow, "eval: the baseline window, in samples")
	f.simulated = fs.Bool("simulated", true, "eval: also score, for information, on the simulator's builtin background load (the fitted stochastic process, 16 nodes x 8 days, seed 1), which the model never saw")
	return f
}

func runForecast(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "eval" && args[0] != "fit" {
		fmt.Fprintln(stderr, forecastUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return flag.ErrHelp
		}
		return errUsage
	}
	sub := args[0]
	fs := newFlags("forecast "+sub, stderr)
	f := defineForecastFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, forecastUsage+"\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	cfg := forecast.DefaultConfig()
	cfg.Horizon, cfg.MinHistory = *f.horizon, *f.minHist
	traces, err := readForecastTraces(*f.tracePath, cfg.Step)
	if err != nil {
		return err
	}
	train, from := forecast.TimeSplit(traces, *f.split)
	if sub == "fit" {
		return forecastFit(stdout, stderr, f, train, cfg)
	}
	m, what, err := forecastModel(f, train, cfg)
	if err != nil {
		return err
	}
	if m.Step != cfg.Step {
		return fmt.Errorf("model step %v s, the evaluation resamples to %v s", m.Step, cfg.Step)
	}
	steps := 0
	for _, t := range traces {
		steps += t.Len()
	}
	h := time.Duration(float64(m.Horizon)*m.Step) * time.Second
	fmt.Fprintf(stdout, "trace      %s (%d machines, %d steps of %v s)\n", *f.tracePath, len(traces), steps, m.Step)
	fmt.Fprintf(stdout, "model      %s: horizon %d steps (%v), %d levels, window %d, from %d samples\n", what, m.Horizon, h, len(m.Levels), m.Window, m.MinHistory)
	rep := forecast.Evaluate(m, traces, from, *f.window)
	fmt.Fprintf(stdout, "\nHeld-out time: the last %.0f%% of each machine, %d origins\n", 100*(1-*f.split), rep.Origins)
	writeForecastReport(stdout, rep)
	pass := verdict(stdout, rep)
	if *f.folds > 0 {
		cm, err := forecast.CrossMachines(traces, cfg, *f.folds, *f.window)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nHeld-out machines: %d folds by machine index, each model fitted on all the time of the other machines, %d origins\n", *f.folds, cm.Origins)
		writeForecastReport(stdout, cm)
		pass = verdict(stdout, cm) && pass
	}
	if *f.simulated {
		if err := forecastSimulated(stdout, m, *f.window); err != nil {
			return err
		}
	}
	if !pass {
		return errForecastFailed
	}
	return nil
}

// forecastFit fits the model on train and writes it (-o).
func forecastFit(stdout, stderr io.Writer, f *forecastFlags, train []forecast.Trace, cfg forecast.Config) error {
	m, err := forecast.Fit(train, cfg)
	if err != nil {
		return fmt.Errorf("fit %s: %w", *f.tracePath, err)
	}
	b, err := forecast.Encode(m)
	if err != nil {
		return err
	}
	// What was fitted and where it went: on stderr when the model goes
	// to stdout, which holds the model alone.
	samples := 0
	for _, t := range train {
		samples += t.Len()
	}
	report, dest := stdout, *f.out
	if *f.out == "-" {
		report, dest = stderr, "stdout"
		if _, err := stdout.Write(b); err != nil {
			return err
		}
	} else if err := writeFile(*f.out, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return err
	}
	fmt.Fprintf(report, "fitted the forecaster on %s: %d machines, the first %.0f%% of each one's time (%d samples of %v s)\n", *f.tracePath, len(train), 100**f.split, samples, m.Step)
	fmt.Fprintf(report, "model: horizon %d steps, window %d, min history %d, %d quantile levels; wrote %d bytes to %s\n", m.Horizon, m.Window, m.MinHistory, len(m.Levels), len(b), dest)
	return nil
}

// forecastModel is the model eval scores: the embedded one, a refit
// (--refit) or a file (--model), and its description.
func forecastModel(f *forecastFlags, train []forecast.Trace, cfg forecast.Config) (*forecast.Model, string, error) {
	var err error
	m, what := forecast.Default(), "embedded (fitted on the first 70% of each machine's time)"
	switch {
	case *f.refit && *f.model != "":
		return nil, "", errors.New("--refit and --model exclude each other")
	case *f.refit:
		if m, err = forecast.Fit(train, cfg); err != nil {
			return nil, "", fmt.Errorf("fit %s: %w", *f.tracePath, err)
		}
		what = fmt.Sprintf("refitted on the first %.0f%% of each machine's time", 100**f.split)
	case *f.model != "":
		b, err := inputfile.ReadText(*f.model, inputfile.Document)
		if err != nil {
			return nil, "", err
		}
		if m, err = forecast.Decode(b); err != nil {
			return nil, "", fmt.Errorf("%s: %w", *f.model, err)
		}
		what = *f.model
	}
	return m, what, nil
}

// forecastSimulated scores m, for information, on the simulator's
// builtin background load.
func forecastSimulated(stdout io.Writer, m *forecast.Model, window int) error {
	const nodes, steps = 16, 8 * 24 * 3600 / forecast.DefaultStep
	src, err := background.NewStochastic(background.Default(), nodes, 1)
	if err != nil {
		return err
	}
	sim := forecast.Evaluate(m, forecast.FromSource(src, nodes, steps, m.Step), nil, window)
	fmt.Fprintf(stdout, "\nFor information, the simulator's builtin background (%d nodes x 8 days, seed 1), %d origins\n", nodes, sim.Origins)
	writeForecastReport(stdout, sim)
	fmt.Fprintf(stdout, "learned mean pinball loss vs the window's:%s (no verdict: the acceptance is on the trace)\n", relative(sim))
	return nil
}

// errForecastFailed is returned when the learned forecaster does not beat
// the window, so that scripts see a non-zero exit.
var errForecastFailed = errors.New("the learned model does not beat the window (FAIL above)")

// readForecastTraces reads a v2018 machine-usage file and resamples it to
// step, as the simulator's replay does.
func readForecastTraces(path string, step float64) ([]forecast.Trace, error) {
	ms, err := datasets.ReadMachineUsage(path)
	if err != nil {
		return nil, err
	}
	series := make([]background.Series, len(ms))
	names := make([]string, len(ms))
	for i, m := range ms {
		series[i] = background.FromTraffic(m.Time, m.CPU, m.MemBW, m.NetIn, m.NetOut)
		names[i] = m.Machine
	}
	trs, err := forecast.FromSeries(series, names, step)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return trs, nil
}

// writeForecastReport prints rep's table: per resource and method, the
// mean pinball loss at P10, P50, P90, their mean, and the P10-P90
// coverage.
func writeForecastReport(w io.Writer, rep forecast.Report) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "resource\tmethod\tpinball P10\tP50\tP90\tmean\tP10-P90 coverage\t")
	for r := range forecast.NumResources {
		for k := range forecast.NumMethods {
			s := rep.Scores[k][r]
			name := k.String()
			if k == forecast.Window {
				name = fmt.Sprintf("window %d", rep.Window)
			}
			cov := fmt.Sprintf("%.1f%%", 100*s.Coverage())
			if k == forecast.WindowMean {
				cov = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%.4g\t%.4g\t%s\t\n", r, name, s.Pinball(0), s.Pinball(1), s.Pinball(2), s.MeanPinball(), cov)
		}
	}
	tw.Flush()
}

// verdict prints the PASS/FAIL line of rep against the acceptance (the
// learned mean pinball loss below the window's on every resource) and
// returns whether it passed.
func verdict(w io.Writer, rep forecast.Report) bool {
	word := "FAIL"
	if rep.Beats() {
		word = "PASS"
	}
	fmt.Fprintf(w, "%s: learned mean pinball loss vs the window's:%s\n", word, relative(rep))
	return rep.Beats()
}

// relative formats, per resource, the learned mean pinball loss over the
// window's minus 1.
func relative(rep forecast.Report) string {
	var s string
	for r := range forecast.NumResources {
		l, b := rep.Scores[forecast.Learned][r].MeanPinball(), rep.Scores[forecast.Window][r].MeanPinball()
		s += fmt.Sprintf(" %s %+.1f%%", r, 100*(l/b-1))
	}
	return s
}
