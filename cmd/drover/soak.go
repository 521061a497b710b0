package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/drover-sched/drover/internal/atomicfile"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/serve/soak"
)

// soakNumRules are the rules of drover bench soak's numeric flags
// (numflags.go's cmdNumRules), in seconds for the durations; the ones
// numRules has with the same meaning (warmup, growth's share) are
// stated again so the command's rules read in one place.
var soakNumRules = map[string]numRule{
	"duration":          above(0, maxDuration, "a positive length of run, at most a day"),
	"warmup":            within(0, maxDuration, "0 or more, at most a day"),
	"window":            above(0, maxDuration, "a positive window, at most a day"),
	"sample-every":      above(0, maxDuration, "a positive interval, at most a day"),
	"settle":            within(0, maxDuration, "0 or more, at most a day"),
	"place-rate":        above(0, 1e6, "a positive rate, at most 1e6 per second"),
	"place-timeout":     above(0, maxDuration, "a positive deadline, at most a day"),
	"agent-rate":        above(0, 1e4, "a positive rate, at most 1e4 sessions per second"),
	"agent-life":        above(0, maxDuration, "a positive time, at most a day"),
	"nodes":             within(1, 1e5, "1 to 100000 node names"),
	"jobs":              within(0, 1e8, "0 to 1e8 jobs"),
	"report-workers":    within(1, 1024, "1 to 1024 workers"),
	"report-iterations": within(1, 1<<16, "1 to 65536 iteration times"),
	"slow-conns":        within(0, 1<<16, "0 (none) to 65536 connections per listener"),
	"slow-peers":        within(0, 250, "0 (the system's choice) to 250 addresses"),
	"slow-every":        above(0, maxDuration, "a positive interval, at most a day"),
	"growth":            within(0, 100, "a share of 0 or more (0.1: 10%)"),
	"p99":               above(0, maxDuration, "a positive latency, at most a day"),
	"port":              within(1, 65532, "1 to 65532 (four consecutive ports)"),
}

// soakFlags are drover bench soak's flags.
type soakFlags struct {
	c          soak.Config
	port       *int
	serverCPUs *string
	binary     *string
	serveArgs  *string
	out        *string
}

// defineSoakFlags defines drover bench soak's flags on fs, defaulting to
// issue 32's soak (soak.Defaults).
func defineSoakFlags(fs *flag.FlagSet) *soakFlags {
	f := &soakFlags{c: soak.Defaults()}
	c := &f.c
	fs.DurationVar(&c.Duration, "duration", c.Duration, "the measured run under the full load (30s-60s checks the harness)")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "the same load before the baseline, which is taken once the clients have left and the goroutine count holds still")
	fs.DurationVar(&c.Window, "window", c.Window, "Place latency window, and the sampling and probing interval under load")
	fs.DurationVar(&c.SampleEvery, "sample-every", c.SampleEvery, "read the server's /metrics this often under load (every second before the baseline, every two after the run)")
	fs.DurationVar(&c.Settle, "settle", c.Settle, "after the run's clients leave, wait at most this long for goroutines and RSS to come back within -growth of the baseline")
	fs.Float64Var(&c.PlaceRate, "place-rate", c.PlaceRate, "the well-behaved client's Place calls per second (open loop: latency from each call's intended send time)")
	fs.StringVar(&c.PlaceVia, "place-via", c.PlaceVia, "the well-behaved client's listener: fast (-place-addr) or grpc (-addr)")
	fs.DurationVar(&c.PlaceTimeout, "place-timeout", c.PlaceTimeout, "each Place call's deadline; a call past it fails its window")
	fs.Float64Var(&c.AgentRate, "agent-rate", c.AgentRate, "fake agent sessions started per second, each on its own connection (hello, 3 samples, an iteration report, then it leaves)")
	fs.DurationVar(&c.AgentLife, "agent-life", c.AgentLife, "how long each agent session stays connected")
	fs.IntVar(&c.Nodes, "nodes", c.Nodes, "node names (node-0...) of the Place request, taken in turn by the agents")
	fs.IntVar(&c.Jobs, "jobs", c.Jobs, "distinct jobs reported over the run (Report: start and iteration times, then the end for 3 jobs in 4)")
	fs.IntVar(&c.ReportWorkers, "report-workers", c.ReportWorkers, "workers per reported job")
	fs.IntVar(&c.ReportIterations, "report-iterations", c.ReportIterations, "iteration times per worker in a job's Report")
	fs.IntVar(&c.SlowConns, "slow-conns", c.SlowConns, "slow connections held on each listener (gRPC: idle and preface-only; fast: preface-only; extender: slow bodies; metrics: slow headers); 0: no slowloris")
	fs.IntVar(&c.SlowPeers, "slow-peers", c.SlowPeers, "source addresses the slow connections come from (127.0.0.2, 127.0.0.3, ...), so the server's per-peer limits count them apart: 1 is one hostile client, more a distributed one; every other client comes from 127.0.0.1; 0: the system's choice")
	fs.DurationVar(&c.SlowEvery, "slow-every", c.SlowEvery, "a slow connection sends its next byte (or header line) after this long")
	fs.Float64Var(&c.Limits.Growth, "growth", c.Limits.Growth, "goroutines and RSS must end at most this share above the baseline")
	fs.DurationVar(&c.Limits.P99, "p99", c.Limits.P99, "Place p99 must stay below this in every window")
	f.port = fs.Int("port", 50181, "first of four consecutive loopback ports: gRPC, fast, extender, metrics")
	f.serverCPUs = fs.String("server-cpus", "0", "taskset CPU list for the server, run with GOMAXPROCS set to its size (empty: unpinned); run this command itself on other CPUs (scripts/soak.sh: taskset -c 1)")
	f.binary = fs.String("drover", "", "the drover binary to serve with (default: this one)")
	f.serveArgs = fs.String("serve-args", "", "further drover serve flags, space-separated (e.g. \"-state-dir /tmp/soak-state\")")
	f.out = fs.String("out", "", "directory for soak-samples.csv, soak-place.csv, soak.png and serve.log (default: a new temporary one)")
	return f
}

// runBenchSoak is `drover bench soak`: issue 32's soak (serve/soak)
// against a drover serve it starts pinned, with a verdict per
// acceptance point; it fails when a verdict does.
func runBenchSoak(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench soak", stderr)
	f := defineSoakFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	f.c.Addrs, f.c.Progress = soak.PortAddrs(*f.port), stdout
	if err := f.c.Validate(); err != nil {
		return err
	}
	srv, dir, err := startSoakServer(f, stdout)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The hostile clients run niced, so that on the client's core the
	// well-behaved client wins its wake-ups from them.
	f.c.HostileCommand = []string{self, "bench", "soak-hostile"}
	if nice, err := exec.LookPath("nice"); err == nil {
		f.c.HostileCommand = append([]string{nice, "-n", "10"}, f.c.HostileCommand...)
	}
	f.c.Alive = func() error {
		if srv.Exited() {
			return fmt.Errorf("the server exited (see %s)", filepath.Join(dir, "serve.log"))
		}
		return nil
	}
	res, runErr := soak.Run(ctx, f.c)
	if err := srv.Stop(30 * time.Second); err != nil {
		fmt.Fprintf(stdout, "server stop: %v (see %s)\n", err, filepath.Join(dir, "serve.log"))
	}
	if err := writeSoakOutputs(dir, res, f.c.Limits.P99); err != nil {
		return err
	}
	failed := printSoakChecks(stdout, f.c, res)
	fmt.Fprintf(stdout, "samples in %s, Place windows in %s, figure %s, server log %s\n", filepath.Join(dir, "soak-samples.csv"),
		filepath.Join(dir, "soak-place.csv"), filepath.Join(dir, "soak.png"), filepath.Join(dir, "serve.log"))
	switch {
	case runErr != nil:
		return runErr
	case failed > 0:
		return fmt.Errorf("bench soak: %d of %d checks failed", failed, len(res.Checks))
	}
	return nil
}

// benchSubcommand returns the drover bench subcommand args names other
// than place (plot, soak, soak-hostile), or nil.
func benchSubcommand(args []string) func(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return nil
	}
	return map[string]func([]string, io.Writer, io.Writer) error{
		"plot": runBenchPlot, "soak": runBenchSoak, "soak-hostile": runBenchSoakHostile,
	}[args[0]]
}

// runBenchSoakHostile is `drover bench soak-hostile`, which drover
// bench soak starts: the soak's hostile clients (agents, Reports,
// slowloris) for one phase, in a process of their own, so that they do
// not delay the well-behaved client's wake-ups (soak.Config.HostileCommand).
// It reads its soak.HostileSpec as JSON on standard input and writes
// what the clients delivered as JSON on standard output.
func runBenchSoakHostile(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench soak-hostile", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return soak.ServeHostile(ctx, os.Stdin, stdout)
}

// startSoakServer makes the output directory and starts the server
// there, printing the run's circumstances.
func startSoakServer(f *soakFlags, stdout io.Writer) (*soak.Server, string, error) {
	dir := *f.out
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "drover-soak-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, "", err
	}
	bin := *f.binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, "", err
		}
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, "", err
	}
	srv, err := soak.StartServer(soak.ServerConfig{Binary: bin, CPUs: *f.serverCPUs, Addrs: f.c.Addrs,
		Args: strings.Fields(*f.serveArgs), Output: logf})
	if err != nil {
		logf.Close()
		return nil, "", err
	}
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil && len(strings.Fields(string(b))) >= 3 {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Fprintf(stdout, "# %s  server %s (pid %d) on CPUs %q; this client on CPUs %s; loadavg %s\n",
		time.Now().UTC().Format(time.RFC3339), bin, srv.PID(), *f.serverCPUs, soak.AllowedCPUs(), load)
	fmt.Fprintf(stdout, "# %v run after a %v warm-up; Place %g/s via %s; agents %g/s; %d jobs; %d slow connections per listener from %d addresses\n",
		f.c.Duration, f.c.Warmup, f.c.PlaceRate, f.c.PlaceVia, f.c.AgentRate, f.c.Jobs, f.c.SlowConns, f.c.SlowPeers)
	return srv, dir, nil
}

// printSoakChecks prints the verdicts and returns how many failed.
func printSoakChecks(w io.Writer, c soak.Config, res soak.Result) int {
	o := res.Overall
	fmt.Fprintf(w, "Place overall (%d ok, %d failed): p50 %.3f ms, p99 %.3f ms, max %.3f ms; the client's wake-up lag p99 %.3f ms, max %.3f ms\n",
		o.OK, o.Errors, float64(o.P50)/1e6, float64(o.P99)/1e6, float64(o.Max)/1e6, float64(res.Load.PlaceLagP99)/1e6, float64(res.Load.PlaceLagMax)/1e6)
	failed := 0
	for _, ch := range res.Checks {
		verdict := "PASS"
		if !ch.Pass {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "%s  %-10s %s\n", verdict, ch.Name, ch.Detail)
	}
	return failed
}

// writeSoakOutputs writes the samples' and the windows' CSV and the
// figure into dir.
func writeSoakOutputs(dir string, res soak.Result, bound time.Duration) error {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"soak-samples.csv", func(w io.Writer) error { return soak.WriteSamplesCSV(w, res.Samples) }},
		{"soak-place.csv", func(w io.Writer) error { return soak.WritePlaceCSV(w, res) }},
	}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	if len(res.Samples) == 0 || len(res.Windows) == 0 {
		return nil
	}
	o := plot.Options{Title: "drover bench soak: the server's goroutines and RSS, and Place p99 per window", XLabel: "time since the soak started (s)"}
	return plot.WriteFile(filepath.Join(dir, "soak.png"), func(w io.Writer) error { return plot.Stack(w, o, soakPanels(res, bound)) })
}

// soakPanels are the figure's three panels: goroutines, RSS and heap,
// and the Place windows' p99 and max against the bound.
func soakPanels(res soak.Result, bound time.Duration) []plot.Panel {
	var t, g, rss, heap []float64
	for _, s := range res.Samples {
		t, g = append(t, s.At.Seconds()), append(g, s.Goroutines)
		rss, heap = append(rss, s.RSS/(1<<20)), append(heap, s.Heap/(1<<20))
	}
	var wt, p99, mx, lim []float64
	for _, w := range res.Windows {
		wt = append(wt, res.WindowEnd(w).Seconds())
		p99, mx = append(p99, float64(w.P99)/1e6), append(mx, float64(w.Max)/1e6)
		lim = append(lim, float64(bound)/1e6)
	}
	return []plot.Panel{
		{YLabel: "goroutines", Series: []plot.Series{{Name: "goroutines", X: t, Y: g}}},
		{YLabel: "MiB", Series: []plot.Series{{Name: "RSS", X: t, Y: rss}, {Name: "heap in use", X: t, Y: heap}}},
		{YLabel: "Place latency (ms)", LogY: true, Series: []plot.Series{{Name: "p99 per window", X: wt, Y: p99}, {Name: "max per window", X: wt, Y: mx},
			{Name: fmt.Sprintf("p99 bound (%v)", bound), X: wt, Y: lim}}},
	}
}
