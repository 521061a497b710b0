package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/train"
)

// traceUsage is drover trace's usage: its subcommands.
const traceUsage = `usage: drover trace inspect|convert|synth [flags]

  inspect [flags] FILE|builtin           job count, time span, GPU histogram, durations
                                         (an LLM request trace: count, rate, token percentiles)
  convert [flags] -o OUT FILE|builtin    convert to Parquet (.parquet) or Drover's job CSV (.csv)
  synth [flags]                          generate the default synthetic workload (job CSV)

Run "drover trace SUBCOMMAND -h" for its flags.`

func runTrace(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, traceUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, traceUsage)
		return flag.ErrHelp
	case "inspect":
		return traceInspect(args[1:], stdout, stderr)
	case "convert":
		return traceConvert(args[1:], stdout, stderr)
	case "synth":
		return traceSynth(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "drover trace: unknown subcommand %q (want inspect, convert or synth)\n", args[0])
	return errUsage
}

func traceInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace inspect", stderr)
	format := fs.String("format", "auto", "workload format: auto|pollux|philly|helios|alibaba|jobs|parquet")
	skipBad := fs.Bool("skip-bad", false, "skip and count bad rows instead of failing")
	psShareFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover trace inspect [flags] FILE|builtin")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return unexpectedArgs(fs, fs.Args()[1:])
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	if err := checkFormat(fs, *format); err != nil {
		return err
	}
	w, err := datasets.Load(fs.Arg(0), datasets.Format(*format), datasets.Options{SkipBad: *skipBad, PS: psRule(fs)})
	if err != nil {
		if st, ok := inspectLLM(fs.Arg(0), *format, *skipBad); ok {
			return writeLLMStats(stdout, st)
		}
		return err
	}
	for _, warning := range implausible(w, maxWarnings) {
		fmt.Fprintf(stderr, "drover trace inspect: warning: %s\n", warning)
	}
	return datasets.Inspect(w).WriteText(stdout)
}

// Bounds beyond which drover trace inspect warns about a job: values the
// readers accept (they are within the simulator's bounds) but no real
// trace holds.
const (
	// plausibleGPUs: a job of more GPUs than any cluster built (the
	// largest, in 2025, about 200,000).
	plausibleGPUs = 1 << 18
	// plausibleSeconds: a job longer than a year (the longest in the
	// shipped traces runs 145 days).
	plausibleSeconds = 365 * 86400
	// maxWarnings: the jobs warned about by name; the rest are counted.
	maxWarnings = 10
)

// implausible returns a warning for each job of w whose GPU count or
// duration no real cluster holds, naming the job, the first max of them
// and then their count.
func implausible(w *datasets.Workload, max int) []string {
	var out []string
	n := 0
	for _, j := range w.Jobs {
		var what []string
		if j.GPUs > plausibleGPUs {
			what = append(what, fmt.Sprintf("%d GPUs, more than any real cluster (%d)", j.GPUs, plausibleGPUs))
		}
		if j.Duration > plausibleSeconds {
			what = append(what, fmt.Sprintf("a duration of %.4g s (%.0f days), more than a year", j.Duration, j.Duration/86400))
		}
		if len(what) == 0 {
			continue
		}
		if n++; n <= max {
			out = append(out, fmt.Sprintf("job %q: %s", j.Name, strings.Join(what, " and ")))
		}
	}
	if n > max {
		out = append(out, fmt.Sprintf("%d more jobs with implausible values", n-max))
	}
	return out
}

func traceConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace convert", stderr)
	format := fs.String("format", "auto", "input format: auto|pollux|philly|helios|alibaba|jobs|parquet")
	out := fs.String("o", "", "output file: .parquet for Parquet, .csv for Drover's job CSV (required)")
	skipBad := fs.Bool("skip-bad", false, "skip and count bad rows instead of failing")
	late := fs.Float64("late", 0, "write only the held-out part drover train judges as \"late\" with train.split `SHARE`:\nthe jobs after that share (at most 2000), submit times rebased to 0")
	rho := fs.Float64("offered-load", 0, "with -late: rescale the submit times to this offered load on -gpus GPUs (train.offered_load)")
	gpus := fs.Int("gpus", 0, "with -offered-load: the cluster's GPUs (drover train's nodes x gpus_per_node)")
	psShareFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover trace convert [flags] -o OUT.parquet|OUT.csv FILE|builtin")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return unexpectedArgs(fs, fs.Args()[1:])
	}
	if fs.NArg() != 1 || *out == "" {
		fs.Usage()
		return errUsage
	}
	if err := checkFormat(fs, *format); err != nil {
		return err
	}
	switch {
	case *rho != 0 && *late == 0:
		return fmt.Errorf("-offered-load: only with -late")
	case *rho > 0 && *gpus <= 0:
		return fmt.Errorf("-offered-load needs -gpus, the cluster's GPU count")
	}
	w, err := datasets.Load(fs.Arg(0), datasets.Format(*format), datasets.Options{SkipBad: *skipBad, PS: psRule(fs)})
	if err != nil {
		if st, ok := inspectLLM(fs.Arg(0), *format, *skipBad); ok {
			return writeLLMStats(stdout, st)
		}
		return err
	}
	if *late != 0 {
		if _, w, err = train.LateWorkload(w, *late, *rho, *gpus); err != nil {
			return fmt.Errorf("-late: %s: %w", fs.Arg(0), err)
		}
	}
	switch strings.ToLower(filepath.Ext(*out)) {
	case ".parquet":
		err = writeFile(*out, func(f io.Writer) error { return datasets.WriteParquet(f, w) })
	case ".csv":
		err = writeFile(*out, func(f io.Writer) error { _, err := f.Write(datasets.Encode(w, nil)); return err })
	default:
		return fmt.Errorf("output %s: want a .parquet or .csv file", *out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d jobs to %s", len(w.Jobs), *out)
	if w.Skipped > 0 {
		fmt.Fprintf(stdout, " (%d rows skipped)", w.Skipped)
	}
	fmt.Fprintln(stdout)
	return nil
}

func traceSynth(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace synth", stderr)
	seed := fs.Uint64("seed", datasets.DefaultSeed, "random seed")
	out := fs.String("o", "-", "output CSV file (- for stdout)")
	psShare := fs.Float64("ps-share", datasets.DefaultPSShare, "share of the multi-GPU jobs on parameter servers (as many as their workers), in [0, 1] (the default: PAI's, see datasets.DefaultPSShare)")
	jobs := fs.Int("jobs", 0, "generate this many jobs from the Philly fit (datasets.ScaleParams) instead of the default workload, streamed")
	nodes := fs.Int("nodes", 0, "with -jobs: scale the arrival rate to the offered -load on this many nodes of -gpus-per-node GPUs (0: Philly's own rate)")
	gpn := fs.Int("gpus-per-node", 8, "with -nodes: GPUs per node")
	load := fs.Float64("load", datasets.DefaultScaleLoad, "with -nodes: the share of the GPUs the jobs keep busy by the end of their arrivals (their GPU-seconds within the arrival span over span x GPUs; datasets.ScaleSpec)")
	quiet := fs.Bool("quiet", false, "with -jobs: no progress output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: drover trace synth [flags]\n\nGenerates the default synthetic workload (fitted to Philly) in Drover's job CSV format.\nWith the default seed it reproduces the embedded builtin workload byte for byte.\nWith -jobs N (and -nodes M) it streams N jobs of the Philly fit sized to keep M nodes busy:\n  drover trace synth -jobs 1000000 -nodes 12500 -o /tmp/synth-1m.csv")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpectedArgs(fs, fs.Args())
	}
	if *jobs != 0 || *nodes != 0 {
		return traceSynthScaled(fs, *jobs, *nodes, *gpn, *load, *psShare, *seed, *out, *quiet, stdout, stderr)
	}
	w := datasets.GenerateDefaultPS(*seed, *psShare)
	b := datasets.Encode(w, nil)
	if *out == "-" {
		_, err := stdout.Write(b)
		return err
	}
	return writeFile(*out, func(f io.Writer) error { _, err := f.Write(b); return err })
}

// traceSynthScaled is drover trace synth -jobs: a scaled workload
// (datasets.WriteScaled), streamed to the output with progress on stderr
// and what it generated (offered load, span, rate) after it.
func traceSynthScaled(fs *flag.FlagSet, jobs, nodes, gpn int, load, psShare float64, seed uint64, out string, quiet bool, stdout, stderr io.Writer) error {
	switch {
	case jobs < 1:
		return fmt.Errorf("-jobs %d: want at least 1 (with -nodes)", jobs)
	case nodes == 0 && isSet(fs, "load"):
		return fmt.Errorf("-load needs -nodes, the cluster it is the load of")
	}
	s := datasets.ScaleSpec{Jobs: jobs, GPUs: nodes * gpn, Load: load, Seed: seed}
	s.Params = datasets.ScaleParams(s.GPUs)
	s.Params.PSShare = psShare
	var bar *progress.Bar
	var prog func(done, total int)
	if !quiet {
		bar = progress.New(stderr, "synth", jobs)
		prog = func(done, _ int) { bar.Set(done) }
	}
	var st datasets.ScaleStats
	write := func(f io.Writer) (err error) { st, err = datasets.WriteScaled(f, s, prog); return err }
	var err error
	if out == "-" {
		err = write(stdout)
	} else {
		err = writeFile(out, write)
	}
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(stderr, "wrote %d jobs (%.4g GPU-hours over %.4g days", st.Jobs, st.GPUSeconds/3600, st.Span/86400)
		if s.GPUs > 0 {
			fmt.Fprintf(stderr, ": load %.3f on %d GPUs (offered load %.3f), Philly's arrival rate x %.4g", st.WindowLoad, s.GPUs, st.OfferedLoad, st.RateScale)
		}
		fmt.Fprintln(stderr, ")")
	}
	return nil
}
