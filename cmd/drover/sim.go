package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/atomicfile"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/serve/logreplay"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/remote"
)

// simFlags are drover sim's flags.
type simFlags struct {
	workload    *string
	format      *string
	model       *string
	policy      *string
	nodes       *int
	clusterSpec *string
	gpn         *int
	seed        *uint64
	interval    *float64
	restart     *float64
	profilesDir *string
	skipBad     *bool
	jobsOut     *string
	logOut      *string
	stragglers  *bool
	bg          *string
	load        *float64
	noJitter    *bool
	threshold   *float64
	mitigation  *string
	stretOff    *string
	regimeFlag  *string
	syncFlag    *string
	lazy        *bool
	asJSON      *bool
	quiet       *bool
	remoteAddr  *string
	tokenFile   *string
	tlsCA       *string
	recordDir   *string
	convergence *string
}

// defineSimFlags defines drover sim's flags on fs.
func defineSimFlags(fs *flag.FlagSet, reg policies.Registry) *simFlags {
	f := new(simFlags)
	f.workload = fs.String("workload", "builtin", "workload file, or builtin for the embedded default")
	f.format = fs.String("format", "auto", "workload format: auto|pollux|philly|helios|alibaba|jobs|parquet")
	f.model = fs.String("model", "auto", "throughput model: pollux|drover|auto (pollux for workloads without durations, like the Pollux workloads; drover otherwise)")
	f.policy = fs.String("policy", "tiresias", fmt.Sprintf("scheduling policy: %s", reg.Syntax()))
	f.nodes = fs.Int("nodes", 16, "number of nodes (with --cluster pai or a node list: keep the first N GPU nodes; default all)")
	f.clusterSpec = fs.String("cluster", "homogeneous", "cluster: homogeneous (--nodes x --gpus-per-node), pai (the Alibaba PAI v2023 GPU node list in ../shared/traces: heterogeneous GPU types and speeds), or the path of a PAI-format node list")
	f.gpn = fs.Int("gpus-per-node", 4, "GPUs per node")
	f.seed = fs.Uint64("seed", 1, "random seed (policies and generators that use randomness)")
	f.interval = fs.Float64("interval", -1, "scheduling interval in seconds, at least 1 (every tick is a decision point); 0 = decide at every arrival and completion; -1 = the model's default (pollux 60, drover 0)")
	f.restart = fs.Float64("restart-delay", env.DefaultRestartDelay, "seconds every (re)start costs")
	f.profilesDir = fs.String("profiles", "", "directory of measured model profiles (pollux_apps); empty = found near the workload, else the embedded fitted ones; builtin = embedded")
	f.skipBad = fs.Bool("skip-bad", false, "skip and count malformed or invalid workload rows instead of failing")
	psShareFlag(fs)
	f.jobsOut = fs.String("jobs-out", "", "write per-job results to this CSV file (times in seconds, TTA, per-worker iteration and straggler counts, the validation metric each job finished with, in its model's own unit, what the mitigation did, and the job's GPUs)")
	f.logOut = fs.String("log", "", "write the event log to this file")
	f.stragglers = fs.Bool("stragglers", true, "with the drover model: model each worker (background load, jitter, stragglers); false = the job-level model")
	f.bg = fs.String("background", "builtin", "per-worker model: node background load: builtin (fitted stochastic process), none, or a machine_usage.csv(.gz) to replay")
	f.load = fs.Float64("load", 1, "per-worker model: multiply the background load (> 0)")
	f.noJitter = fs.Bool("no-jitter", false, "per-worker model: turn the calibrated per-worker jitter off")
	f.threshold = fs.Float64("straggler-threshold", 0.2, "a worker straggles when slower than the job's median by more than this fraction")
	f.mitigation = fs.String("mitigation", "none", "per-worker model: runtime straggler mitigation: none, stret (relay, gradient withholding, one-time batch tuning), replace (restart a persistent straggler's worker) or lb-bsp (BSP jobs' local batches balanced to worker speed at every refresh)")
	f.stretOff = fs.String("stret-off", "", "with --mitigation stret: comma-separated stages to turn off, for ablations: relay, withhold, tune")
	f.regimeFlag = fs.String("regime", "auto", "per-worker model: straggler regime: dedicated (whole GPUs: jitter and network noise calibrated to the papers' ~1.5x straggler inflation; job-level times reproduced on average), shared (GPU-sharing jobs: jitter fitted to the PAI v2020 mini-batch times), or auto (shared for the Alibaba PAI pod list or a PAI node list, dedicated otherwise)")
	f.syncFlag = fs.String("sync", "bsp", "sync strategy for policies that do not choose one: bsp, asp, ssp(S), local(H) (a composed <policy>+<sync> keeps its own)")
	f.convergence = convergenceFlag(fs, false)
	f.lazy = fs.Bool("lazy-advance", true, "advance a running job only when something needs its progress (its finish, a release, a refresh, or a policy that reads progress): large runs' events then cost the same whatever the number of running jobs; false = every running job at every event (eager: the reference lazy advance agrees with up to floating-point rounding; drover eval and train replay eagerly); with --remote always eager")
	f.asJSON = fs.Bool("json", false, "print the summary as JSON")
	f.quiet = fs.Bool("quiet", false, "no progress output")
	f.remoteAddr = fs.String("remote", "", "ask the drover server at this address for every placement (serve/remote) instead of running --policy: a recorded run when the server logs (drover serve -log-dir DIR)")
	f.tokenFile = fs.String("token-file", "", "with --remote: file holding the server's bearer token")
	f.tlsCA = fs.String("tls-ca", "", "with --remote: CA (PEM) of the server's certificate; turns TLS on")
	f.recordDir = fs.String("record", "", "with --remote: write the simulated nodes' telemetry (datasets/telemlog, each node's total load at every refresh of the per-worker model) and the run manifest ("+logreplay.ManifestFile+") to this directory, normally the server's -log-dir, for drover eval --log")
	return f
}

func runSim(args []string, stdout, stderr io.Writer) error {
	deferGC(simGCFloor)
	fs := newFlags("sim", stderr)
	reg := builtin.Registry()
	f := defineSimFlags(fs, reg)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: drover sim [flags] [FILE]\n\nReplays a workload in the cluster simulator. FILE is the same as --workload FILE\n(flags may follow it); without either, the embedded built-in workload.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := simOperand(fs, f.workload); err != nil {
		return err
	}
	if err := checkModelFlags(fs, *f.nodes, *f.clusterSpec, *f.model, *f.mitigation, *f.regimeFlag, *f.format, *f.syncFlag); err != nil {
		return err
	}
	if *f.recordDir != "" && *f.remoteAddr == "" {
		return fmt.Errorf("--record needs --remote")
	}
	if *f.remoteAddr != "" {
		*f.lazy = false // runRemote's loop advances every job at every event
	}
	var ph phases
	mark := time.Now()
	w, cluster, clusterDesc, err := loadSetup(fs, *f.workload, *f.format, *f.skipBad, f.model, *f.clusterSpec, *f.nodes, *f.gpn)
	if err != nil {
		return err
	}
	ph.Workload, mark = since(mark)
	profiles, src, err := trace.ProfilesFor(*f.profilesDir, *f.workload, trace.Models(w))
	if err != nil {
		return err
	}
	ph.Profiles, mark = since(mark)
	p, rem, closeConn, err := simPolicy(f, reg)
	if err != nil {
		return err
	}
	defer closeConn()
	opts := trace.Options{
		Workload: w, Model: *f.model, Profiles: profiles, Policy: p, Cluster: &cluster,
		Nodes: *f.nodes, GPUsPerNode: *f.gpn, Interval: *f.interval, RestartDelay: *f.restart,
		Log: *f.logOut != "", LazyAdvance: *f.lazy,
	}
	if err := simStragglers(f, w, &cluster, &opts); err != nil {
		return err
	}
	var bar *progress.Bar
	if !*f.quiet {
		bar = progress.New(stderr, "sim", len(w.Jobs))
		opts.Progress = func(done, _ int) { bar.Set(done) }
	}
	ph.Build, mark = since(mark)
	var res *trace.Result
	if rem != nil {
		res, err = runRemote(rem, opts, *f.recordDir, simManifest(fs, f, len(w.Jobs), clusterDesc, opts.Stragglers != nil))
	} else {
		res, err = trace.Run(opts)
	}
	wall := time.Since(mark)
	ph.Simulate, mark = wall.Seconds(), mark.Add(wall)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	if err := writeSimFiles(f, res); err != nil {
		return err
	}
	ph.Write, _ = since(mark)
	ph.Load = ph.Workload + ph.Profiles
	if *f.asJSON {
		return printSimJSON(stdout, f, w, res, src, clusterDesc, wall, ph, opts.Stragglers != nil)
	}
	printSim(stdout, f, w, res, src, clusterDesc, wall, ph, opts.Stragglers != nil)
	return nil
}

// simManifest is the manifest of a recorded run (--remote --record):
// drover sim's flags as the run resolved them.
func simManifest(fs *flag.FlagSet, f *simFlags, jobs int, clusterDesc string, perWorker bool) logreplay.Manifest {
	return logreplay.Manifest{Version: 1, Workload: *f.workload, Format: *f.format, Jobs: jobs,
		Model: *f.model, Profiles: *f.profilesDir, Cluster: *f.clusterSpec, NodeCap: nodeCap(fs, *f.clusterSpec, *f.nodes), GPUsPerNode: *f.gpn,
		ClusterDesc: clusterDesc, Interval: *f.interval, RestartDelay: *f.restart, Seed: *f.seed, Stragglers: perWorker,
		Background: *f.bg, Load: *f.load, NoJitter: *f.noJitter, Threshold: *f.threshold, Mitigation: *f.mitigation, Regime: *f.regimeFlag,
		Epoch: remote.DefaultEpoch}
}

// writeSimFiles writes the per-job results (--jobs-out) and the event log
// (--log).
func writeSimFiles(f *simFlags, res *trace.Result) error {
	if *f.jobsOut != "" {
		if err := writeJobs(*f.jobsOut, res.Jobs); err != nil {
			return err
		}
	}
	if *f.logOut != "" {
		if err := writeFile(*f.logOut, func(w io.Writer) error { return env.WriteLog(w, res.Events, res.Sim.Jobs()) }); err != nil {
			return err
		}
	}
	return nil
}

// simPolicy is drover sim's policy: the remote server's (--remote, with
// the connection's close) or --policy under --sync.
func simPolicy(f *simFlags, reg policies.Registry) (policies.Policy, *remote.Remote, func(), error) {
	if *f.remoteAddr != "" {
		conn, err := dialServer(*f.remoteAddr, *f.tokenFile, *f.tlsCA)
		if err != nil {
			return nil, nil, nil, err
		}
		rem, err := remote.New(remote.Config{Client: pb.NewSchedulerClient(conn)})
		if err != nil {
			conn.Close()
			return nil, nil, nil, err
		}
		*f.policy = "remote " + *f.remoteAddr
		return rem, rem, func() { conn.Close() }, nil
	}
	p, err := reg.New(*f.policy, policies.Config{Seed: *f.seed})
	if err != nil {
		return nil, nil, nil, err
	}
	syncStrategy, err := env.ParseSync(*f.syncFlag)
	if err != nil {
		return nil, nil, nil, err
	}
	if syncStrategy != (env.Sync{}) && !strings.Contains(*f.policy, "+") { // a composed name keeps its sync
		p = policies.WithSync(p, syncStrategy)
	}
	return p, nil, func() {}, nil
}

// simStragglers sets the per-worker straggler model of opts (the drover
// model with --stragglers), resolving --regime.
func simStragglers(f *simFlags, w *datasets.Workload, cluster *env.Cluster, opts *trace.Options) error {
	band, err := converge.ParseBand(*f.convergence) // checked before the workload was read
	if err != nil {
		return err
	}
	if *f.model != trace.ModelDrover || !*f.stragglers {
		if band != converge.BandFit {
			return fmt.Errorf("--convergence %s: needs the per-worker model (--model drover with --stragglers)", band)
		}
		return nil
	}
	regime, err := resolveRegime(*f.regimeFlag, w, cluster)
	if err != nil {
		return err
	}
	*f.regimeFlag = regime
	opts.Stragglers = &trace.Stragglers{Background: *f.bg, Load: *f.load, NoJitter: *f.noJitter, Seed: *f.seed, Threshold: *f.threshold, Mitigation: *f.mitigation, Regime: regime}
	off, err := env.ParseSTRETStages(*f.stretOff)
	if err != nil {
		return err
	}
	var conv *env.Convergence
	if band != converge.BandFit {
		conv = &env.Convergence{Band: band}
	}
	if off != 0 || conv != nil {
		opts.Stragglers.Tune = func(w *env.Workers) {
			w.STRETOff = off
			if conv != nil {
				w.Convergence = conv
			}
		}
	}
	return nil
}

// printSimJSON prints drover sim's summary as JSON (--json).
func printSimJSON(stdout io.Writer, f *simFlags, w *datasets.Workload, res *trace.Result, src, clusterDesc string, wall time.Duration, ph phases, perWorker bool) error {
	s := res.Summary
	out := struct {
		Workload   string  `json:"workload"`
		Model      string  `json:"model"`
		Policy     string  `json:"policy"`
		Profiles   string  `json:"profiles"`
		Cluster    string  `json:"cluster"`
		Seed       uint64  `json:"seed"`
		Skipped    int     `json:"skipped_rows"`
		Jobs       int     `json:"jobs"`
		Finished   int     `json:"finished"`
		AvgJCT     float64 `json:"avg_jct_s"`
		P50JCT     float64 `json:"p50_jct_s"`
		P99JCT     float64 `json:"p99_jct_s"`
		AvgQueue   float64 `json:"avg_queue_s"`
		Makespan   float64 `json:"makespan_s"`
		GPUUtil    float64 `json:"gpu_util"`
		GPUHours   float64 `json:"gpu_hours"`
		Restarts   int     `json:"restarts"`
		AvgTTA     float64 `json:"avg_tta_s"`
		Stragglers float64 `json:"straggler_worker_iterations"`
		StragFrac  float64 `json:"iterations_with_straggler"`
		Events     int     `json:"events"`
		WallSecond float64 `json:"wall_s"`
		// Where the command's wall time went, in seconds.
		Phases phases `json:"phases_s"`

		// With a mitigation: what it did.
		Mitigation *mitigationJSON `json:"mitigation,omitempty"`
		// Whether running jobs were advanced lazily (the default;
		// false with --lazy-advance=false or --remote).
		LazyAdvance bool `json:"lazy_advance"`
	}{w.Name, *f.model, *f.policy, src, clusterDesc, *f.seed, w.Skipped, s.Jobs, s.Finished, s.AvgJCT, s.P50JCT, s.P99JCT,
		s.AvgQueue, s.Makespan, s.GPUUtil, s.GPUHours, s.Restarts, s.AvgTTA, s.Stragglers, s.StragglerFrac, res.Sim.EventCount(), wall.Seconds(), ph, nil, *f.lazy}
	if perWorker && *f.mitigation != env.MitigationNone {
		out.Mitigation = newMitigationJSON(*f.mitigation, s.Mitigation)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// printSim prints drover sim's summary.
func printSim(stdout io.Writer, f *simFlags, w *datasets.Workload, res *trace.Result, src, clusterDesc string, wall time.Duration, ph phases, perWorker bool) {
	s := res.Summary
	fmt.Fprintf(stdout, "workload   %s (%d jobs", w.Name, len(w.Jobs))
	if w.Skipped > 0 {
		fmt.Fprintf(stdout, ", %d rows skipped:%s", w.Skipped, reasons(w.SkipReasons))
	}
	modelName := *f.model
	if perWorker {
		modelName += fmt.Sprintf(" per-worker (regime %s, background %s x%g, jitter %v, mitigation %s, convergence %s)", *f.regimeFlag, *f.bg, *f.load, !*f.noJitter, *f.mitigation, *f.convergence)
	}
	fmt.Fprintf(stdout, ")\ncluster    %s\nmodel      %s\nprofiles   %s\npolicy     %s (seed %d)\n", clusterDesc, modelName, profilesHeader(*f.profilesDir, src), *f.policy, *f.seed)
	fmt.Fprintf(stdout, "finished   %d/%d jobs\n", s.Finished, s.Jobs)
	fmt.Fprintf(stdout, "avg JCT    %s (%.2f s)\n", hms(s.AvgJCT), s.AvgJCT)
	fmt.Fprintf(stdout, "p50 JCT    %s\np99 JCT    %s\n", hms(s.P50JCT), hms(s.P99JCT))
	fmt.Fprintf(stdout, "avg TTA    %s (%.2f s)\n", hms(s.AvgTTA), s.AvgTTA)
	if perWorker {
		fmt.Fprintf(stdout, "stragglers %.4g worker-iterations; %.2f%% of iterations had one\n", s.Stragglers, 100*s.StragglerFrac)
		if s.StragglerInflation > 0 {
			fmt.Fprintf(stdout, "inflation  x%.3f training time over straggler-free (median of multi-node jobs); %.0f%% of the delay from communication\n", s.StragglerInflation, 100*s.CommShare)
		}
		printMitigation(stdout, *f.mitigation, s.Mitigation)
	}
	fmt.Fprintf(stdout, "avg queue  %s\nmakespan   %s\nGPU util   %.1f%%\nGPU-hours  %.1f\nrestarts   %d\n", hms(s.AvgQueue), hms(s.Makespan), 100*s.GPUUtil, s.GPUHours, s.Restarts)
	ev := res.Sim.EventCount()
	fmt.Fprintf(stdout, "events     %d (%d decision points)\n", ev, res.Sim.DecisionPoints())
	if !*f.lazy {
		fmt.Fprintln(stdout, "advance    eager (every running job at every event; the default lazy advance gives the same results up to floating-point rounding)")
	}
	fmt.Fprintf(stdout, "wall time  %s (%.0f events/s)\n", wall.Round(time.Millisecond), float64(ev)/wall.Seconds())
	fmt.Fprintf(stdout, "phases     load %s (workload %s, profiles %s), build %s, simulate %s, write %s\n",
		ms(ph.Load), ms(ph.Workload), ms(ph.Profiles), ms(ph.Build), ms(ph.Simulate), ms(ph.Write))
}

// phases is where drover sim's wall time went, in seconds: loading the
// workload and cluster and the model profiles, building the policy, the
// simulation (trace.Run: the simulator's construction and the replay,
// including the profiles' interpolators, which are built at their first
// query), and writing --jobs-out and --log. The process's start-up (the
// Go runtime and package initialization) comes before all of them.
type phases struct {
	Load     float64 `json:"load"`     // Workload + Profiles
	Workload float64 `json:"workload"` // the workload and cluster
	Profiles float64 `json:"profiles"` // the model profiles
	Build    float64 `json:"build"`    // the policy and run options
	Simulate float64 `json:"simulate"` // trace.Run (wall_s)
	Write    float64 `json:"write"`    // --jobs-out and --log files
}

// since returns the seconds since mark, and the time now as the next mark.
func since(mark time.Time) (float64, time.Time) {
	now := time.Now()
	return now.Sub(mark).Seconds(), now
}

// ms formats seconds as milliseconds with one decimal.
func ms(sec float64) string { return strconv.FormatFloat(1e3*sec, 'f', 1, 64) + "ms" }

// profilesHeader says which model profiles a run used and why: results
// depend on whether measured profiles sit near the workload file.
func profilesHeader(flag, src string) string {
	switch {
	case flag != "":
		return fmt.Sprintf("%s (--profiles %s)", src, flag)
	case src == trace.BuiltinProfiles:
		return src + " (no measured profiles near the workload; --profiles DIR for measured ones)"
	}
	return fmt.Sprintf("measured, %s (found near the workload; --profiles builtin for the fitted ones)", src)
}

// simOperand takes drover sim's positional FILE as --workload FILE. Flags
// may follow it; a second operand, or FILE with --workload, is a usage
// error.
func simOperand(fs *flag.FlagSet, workload *string) error {
	if fs.NArg() == 0 {
		return nil
	}
	file := fs.Arg(0)
	if isSet(fs, "workload") {
		fmt.Fprintf(fs.Output(), "drover sim: workload given twice: --workload %s and %q\n", *workload, file)
		return errUsage
	}
	// The flags after FILE: flag parsing stops at the first operand.
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if err := checkNumbers(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return unexpectedArgs(fs, fs.Args())
	}
	*workload = file
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// reasons formats skip counts by reason, most frequent first.
func reasons(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if m[keys[a]] != m[keys[b]] {
			return m[keys[a]] > m[keys[b]]
		}
		return keys[a] < keys[b]
	})
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %d %s", m[k], k)
	}
	return b.String()
}

// resolveRegime checks a --regime value and resolves auto for workload w
// on cluster c (trace.AutoRegime), returning the name to print and use.
func resolveRegime(flag string, w *datasets.Workload, c *env.Cluster) (string, error) {
	r, err := trace.ParseRegime(flag)
	if err != nil {
		return "", err
	}
	if r == trace.RegimeAuto {
		r = trace.AutoRegime(w.Format, c)
	}
	return r, nil
}

// hasDurations reports whether any job of w has a measured duration.
// loadSetup does what drover sim and drover eval share: it loads the
// workload, resolves --model auto (pollux for workloads without durations,
// drover otherwise) in place, and loads the cluster. With --cluster other
// than homogeneous, --nodes caps the node list only when given.
func loadSetup(fs *flag.FlagSet, workload, format string, skipBad bool, model *string, clusterSpec string, nodes, gpn int) (*datasets.Workload, env.Cluster, string, error) {
	w, err := datasets.Load(workload, datasets.Format(format), datasets.Options{SkipBad: skipBad, PS: psRule(fs)})
	if err != nil {
		return nil, env.Cluster{}, "", err
	}
	if *model == "auto" {
		*model = trace.ModelDrover
		if !hasDurations(w) {
			*model = trace.ModelPollux
		}
	}
	cluster, desc, err := trace.LoadCluster(clusterSpec, nodeCap(fs, clusterSpec, nodes), gpn)
	if err != nil {
		return nil, env.Cluster{}, "", err
	}
	return w, cluster, desc, nil
}

// nodeCap is the node cap of trace.LoadCluster for the --cluster and
// --nodes flags: --nodes for a homogeneous cluster, else --nodes only when
// given (0: all nodes).
func nodeCap(fs *flag.FlagSet, clusterSpec string, nodes int) int {
	if clusterSpec == "homogeneous" || clusterSpec == "" {
		return nodes
	}
	c := 0
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "nodes" {
			c = nodes
		}
	})
	return c
}

func hasDurations(w *datasets.Workload) bool {
	for _, j := range w.Jobs {
		if j.Duration > 0 {
			return true
		}
	}
	return false
}

// hms formats seconds, rounded, like time.Duration (1h2m3s), also beyond
// the ~292 years a time.Duration holds.
func hms(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "-"
	}
	r := math.Round(sec)
	if math.Abs(r) < 1e9 {
		return time.Duration(r * float64(time.Second)).String()
	}
	sign := ""
	if r < 0 {
		sign, r = "-", -r
	}
	h := math.Floor(r / 3600)
	m := math.Floor((r - h*3600) / 60)
	return fmt.Sprintf("%s%.0fh%.0fm%.0fs", sign, h, m, r-h*3600-m*60)
}

func writeJobs(path string, jobs []env.JobResult) error {
	return writeFile(path, func(f io.Writer) error {
		cw := csv.NewWriter(f)
		cw.Write([]string{"name", "submit", "start", "finish", "queue", "run_time", "jct", "restarts", "gpu_seconds",
			"tta", "iterations", "straggler_iterations", "straggling_worker_iterations", "final_metric",
			"nodes", "straggler_free", "comm_delay", "compute_delay",
			"relayed", "relay_changes", "withheld", "tunings", "replacements", "gpus"})
		ff := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
		for _, j := range jobs {
			cw.Write([]string{j.Name, ff(j.Submit), ff(j.Start), ff(j.Finish), ff(j.Queue), ff(j.RunTime), ff(j.JCT), strconv.Itoa(j.Restarts), ff(j.GPUSeconds),
				ff(j.TTA), ff(j.Iterations), ff(j.StragglerIterations), ff(j.Stragglers), ff(j.FinalMetric),
				strconv.Itoa(j.Nodes), ff(j.StragglerFree), ff(j.CommDelay), ff(j.ComputeDelay),
				ff(j.Relayed), strconv.Itoa(j.RelayChanges), ff(j.Withheld), strconv.Itoa(j.Tunings), strconv.Itoa(j.Replacements),
				strconv.Itoa(j.GPUs)})
		}
		cw.Flush()
		return cw.Error()
	})
}

// mitigationJSON is drover sim --json's account of the runtime mitigation
// (env.MitigationSummary).
type mitigationJSON struct {
	Name         string  `json:"name"`
	Relayed      float64 `json:"relayed_worker_iterations"`
	RelayChanges int     `json:"relay_changes"`
	RelayJobs    int     `json:"relay_jobs"`
	Withheld     float64 `json:"withheld_worker_iterations"`
	WithheldJobs int     `json:"withheld_jobs"`
	Tunings      int     `json:"batch_tunings"`
	TunedJobs    int     `json:"tuned_jobs"`
	Replacements int     `json:"replacements"`
	ReplacedJobs int     `json:"replaced_jobs"`
}

func newMitigationJSON(name string, m env.MitigationSummary) *mitigationJSON {
	return &mitigationJSON{name, m.Relayed, m.RelayChanges, m.RelayJobs, m.Withheld, m.WithheldJobs,
		m.Tunings, m.TunedJobs, m.Replacements, m.ReplacedJobs}
}

// printMitigation prints what the runtime mitigation did: STRET's stages
// or the replacements.
func printMitigation(w io.Writer, name string, m env.MitigationSummary) {
	switch name {
	case env.MitigationSTRET:
		fmt.Fprintf(w, "STRET      relay %.4g worker-iterations in %d jobs (%d relay changes); withheld %.4g worker-iterations in %d jobs; batch tuned in %d jobs\n",
			m.Relayed, m.RelayJobs, m.RelayChanges, m.Withheld, m.WithheldJobs, m.TunedJobs)
	case env.MitigationReplace:
		fmt.Fprintf(w, "replace    %d workers replaced in %d jobs\n", m.Replacements, m.ReplacedJobs)
	}
}

// writeFile writes a file atomically: to a temporary file beside it, then
// renamed over it, so a failure never leaves a half-written file. Its
// errors name path, never the temporary file.
func writeFile(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return writeErr(path, err)
	}
	return nil
}

// writeErr is "write PATH: CAUSE", with the cause stripped of the
// temporary file's name (an *os.PathError's or *os.LinkError's path).
func writeErr(path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe) && strings.Contains(filepath.Base(pe.Path), ".drover-"):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("write %s: %w", path, err)
}
