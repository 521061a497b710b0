package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/background"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/compare"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/remote"
	"github.com/drover-sched/drover/serve/state"
)

// ServedLogName is the name of the row of the served run's figures, as
// the decision log's Finished outcomes give them, in drover eval --log's
// table.
const ServedLogName = "served (log)"

// loggedJob is what a decision log says about one served job.
type loggedJob struct {
	id        string
	order     int // its first decision's index among the decisions
	submitted time.Time
	first     time.Time // its first decision
	model     string
	gpus      int
	arch      string
	batch     int
	expect    float64
	source    string   // the policy that placed it ("" when none did)
	workers   []string // the placement's worker nodes
	ps        int      // the placement's parameter servers
	sync      string
	run       compare.JobRun // its outcomes (run.JCT NaN: no Finished outcome)
}

// servedLog is a recorded run rebuilt from its logs.
type servedLog struct {
	jobs    []*loggedJob   // in arrival order
	dropped map[string]int // jobs left out of the replay, by reason
	// fromOutcomes counts the replayed jobs whose run time came from their
	// Started and Finished outcomes (no expected run time logged).
	fromOutcomes int
	sources      map[string]int
	served       string // the policy that placed the most jobs
	files        int
	partial      []string
	samples      int
	telFiles     int
}

// readServedLog reads the decision log of dir and gathers each job.
func readServedLog(dir string) (*servedLog, error) {
	log, err := declog.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(log.Records) == 0 {
		return nil, fmt.Errorf("no records in %s", dir)
	}
	byID := map[string]*loggedJob{}
	var order []*loggedJob
	nd := 0
	for _, r := range log.Records {
		switch r.Kind {
		case declog.KindDecision:
			d := r.Decision
			j := byID[d.JobID]
			if j == nil {
				j = &loggedJob{id: d.JobID, order: nd, first: d.Time, run: compare.JobRun{JCT: math.NaN()}}
				byID[d.JobID] = j
				order = append(order, j)
			}
			nd++
			if j.submitted.IsZero() && !d.JobSubmitted.IsZero() {
				j.submitted = d.JobSubmitted
			}
			if j.model == "" {
				j.model, j.gpus, j.arch, j.batch, j.expect = d.JobModel, d.JobGPUs, d.JobArch, d.JobBatchSize, d.JobExpectedDuration
			}
			if len(d.Workers) > 0 && j.workers == nil {
				j.workers, j.sync, j.source, j.ps = d.Workers, d.Sync, d.Source, len(d.PS)
				if j.gpus == 0 {
					j.gpus = len(d.Workers)
				}
			}
		case declog.KindOutcome:
			if j := byID[r.Outcome.JobID]; j != nil {
				j.run.Add(&r.Outcome)
			}
		}
	}
	s := &servedLog{dropped: map[string]int{}, sources: map[string]int{}, files: len(log.Files), partial: log.Partial}
	for _, j := range order {
		if j.submitted.IsZero() {
			j.submitted = j.first
		}
		s.jobs = append(s.jobs, j)
		if j.source != "" {
			s.sources[j.source]++
		}
	}
	slices.SortStableFunc(s.jobs, func(a, b *loggedJob) int { return a.submitted.Compare(b.submitted) })
	for src, n := range s.sources {
		if n > s.sources[s.served] || n == s.sources[s.served] && src < s.served {
			s.served = src
		}
	}
	return s, nil
}

// workload turns the logged jobs into the replay's workload: each job at
// its submission (job_submit_unix_nanos, else its first decision) minus
// epoch, with its logged model, GPUs, architecture and batch size (a
// parameter-server job's shards: the placement's parameter servers), and as
// run time the run time the request expected (job_expected_duration_s:
// what the simulator derives the job's work from, so that the replay runs
// the served jobs) or, when none was logged, the span from its Started to
// its Finished outcome (which holds the served run's straggling, so a
// replay of it counts that twice), else its reported JCT. Jobs without a
// model profile, a GPU count or a run time, or larger than the cluster,
// are left out and counted in s.dropped.
func (s *servedLog) workload(epoch time.Time, profiles map[string]env.Profile, gpus int) *datasets.Workload {
	w := &datasets.Workload{Name: "served log"}
	for _, j := range s.jobs {
		d := datasets.Job{Name: j.id, Submit: max(0, j.submitted.Sub(epoch).Seconds()), GPUs: j.gpus, Model: j.model, BatchSize: j.batch, Duration: j.expect}
		if span, ok := j.run.Span(); !(d.Duration > 0) && ok {
			d.Duration = span
			s.fromOutcomes++
		}
		if !(d.Duration > 0) && j.run.JCT > 0 {
			d.Duration = j.run.JCT
		}
		switch _, ok := profiles[j.model]; {
		case !ok:
			s.dropped["unknown model"]++
			continue
		case j.gpus <= 0:
			s.dropped["no GPU count"]++
			continue
		case j.gpus > gpus:
			s.dropped["larger than the cluster"]++
			continue
		case !(d.Duration > 0):
			s.dropped["no run time"]++
			continue
		}
		if j.arch == "ps" {
			d.Arch, d.PSShards = datasets.ArchPS, j.ps
		}
		w.Jobs = append(w.Jobs, d)
	}
	return w
}

// servedRun is the logged run as a comparison run: the logged JCTs of the
// replayed jobs that finished, in arrival order, and the summary they give
// (average and 99th percentile JCT, finished jobs, GPU-hours from the
// placements' Started-Finished spans; no TTA or stragglers: the log has
// none).
func (s *servedLog) servedRun(w *datasets.Workload) compare.Run {
	in := map[string]bool{}
	for _, j := range w.Jobs {
		in[j.Name] = true
	}
	var jcts []float64
	gpuSec := 0.0
	for _, j := range s.jobs {
		if !in[j.id] || math.IsNaN(j.run.JCT) {
			continue
		}
		jcts = append(jcts, j.run.JCT)
		if span, ok := j.run.Span(); ok {
			gpuSec += float64(len(j.workers)) * span
		}
	}
	sum := env.Summary{Jobs: len(w.Jobs), Finished: len(jcts), AvgTTA: math.NaN(), Stragglers: math.NaN(), StragglerFrac: math.NaN(),
		AvgJCT: math.NaN(), P99JCT: math.NaN(), GPUHours: gpuSec / 3600}
	if len(jcts) > 0 {
		total := 0.0
		for _, x := range jcts {
			total += x
		}
		sum.AvgJCT = total / float64(len(jcts))
		sorted := slices.Clone(jcts)
		slices.Sort(sorted)
		sum.P99JCT = env.Quantile(sorted, 0.99)
	}
	return compare.Run{Summary: sum, JCTs: jcts}
}

// recordedBackground turns the telemetry log tl into the replay's
// background: node ids mapped to c's nodes (remote.NodeID), times
// from epoch, and the load the model attributes to the served jobs taken
// away (background.Subtract with the per-worker loads of env.Workers'
// defaults, each job on its logged workers between its Started and
// Finished outcomes, duty 1 under BSP and unknown otherwise). Samples of
// nodes c does not have are counted and left out.
func (s *servedLog) recordedBackground(tl *telemlog.Log, c *env.Cluster, epoch time.Time, step float64) (*background.Recorded, int, error) {
	s.samples, s.telFiles = len(tl.Samples), len(tl.Files)
	index := map[string]int{}
	for i := range c.Nodes {
		index[remote.NodeID(c, i)] = i
	}
	measured := make([][]background.Reading, len(c.Nodes))
	unknown := 0
	for _, x := range tl.Samples {
		n, ok := index[x.Node]
		if !ok {
			unknown++
			continue
		}
		measured[n] = append(measured[n], background.Reading{T: x.Time.Sub(epoch).Seconds(), Usage: background.Usage{CPU: x.CPU, MemBW: x.MemBW, Net: x.Net}})
	}
	var occ []background.Occupant
	for _, j := range s.jobs {
		if j.run.Started.IsZero() || len(j.workers) == 0 {
			continue
		}
		o := background.Occupant{Start: j.run.Started.Sub(epoch).Seconds(), End: math.Inf(1), Duty: 1}
		if j.sync != "" && j.sync != "bsp" {
			o.Duty = math.NaN() // the log does not say how much of its time it communicates
		}
		if !j.run.Finished.IsZero() {
			o.End = j.run.Finished.Sub(epoch).Seconds()
		}
		for _, id := range j.workers {
			if n, ok := index[id]; ok {
				o.Nodes = append(o.Nodes, n)
			}
		}
		occ = append(occ, o)
	}
	bg := background.Subtract(measured, occ, background.WorkerLoad{CPU: remote.DefaultWorkerCPU, MemBW: remote.DefaultWorkerMemBW, NetPerFlow: 0.5})
	src, err := background.NewRecorded(bg, step, nil)
	if err != nil {
		return nil, 0, err
	}
	return src, unknown, nil
}

// sourceLoads adapts a background.Source to env.Background.
type sourceLoads struct{ background.Source }

// Load implements env.Background.
func (l sourceLoads) Load(node int, t float64) env.Usage {
	u := l.At(node, t)
	return env.Usage{CPU: u.CPU, MemBW: u.MemBW, Net: u.Net}
}

// coreClient is a pb.SchedulerClient that calls a serve.Core in process:
// the served policy, replayed through serve/remote without a network.
type coreClient struct{ k *serve.Core }

func (c coreClient) Place(ctx context.Context, req *pb.PlaceRequest, _ ...grpc.CallOption) (*pb.PlaceResponse, error) {
	return c.k.Place(ctx, req)
}

func (c coreClient) Report(ctx context.Context, req *pb.ReportRequest, _ ...grpc.CallOption) (*pb.ReportResponse, error) {
	return c.k.Report(ctx, req)
}

func (c coreClient) Status(context.Context, *pb.StatusRequest, ...grpc.CallOption) (*pb.StatusResponse, error) {
	return c.k.Status(), nil
}

// servedContender replays the served heuristic (a "heuristic:NAME"
// source) as the server answers it: a fresh in-process serve.Core with
// heuristic NAME per run, stateful like drover serve unless stateless,
// asked through serve/remote with the recorded run's epoch.
func servedContender(source string, stateless bool, epoch time.Time, profiles map[string]env.Profile) (compare.Policy, error) {
	name, ok := strings.CutPrefix(source, "heuristic:")
	if !ok {
		return compare.Policy{}, fmt.Errorf("the served policy %q is not a heuristic: only heuristic:NAME sources can be replayed as served", source)
	}
	label := "served " + name + " (replay)"
	return compare.Policy{Name: label, New: func(uint64) (policies.Policy, error) {
		opts := []serve.Option{serve.WithHeuristic(name)}
		if !stateless {
			st, err := state.New(state.Config{})
			if err != nil {
				return nil, err
			}
			opts = append(opts, serve.WithState(st, profiles))
		}
		k, err := serve.NewCore(opts...)
		if err != nil {
			return nil, err
		}
		return remote.New(remote.Config{Client: coreClient{k}, Epoch: epoch})
	}}, nil
}

// logReplayFlags are drover eval's flags that --log --policies uses,
// checked and parsed.
type logReplayFlags struct {
	dir, out string
	// contenders are the --policies (evalContenders); seeds the --seeds,
	// nil when not given (the recorded run's seed).
	contenders       []compare.Policy
	seeds            []uint64
	parallel, bins   int
	quiet, stateless bool
	args             []string
	// live is the run description for a log without a manifest (a live
	// cluster's): eval's cluster and model flags.
	live runManifest
}

// evalLogReplay re-scores a recorded run: it rebuilds the served workload
// and the cluster (the run manifest drover sim --remote --record wrote;
// for a log without one, a live cluster's, f.live: eval's flags, see
// nameNodes and servedLog.origin),
// the background from the recorded telemetry minus the served jobs'
// modelled load, replays them under each policy and under the served
// policy as the server answers it, and prints the comparison table with
// the logged figures as ServedLogName and the served policy's match.
func evalLogReplay(f logReplayFlags, stdout, stderr io.Writer) error {
	m, err := readManifest(f.dir)
	live := errors.Is(err, fs.ErrNotExist)
	switch {
	case live:
		m = &f.live
	case err != nil:
		return fmt.Errorf("--log %s: %w", f.dir, err)
	}
	sl, err := readServedLog(f.dir)
	if err != nil {
		return err
	}
	telDir := f.dir
	if m.TelemetryDir != "" {
		telDir = filepath.Join(f.dir, m.TelemetryDir)
	}
	tl, err := telemlog.ReadDir(telDir)
	if err != nil {
		return err
	}
	if live {
		m.Epoch = sl.origin(tl)
	}
	model := m.Model
	if model != trace.ModelDrover || !m.Stragglers {
		return fmt.Errorf("--log %s: the run used the %s model without the per-worker model; re-scoring replays the recorded telemetry, which only the per-worker model reads", f.dir, model)
	}
	cluster, clusterDesc, err := trace.LoadCluster(m.Cluster, m.NodeCap, m.GPUsPerNode)
	if err != nil {
		return err
	}
	if live {
		renamed, err := nameNodes(&cluster, sl.nodeIDs(tl))
		if err != nil {
			return fmt.Errorf("--log %s (no %s: the cluster comes from --cluster, --nodes and --gpus-per-node): %w", f.dir, ManifestFile, err)
		}
		clusterDesc += " (from the flags: the log has no " + ManifestFile
		if renamed > 0 {
			clusterDesc += fmt.Sprintf("; the first %d nodes take the log's node ids", renamed)
		}
		clusterDesc += ")"
	}
	if m.Regime == "" || m.Regime == trace.RegimeAuto {
		m.Regime = trace.AutoRegime("", &cluster)
	}
	profiles, profSrc, err := trace.Profiles(m.Profiles, m.Workload)
	if err != nil {
		return err
	}
	gpus := 0
	for _, n := range cluster.Nodes {
		gpus += n.GPUs
	}
	w := sl.workload(m.Epoch, profiles, gpus)
	if len(w.Jobs) == 0 {
		return fmt.Errorf("--log %s: no replayable job", f.dir)
	}
	step := m.TelemetryStep
	if !(step > 0) {
		step = env.DefaultWorkerPeriod
	}
	bg, unknown, err := sl.recordedBackground(tl, &cluster, m.Epoch, step)
	if err != nil {
		return err
	}

	seeds := f.seeds
	if seeds == nil {
		seeds = []uint64{m.Seed}
	}
	served, err := servedContender(sl.served, f.stateless, m.Epoch, profiles)
	if err != nil {
		return err
	}
	contenders := append([]compare.Policy{served}, f.contenders...)
	st := trace.Stragglers{Background: m.Background, Regime: m.Regime}
	ref, err := st.NewReference(len(cluster.Nodes))
	if err != nil {
		return err
	}
	options := func(seed uint64) (trace.Options, error) {
		c := cluster
		c.Nodes = slices.Clone(cluster.Nodes)
		return trace.Options{Workload: w, Model: model, Profiles: profiles, Cluster: &c, Interval: m.Interval, RestartDelay: m.RestartDelay,
			Stragglers: &trace.Stragglers{Background: m.Background, Load: m.Load, NoJitter: m.NoJitter, Seed: seed, Threshold: m.Threshold,
				Mitigation: m.Mitigation, Regime: m.Regime, Reference: ref,
				Tune: func(wk *env.Workers) { wk.Background = sourceLoads{bg} }}}, nil
	}

	modelDesc := fmt.Sprintf("%s per-worker (regime %s, background: the recorded telemetry minus the served jobs' modelled load, %.0f s steps; jitter %v, mitigation %s)",
		model, m.Regime, step, !m.NoJitter, m.Mitigation)
	fmt.Fprintf(stdout, "log        %s (%d decision-log files, %d telemetry files, %d samples", f.dir, sl.files, sl.telFiles, sl.samples)
	if unknown > 0 {
		fmt.Fprintf(stdout, ", %d of nodes the cluster lacks", unknown)
	}
	fmt.Fprintln(stdout, ")")
	for _, p := range sl.partial {
		fmt.Fprintf(stdout, "skipped    %s (unsealed)\n", p)
	}
	fmt.Fprintf(stdout, "workload   %d of %d logged jobs replayed", len(w.Jobs), len(sl.jobs))
	if sl.fromOutcomes > 0 {
		fmt.Fprintf(stdout, ", %d with run times from their outcomes (no expected run time logged)", sl.fromOutcomes)
	}
	if len(sl.dropped) > 0 {
		var parts []string
		for k, v := range sl.dropped {
			parts = append(parts, fmt.Sprintf("%d %s", v, k))
		}
		slices.Sort(parts)
		fmt.Fprintf(stdout, "; left out: %s", strings.Join(parts, ", "))
	}
	fmt.Fprintf(stdout, "\ncluster    %s\nmodel      %s (profiles: %s)\nserved     %s (%d jobs placed; %s)\n", clusterDesc, modelDesc, profSrc, sl.served, sl.sources[sl.served], servedMode(f.stateless))
	fmt.Fprintf(stdout, "policies   %s\nseeds      %v\n", strings.Join(contenderNames(contenders), ", "), seeds)

	dir, err := evalOutDir(f.out, "eval-log-"+filepath.Base(filepath.Clean(f.dir)))
	if err != nil {
		return err
	}
	res, _, err := compareWithProgress(compare.Config{Policies: contenders, Seeds: seeds, Options: options, Parallel: f.parallel}, f.quiet, stderr)
	if err != nil {
		return err
	}
	// The logged run, once per seed so that it pairs with every replay.
	logged := sl.servedRun(w)
	runs := make([]compare.Run, len(seeds))
	for i, s := range seeds {
		runs[i] = logged
		runs[i].Seed = s
	}
	res.Policies = append([]compare.PolicyResult{servedLogResult(runs)}, res.Policies...)

	fmt.Fprintln(stdout)
	if err := compare.WriteTable(stdout, res); err != nil {
		return err
	}
	replay := res.Policies[1].AvgJCT.Mean
	diff := replay/logged.Summary.AvgJCT - 1
	fmt.Fprintf(stdout, "\n%s: the one logged run (repeated for each seed so that it pairs with the replays; no TTA or stragglers in a log)\n", ServedLogName)
	fmt.Fprintf(stdout, "match      served %s: avg JCT %.2f s logged, %.2f s replayed (%+.3f%%)\n", sl.served, logged.Summary.AvgJCT, replay, 100*diff)

	meta := compare.Meta{Workload: "served log " + f.dir, Model: modelDesc, Cluster: clusterDesc, Profiles: profSrc, Command: "drover eval " + strings.Join(f.args, " ")}
	title := fmt.Sprintf("%s, %d seeds", filepath.Base(filepath.Clean(f.dir)), len(seeds))
	return writeEvalFiles(stdout, dir, res, meta, title, f.bins)
}

func servedMode(stateless bool) string {
	if stateless {
		return "replayed as a stateless server answers"
	}
	return "replayed as a stateful server answers, drover serve's default"
}

func contenderNames(cs []compare.Policy) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// servedLogResult is the comparison row of the logged run.
func servedLogResult(runs []compare.Run) compare.PolicyResult {
	col := func(f func(env.Summary) float64) compare.Estimate {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r.Summary)
		}
		e := compare.MeanCI(xs, 0.95)
		if math.IsNaN(xs[0]) {
			e.Mean = math.NaN()
		}
		return e
	}
	nan := compare.Estimate{Mean: math.NaN(), HalfWidth: math.NaN()}
	return compare.PolicyResult{Name: ServedLogName, Runs: runs,
		AvgJCT:        col(func(s env.Summary) float64 { return s.AvgJCT }),
		P99JCT:        col(func(s env.Summary) float64 { return s.P99JCT }),
		AvgTTA:        nan,
		Stragglers:    nan,
		StragglerFrac: nan,
		GPUHours:      col(func(s env.Summary) float64 { return s.GPUHours }),
		Finished:      col(func(s env.Summary) float64 { return float64(s.Finished) }),
		DecisionTime:  nan,
		CallTime:      nan,
	}
}

// origin is the wall-clock time a log without a manifest replays from:
// the earliest job submission (or first decision) or telemetry sample,
// truncated to the second.
func (s *servedLog) origin(tl *telemlog.Log) time.Time {
	var t time.Time
	for _, j := range s.jobs {
		if t.IsZero() || j.submitted.Before(t) {
			t = j.submitted
		}
	}
	if len(tl.Samples) > 0 && (t.IsZero() || tl.Samples[0].Time.Before(t)) {
		t = tl.Samples[0].Time
	}
	return t.Truncate(time.Second)
}

// nodeIDs returns the node ids the log names (the placements' workers and
// the telemetry's nodes), distinct, in natural order (node-2 before
// node-10).
func (s *servedLog) nodeIDs(tl *telemlog.Log) []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, j := range s.jobs {
		for _, id := range j.workers {
			add(id)
		}
	}
	for _, id := range tl.Nodes() {
		add(id)
	}
	slices.SortFunc(ids, naturalCompare)
	return ids
}

// nameNodes makes c's node ids (remote.NodeID) cover ids: when some id is
// not one of c's, c's first len(ids) nodes are renamed ids, in order, and
// the count is returned. More ids than nodes is an error.
func nameNodes(c *env.Cluster, ids []string) (int, error) {
	have := map[string]bool{}
	for i := range c.Nodes {
		have[remote.NodeID(c, i)] = true
	}
	missing := false
	for _, id := range ids {
		missing = missing || !have[id]
	}
	if !missing {
		return 0, nil
	}
	if len(ids) > len(c.Nodes) {
		return 0, fmt.Errorf("the log names %d nodes, the cluster has %d", len(ids), len(c.Nodes))
	}
	for i, id := range ids {
		c.Nodes[i].Name = id
	}
	return len(ids), nil
}

// naturalCompare orders strings with their digit runs compared as numbers.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digits returns the length of s's leading run of ASCII digits.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
