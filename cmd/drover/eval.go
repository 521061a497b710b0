package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/compare"
	"github.com/drover-sched/drover/serve/logreplay"
	"github.com/drover-sched/drover/train/restore"
)

// defaultEvalPolicies are what drover eval compares by default: the
// methods (strn, sas), the baselines (first-fit, tiresias and gandiva,
// each with bsp, asp, local(4), local(8) and strn-sync; optimus), the
// papers' comparison systems (Sync-Switch and LB-BSP on each baseline
// placement, Themis) and the oracle-sync upper bound on each baseline
// placement.
var defaultEvalPolicies = strings.Join(slices.Concat(builtin.Methods, builtin.Baselines(), builtin.ComparisonSystems(), builtin.UpperBounds()), ",")

// evalFlags are drover eval's flags.
type evalFlags struct {
	policyList      *string
	seedsFlag       *string
	parallel        *int
	outDir          *string
	bins            *int
	logDir          *string
	servedStateless *bool
	servedCkpts     *string
	quiet           *bool
	workload        *string
	format          *string
	model           *string
	nodes           *int
	clusterSpec     *string
	gpn             *int
	interval        *float64
	restart         *float64
	profilesDir     *string
	skipBad         *bool
	stragglers      *bool
	bg              *string
	load            *float64
	noJitter        *bool
	threshold       *float64
	mitigation      *string
	regimeFlag      *string
	syncFlag        *string
	convergence     *string
}

// defineEvalFlags defines drover eval's flags on fs.
func defineEvalFlags(fs *flag.FlagSet, reg policies.Registry) *evalFlags {
	f := new(evalFlags)
	f.policyList = fs.String("policies", defaultEvalPolicies, fmt.Sprintf("comma-separated policies to compare: %s; a name may end in ~<mitigation> (%s) for a row whose runs use that per-worker mitigation instead of --mitigation's, e.g. first-fit+bsp~lb-bsp (LB-BSP on first-fit's placements); or the directory of a sas-rl or strn-rl checkpoint (its teacher, strn or sas+strn-sync, is added beside it). The default: the methods, the 16 baselines, the papers' comparison systems (Sync-Switch, LB-BSP, Themis) and the oracle-sync upper bounds. The table compares each with the best baseline (the comparison systems are baselines), and a learned policy with its teacher", reg.Syntax(), strings.Join(builtin.Mitigations, ", ")))
	f.seedsFlag = fs.String("seeds", "1-5", "seeds: numbers and ranges, e.g. 1-5 or 1,3,7-9")
	f.parallel = fs.Int("parallel", 0, "simulations at a time (0 = GOMAXPROCS); the decision-time column is clean only with 1")
	f.outDir = fs.String("out", "", "directory for table.md, summary.json and the plots (default: a new runs/eval-WORKLOAD-TIME)")
	f.bins = fs.Int("bins", 60, "time bins of the stragglers-over-time plot")
	f.logDir = fs.String("log", "", "a route log (drover serve -route ... -log-dir DIR writes DIR/routes.jsonl; a directory holding one is read as it) is re-scored as drover eval --log ROUTES.jsonl -h says. Otherwise a log directory (datasets/declog) instead of a workload: alone, summarise its decisions; with --policies, re-score a recorded run (drover serve -log-dir DIR + drover sim --remote --record DIR): replay the served workload on the recorded cluster and telemetry under each policy and under the served policy as the server answers it, beside the logged figures. A log without the run manifest (a live cluster's) is replayed on the cluster of --cluster, --nodes and --gpus-per-node (its first nodes renamed the log's node ids when they differ) with the per-worker model of the flags, seed 1 unless --seeds")
	f.servedStateless = fs.Bool("served-stateless", false, "with --log --policies: replay the served heuristic as a stateless server (drover serve -stateless) answers, not a stateful one")
	f.servedCkpts = fs.String("served-checkpoints", "", "with --log --policies: the checkpoint directory the server read (drover serve -checkpoints), needed when a learned policy (learned@vN) answered some of the log's decisions: each request is replayed with the policy that answered it")
	f.quiet = fs.Bool("quiet", false, "no progress output")
	// The workload, cluster and model flags of drover sim.
	f.workload = fs.String("workload", "builtin", "workload file, or builtin for the embedded default")
	f.format = fs.String("format", "auto", "workload format: auto|pollux|philly|helios|alibaba|jobs|parquet")
	f.model = fs.String("model", "auto", "throughput model: pollux|drover|auto (pollux for workloads without durations, like the Pollux workloads; drover otherwise)")
	f.nodes = fs.Int("nodes", 16, "number of nodes (with --cluster pai, synth:N or a node list: keep the first N GPU nodes; default all)")
	f.clusterSpec = fs.String("cluster", "homogeneous", "cluster: homogeneous (--nodes x --gpus-per-node, racks of 8 nodes), pai (the PAI v2023 GPU node list, 1,213 nodes), synth:N (N nodes with the PAI list's node types, the list cycled, e.g. synth:10000), or the path of a PAI-format node list")
	f.gpn = fs.Int("gpus-per-node", 4, "GPUs per node")
	f.interval = fs.Float64("interval", -1, "scheduling interval in seconds; 0 = decide at every arrival and completion; -1 = the model's default (pollux 60, drover 0)")
	f.restart = fs.Float64("restart-delay", env.DefaultRestartDelay, "seconds every (re)start costs")
	f.profilesDir = fs.String("profiles", "", "directory of measured model profiles (pollux_apps); empty = found near the workload, else the embedded fitted ones; builtin = embedded")
	f.skipBad = fs.Bool("skip-bad", false, "skip and count malformed or invalid workload rows instead of failing")
	psShareFlag(fs)
	f.stragglers = fs.Bool("stragglers", true, "with the drover model: model each worker (background load, jitter, stragglers); false = the job-level model")
	f.bg = fs.String("background", "builtin", "per-worker model: node background load: builtin (fitted stochastic process), none, or a machine_usage.csv(.gz) to replay")
	f.load = fs.Float64("load", 1, "per-worker model: multiply the background load")
	f.noJitter = fs.Bool("no-jitter", false, "per-worker model: turn the calibrated per-worker jitter off")
	f.threshold = fs.Float64("straggler-threshold", 0.2, "a worker straggles when slower than the job's median by more than this fraction")
	f.mitigation = fs.String("mitigation", "none", "per-worker model: runtime straggler mitigation: none, stret, replace or lb-bsp")
	f.regimeFlag = fs.String("regime", "auto", "per-worker model: straggler regime: dedicated, shared, or auto (shared for the Alibaba PAI pod list or a PAI node list, dedicated otherwise; see drover sim -h)")
	f.syncFlag = fs.String("sync", "bsp", "sync strategy for policies that do not choose one: bsp, asp, ssp(S), local(H) (a composed <policy>+<sync> keeps its own)")
	f.convergence = convergenceFlag(fs, true)
	return f
}

func runEval(args []string, stdout, stderr io.Writer) error {
	if p, ok := routeLogPath(args); ok {
		return evalRouteLog(p, args, stdout, stderr) // evalroute.go
	}
	fs := newFlags("eval", stderr)
	reg := builtin.Registry()
	f := defineEvalFlags(fs, reg)
	if err := parse(fs, args); err != nil {
		return err
	}
	// Every flag is checked before the first simulation (and before the
	// workload or the log is read): a bad one costs no run.
	if err := checkModelFlags(fs, *f.nodes, *f.clusterSpec, *f.model, *f.mitigation, *f.regimeFlag, *f.format, *f.syncFlag); err != nil {
		return err
	}
	bands, err := convergenceBands(fs, *f.convergence, true)
	if err != nil {
		return err
	}
	if *f.logDir != "" && (len(bands) > 1 || bands[0].Convergence != nil) {
		return fmt.Errorf("%s %s: not with --log (a recorded run is replayed at the fit)", flagName(fs, "convergence"), *f.convergence)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *f.logDir != "" && !given["policies"] {
		return evalLog(*f.logDir, stdout)
	}
	syncStrategy, err := env.ParseSync(*f.syncFlag)
	if err != nil {
		return fmt.Errorf("--sync: %w", err)
	}
	contenders, names, err := evalContenders(reg, *f.policyList, syncStrategy)
	if err != nil {
		return err
	}
	var seeds []uint64 // with --log, nil unless given: the recorded run's seed
	if *f.logDir == "" || given["seeds"] {
		if seeds, err = parseSeeds(*f.seedsFlag); err != nil {
			return fmt.Errorf("--seeds: %w", err)
		}
	}
	if *f.logDir != "" {
		return evalLogReplay(f.logReplay(fs, contenders, seeds, args), stdout, stderr)
	}

	e, err := f.setup(fs)
	if err != nil {
		return err
	}
	if err := needsPerWorker(fs, bands, e.perWorker); err != nil {
		return err
	}
	return f.compare(e, evalRun{contenders: contenders, names: names, seeds: seeds, bands: bands, args: args}, stdout, stderr)
}

// evalRun is what one drover eval compares: the contenders (names: the
// heuristics'), the seeds, the convergence bands (the table's first) and
// the command line.
type evalRun struct {
	contenders []compare.Policy
	names      []string
	seeds      []uint64
	bands      []compare.Band
	args       []string
}

// compare runs the comparison of e and r, prints its table and writes its
// files.
func (f *evalFlags) compare(e *evalSetup, r evalRun, stdout, stderr io.Writer) error {
	w, seeds, runs := e.w, r.seeds, len(r.contenders)*len(r.seeds)
	fmt.Fprintf(stdout, "workload   %s (%d jobs)\ncluster    %s\nmodel      %s (profiles: %s)\n", w.Name, len(w.Jobs), e.clusterDesc, e.modelDesc, e.profSrc)
	fmt.Fprintf(stdout, "policies   %s\nseeds      %s (%d)\n", strings.Join(r.names, ", "), *f.seedsFlag, len(seeds))
	fmt.Fprintf(stdout, "timing     %s\n", timingNote(*f.parallel, runs))

	dir, err := evalOutDir(*f.outDir, "eval-"+strings.TrimSuffix(filepath.Base(w.Name), filepath.Ext(w.Name)))
	if err != nil {
		return err
	}

	// The one wall clock of the comparison: compare times each policy's
	// Schedule calls with it (the library never reads the clock itself).
	origin := time.Now()
	cfg := compare.Config{Policies: r.contenders, Seeds: seeds, Options: e.options, Parallel: *f.parallel,
		Clock: func() time.Duration { return time.Since(origin) }}
	results, wall, err := compareWithProgress(cfg, r.bands, *f.quiet, stderr)
	if err != nil {
		return err
	}
	reused := 0
	for _, res := range results {
		for _, p := range res.Policies {
			for _, x := range p.Runs {
				if x.Recomputed {
					reused++
				}
			}
		}
	}

	fmt.Fprintln(stdout)
	if err := compare.WriteTable(stdout, results[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nmean ± half-width of the 95%% t-interval over %d seeds; %d simulations in %s\n", len(seeds), len(r.bands)*runs-reused, wall.Round(time.Millisecond))
	fmt.Fprintf(stdout, "%s: %s\n", compare.DecisionTimeHeader, timingNote(*f.parallel, runs))
	meta := compare.Meta{Workload: w.Name, Model: e.modelDesc, Cluster: e.clusterDesc, Profiles: e.profSrc, Command: "drover eval " + strings.Join(r.args, " "),
		Convergence: r.bands[0].Name}
	if len(r.bands) > 1 {
		names := make([]string, len(r.bands))
		for i, b := range r.bands {
			names[i] = b.Name
		}
		c := compare.CheckRanking(3, names, results)
		meta.Ranking = &c
		fmt.Fprintf(stdout, "convergence %s band for the table, %s at the ends; %d of %d runs at the ends reused from the fit (every job BSP), their accuracy recomputed\n%s\n",
			names[0], strings.Join(names[1:], " and "), reused, (len(r.bands)-1)*runs, c)
	}
	title := fmt.Sprintf("%s, %d seeds", filepath.Base(w.Name), len(seeds))
	if err := writeEvalFiles(stdout, dir, results[0], meta, title, *f.bins); err != nil {
		return err
	}
	for i := 1; i < len(r.bands); i++ {
		m := meta
		m.Convergence, m.Ranking = r.bands[i].Name, nil
		if err := writeBandFiles(stdout, dir, results[i], m); err != nil {
			return err
		}
	}
	return nil
}

// logReplay is the replay of --log with --policies: for a log without a
// manifest (a live cluster's), the cluster and per-worker model of the
// flags, seed 1.
func (f *evalFlags) logReplay(fs *flag.FlagSet, contenders []compare.Policy, seeds []uint64, args []string) logReplayFlags {
	return logReplayFlags{out: *f.outDir, parallel: *f.parallel, bins: *f.bins, quiet: *f.quiet, args: args,
		replay: logreplay.Config{Dir: *f.logDir, Contenders: contenders, Seeds: seeds, Stateless: *f.servedStateless, Checkpoints: *f.servedCkpts,
			Live: logreplay.Manifest{Version: 1, Workload: "builtin", Model: trace.ModelDrover, Profiles: *f.profilesDir, Cluster: *f.clusterSpec,
				NodeCap: nodeCap(fs, *f.clusterSpec, *f.nodes), GPUsPerNode: *f.gpn, Interval: *f.interval, RestartDelay: *f.restart, Seed: 1,
				Stragglers: true, Background: *f.bg, Load: *f.load, NoJitter: *f.noJitter, Threshold: *f.threshold, Mitigation: *f.mitigation,
				Regime: *f.regimeFlag}}}
}

// evalSetup is what drover eval's simulations share: the workload, the
// cluster's and model's descriptions, and each seed's options.
type evalSetup struct {
	w                               *datasets.Workload
	clusterDesc, profSrc, modelDesc string
	options                         func(seed uint64) (trace.Options, error)
	perWorker                       bool // the per-worker model
}

// setup loads the workload, the cluster and the profiles, and builds the
// runs' options.
func (f *evalFlags) setup(fs *flag.FlagSet) (*evalSetup, error) {
	w, cluster, clusterDesc, err := loadSetup(fs, *f.workload, *f.format, *f.skipBad, f.model, *f.clusterSpec, *f.nodes, *f.gpn)
	if err != nil {
		return nil, err
	}
	// One set of profiles for every run: they are safe for concurrent use,
	// and loading measured ones (building their interpolators) costs more
	// than a short run.
	profiles, profSrc, err := trace.Profiles(*f.profilesDir, *f.workload)
	if err != nil {
		return nil, fmt.Errorf("--profiles: %w", err)
	}
	perWorker := *f.model == trace.ModelDrover && *f.stragglers
	regime, err := resolveRegime(*f.regimeFlag, w, &cluster)
	if err != nil {
		return nil, err
	}
	// One reference for every run: its factors depend on the regime and
	// the background, not on the seed, the policy or the mitigation.
	var ref *env.Reference
	if perWorker {
		st := trace.Stragglers{Background: *f.bg, Regime: regime}
		if ref, err = st.NewReference(len(cluster.Nodes)); err != nil {
			return nil, fmt.Errorf("--background: %w", err)
		}
	}
	options := func(seed uint64) (trace.Options, error) {
		// Each run gets its own copy of the cluster.
		c := cluster
		c.Nodes = slices.Clone(cluster.Nodes)
		o := trace.Options{Workload: w, Model: *f.model, Profiles: profiles, Cluster: &c,
			Nodes: *f.nodes, GPUsPerNode: *f.gpn, Interval: *f.interval, RestartDelay: *f.restart}
		if perWorker {
			o.Stragglers = &trace.Stragglers{Background: *f.bg, Load: *f.load, NoJitter: *f.noJitter, Seed: seed, Threshold: *f.threshold, Mitigation: *f.mitigation, Regime: regime, Reference: ref}
		}
		return o, nil
	}
	modelDesc := *f.model + " job-level"
	if perWorker {
		modelDesc = fmt.Sprintf("%s per-worker (regime %s, background %s x%g, jitter %v, mitigation %s, convergence %s)", *f.model, regime, *f.bg, *f.load, !*f.noJitter, *f.mitigation, *f.convergence)
	}
	return &evalSetup{w: w, clusterDesc: clusterDesc, profSrc: profSrc, modelDesc: modelDesc, options: options, perWorker: perWorker}, nil
}

// evalContenders returns the contenders of a --policies list: its
// heuristics under the sync strategy (marked as baselines where they are
// builtin's), a row "<policy>~<mitigation>" under that per-worker
// mitigation (builtin.SplitMitigation), then its checkpoints
// (train/restore), each preceded by its teacher (policies/direct.TeacherOf)
// when the list does not name it, and the heuristics' names (the added
// teachers' included).
func evalContenders(reg policies.Registry, list string, sync env.Sync) ([]compare.Policy, []string, error) {
	names, dirs, err := evalPolicies(list)
	if err != nil {
		return nil, nil, err
	}
	listed := map[string]bool{}
	contenders := make([]compare.Policy, 0, len(names)+2*len(dirs))
	for _, n := range names {
		c, err := heuristicRow(reg, n, sync)
		if err != nil {
			return nil, nil, err
		}
		if listed[n] {
			return nil, nil, fmt.Errorf("--policies: %q listed twice", n)
		}
		listed[n] = true
		contenders = append(contenders, c)
	}
	for _, d := range dirs {
		c, err := restore.Policy(d)
		if err != nil {
			return nil, nil, fmt.Errorf("--policies: %w", err)
		}
		// A learned policy stands beside its teacher: a teacher not
		// listed is added just before it, so the tables say how much of
		// its gain over a heuristic is the teacher's.
		if t := c.Teacher; t != "" && !listed[t] {
			tc, err := heuristicRow(reg, t, sync)
			if err != nil {
				return nil, nil, fmt.Errorf("--policies: %s's teacher: %w", c.Name, err)
			}
			contenders = append(contenders, tc)
			names = append(names, t)
			listed[t] = true
		}
		contenders = append(contenders, c)
	}
	return contenders, names, nil
}

// heuristicRow returns the contender of one heuristic row name: a policy
// of reg under the sync strategy, with a per-worker mitigation when the
// name ends in "~<mitigation>" (builtin.SplitMitigation), marked as a
// baseline where builtin.IsBaseline says so.
func heuristicRow(reg policies.Registry, name string, sync env.Sync) (compare.Policy, error) {
	p, m := builtin.SplitMitigation(name)
	if p != name && !slices.Contains(builtin.Mitigations, m) {
		return compare.Policy{}, fmt.Errorf("--policies: %q: unknown mitigation %q (want %s)", name, m, strings.Join(builtin.Mitigations, ", "))
	}
	cs, err := compare.Heuristics(reg, []string{p}, sync)
	if err != nil {
		return compare.Policy{}, fmt.Errorf("--policies: %w", err)
	}
	c := cs[0]
	c.Name, c.Mitigation, c.Baseline = name, m, builtin.IsBaseline(name)
	return c, nil
}

// evalOutDir returns the directory of an eval's files, created: out, or
// by default runs/NAME-TIME.
func evalOutDir(out, name string) (string, error) {
	dir := out
	if dir == "" {
		dir = filepath.Join("runs", fmt.Sprintf("%s-%s", name, time.Now().Format("20060102-150405")))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// compareWithProgress runs the comparison cfg under each convergence band
// (compare.Sweep) with a progress bar on stderr (none when quiet) and
// returns a result per band and the wall time.
func compareWithProgress(cfg compare.Config, bands []compare.Band, quiet bool, stderr io.Writer) ([]*compare.Result, time.Duration, error) {
	var bar *progress.Bar
	if !quiet {
		bar = progress.New(stderr, "eval", len(bands)*len(cfg.Policies)*len(cfg.Seeds))
		cfg.Progress = func(done, _ int) { bar.Set(done) }
	}
	start := time.Now()
	res, err := compare.Sweep(cfg, bands)
	wall := time.Since(start)
	if bar != nil {
		bar.Finish()
	}
	return res, wall, err
}

// writeEvalFiles writes an eval's files into dir and names each on
// stdout: table.md (with the ranking line of meta.Ranking, when set),
// summary.json (with meta), the JCT CDF and the stragglers over time (bins
// time bins), the plots titled after title.
func writeEvalFiles(stdout io.Writer, dir string, res *compare.Result, meta compare.Meta, title string, bins int) error {
	outputs := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"table.md", func(f io.Writer) error {
			if err := compare.WriteTable(f, res); err != nil || meta.Ranking == nil {
				return err
			}
			_, err := fmt.Fprintf(f, "\n%s\n", meta.Ranking)
			return err
		}},
		{"summary.json", func(f io.Writer) error { return compare.WriteJSON(f, res, meta) }},
		{"jct_cdf.png", func(f io.Writer) error { return compare.JCTCDF(f, res, "JCT CDF: "+title) }},
		{"stragglers.png", func(f io.Writer) error {
			return compare.StragglersPlot(f, res, bins, "stragglers over time: "+title+" (mean over seeds)")
		}},
	}
	for _, o := range outputs {
		p := filepath.Join(dir, o.name)
		if err := plot.WriteFile(p, o.write); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote      %s\n", p)
	}
	return nil
}

// writeBandFiles writes the table and the JSON summary of a convergence
// band's comparison (a sweep's end) into dir as table-BAND.md and
// summary-BAND.json, and names each on stdout.
func writeBandFiles(stdout io.Writer, dir string, res *compare.Result, meta compare.Meta) error {
	for _, o := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"table-" + meta.Convergence + ".md", func(f io.Writer) error { return compare.WriteTable(f, res) }},
		{"summary-" + meta.Convergence + ".json", func(f io.Writer) error { return compare.WriteJSON(f, res, meta) }},
	} {
		p := filepath.Join(dir, o.name)
		if err := plot.WriteFile(p, o.write); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote      %s\n", p)
	}
	return nil
}

// timingNote says what the decision-time column measures and whether this
// eval's timings are clean: runs simulations, parallel at a time
// (--parallel, 0 = GOMAXPROCS).
func timingNote(parallel, runs int) string {
	const what = "wall time of the policy's Schedule calls per decision (a job placed, moved or given a new sync), one simulation per core"
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	if min(parallel, runs) <= 1 {
		return what + "; clean: one simulation at a time"
	}
	return fmt.Sprintf("%s; %d simulations at a time share the CPUs, so these timings are indicative only: rerun with --parallel 1 for clean ones", what, min(parallel, runs))
}

// evalPolicies splits the --policies list into heuristic names and
// checkpoint directories (entries with a path separator).
func evalPolicies(list string) (names, dirs []string, err error) {
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if strings.ContainsRune(n, filepath.Separator) {
			dirs = append(dirs, n)
			continue
		}
		names = append(names, n)
	}
	if len(names)+len(dirs) == 0 {
		return nil, nil, fmt.Errorf("--policies: empty list")
	}
	return names, dirs, nil
}

// parseSeeds reads "1-5", "1,3,7-9" and the like: distinct seeds in the
// given order.
func parseSeeds(s string) ([]uint64, error) {
	const maxSeeds = 10000
	var out []uint64
	seen := map[uint64]bool{}
	add := func(x uint64) error {
		if seen[x] {
			return fmt.Errorf("seed %d listed twice", x)
		}
		if len(out) == maxSeeds {
			return fmt.Errorf("more than %d seeds", maxSeeds)
		}
		seen[x] = true
		out = append(out, x)
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: not a seed or range", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("%q: want a range LO-HI with LO <= HI", part)
			}
		}
		for x := a; ; x++ {
			if err := add(x); err != nil {
				return nil, err
			}
			if x == b {
				break
			}
		}
	}
	return out, nil
}

// evalLog summarises a decision log directory.
func evalLog(dir string, stdout io.Writer) error {
	log, err := declog.ReadDirTail(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "log        %s (%d files)\n", dir, len(log.Files))
	if len(log.Partial) > 0 {
		fmt.Fprintf(stdout, "unsealed   %s: %d records read from the write-ahead log (a live writer's current file or a crash's remnant)\n", strings.Join(log.Partial, ", "), log.Tail)
	}
	if len(log.Records) == 0 {
		return logreplay.NoRecordsError(dir, log.Partial)
	}
	return compare.WriteLogSummary(stdout, compare.SummarizeLog(log.Records))
}
