package logreplay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
	"github.com/drover-sched/drover/policies/compare"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/remote"
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

// ServedLog is a served run rebuilt from its decision log: its jobs, in
// arrival order, and what the replay made of them.
type ServedLog struct {
	jobs []*loggedJob // in arrival order
	// Dropped counts the jobs left out of the replay, by reason.
	Dropped map[string]int
	// FromOutcomes counts the replayed jobs whose run time came from their
	// Started and Finished outcomes (no expected run time logged).
	FromOutcomes int
	// Sources counts the jobs each policy placed. Segments are the runs of
	// decisions with one policy in charge, in time order (one for a server
	// that never switched; a heuristic's, then a learned policy's, for a
	// run whose gate switched), and Served says who served: the one
	// policy ("heuristic:strn"), or the segments' in turn
	// ("heuristic:sas, then learned@v1").
	Sources  map[string]int
	Segments []Segment
	Served   string
	// Files is the count of sealed decision-log files read, Partial the
	// unsealed ones, and Tail the records read from their write-ahead
	// logs (declog.ReadDirTail: a live server's current file); Samples
	// and TelemetryFiles are the telemetry's.
	Files          int
	Partial        []string
	Tail           int
	Samples        int
	TelemetryFiles int

	decisions []loggedDecision // in time order
	byJob     map[string][]int // indices into decisions
	heuristic string           // the server's heuristic ("sas")
}

// Jobs is the count of jobs the log holds.
func (s *ServedLog) Jobs() int { return len(s.jobs) }

// ReadServedLog reads the decision log of dir and gathers each job.
func ReadServedLog(dir string) (*ServedLog, error) {
	log, err := declog.ReadDirTail(dir)
	if err != nil {
		return nil, err
	}
	if len(log.Records) == 0 {
		return nil, NoRecordsError(dir, log.Partial)
	}
	byID := map[string]*loggedJob{}
	var order []*loggedJob
	var decs []loggedDecision
	shadows := map[string]int{} // the learned answers' shadow heuristics
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
			decs = append(decs, loggedDecision{job: d.JobID, at: d.Time, source: d.Source, fallback: d.Fallback, charge: d.Shadow})
			if strings.HasPrefix(d.Source, learnedPrefix) && strings.HasPrefix(d.Shadow, heuristicPrefix) {
				shadows[d.Shadow]++
			}
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
	s := &ServedLog{Dropped: map[string]int{}, Sources: map[string]int{}, Files: len(log.Files), Partial: log.Partial, Tail: log.Tail}
	for _, j := range order {
		if j.submitted.IsZero() {
			j.submitted = j.first
		}
		s.jobs = append(s.jobs, j)
		if j.source != "" {
			s.Sources[j.source]++
		}
	}
	slices.SortStableFunc(s.jobs, func(a, b *loggedJob) int { return a.submitted.Compare(b.submitted) })
	s.setDecisions(decs, byID, shadows)
	return s, nil
}

// setDecisions orders the log's decisions by time, finds who was in
// charge of each, and the segments.
func (s *ServedLog) setDecisions(decs []loggedDecision, jobs map[string]*loggedJob, shadows map[string]int) {
	slices.SortStableFunc(decs, func(a, b loggedDecision) int { return a.at.Compare(b.at) })
	s.byJob = map[string][]int{}
	placed := map[int]bool{} // the decision that placed each job
	prev := ""
	for i := range decs {
		d := &decs[i]
		d.charge = inCharge(d.source, d.fallback, d.charge, prev)
		prev = d.charge
		s.byJob[d.job] = append(s.byJob[d.job], i)
	}
	for id, is := range s.byJob {
		if j := jobs[id]; j != nil && j.source != "" {
			for _, i := range is {
				if decs[i].source == j.source && decs[i].fallback != serve.FallbackNoRoom {
					placed[i] = true // its first decision by the placing source
					break
				}
			}
		}
	}
	s.decisions, s.heuristic = decs, heuristicOf(decs, shadows)
	s.Segments = segment(decs, placed)
	s.Served = describeServed(s.Segments)
}

// NoRecordsError is the error of a log directory without a record: when
// it has unsealed files, it says that drover serve seals its current file
// every -log-seal (a minute by default) and on shutdown, and that the
// unsealed files' records are read once their write-ahead log has them.
func NoRecordsError(dir string, partial []string) error {
	if len(partial) == 0 {
		return fmt.Errorf("no records in %s", dir)
	}
	return fmt.Errorf("no records in %s yet: no sealed file, and its unsealed files (%s) hold none yet; drover serve seals the current file every -log-seal (1m by default) and when it shuts down, and its records reach the write-ahead log within milliseconds",
		dir, strings.Join(partial, ", "))
}

// Workload turns the logged jobs into the replay's workload: each job at
// its submission (job_submit_unix_nanos, else its first decision) minus
// epoch, with its logged model, GPUs, architecture and batch size (a
// parameter-server job's shards: the placement's parameter servers), and as
// run time the run time the request expected (job_expected_duration_s:
// what the simulator derives the job's work from, so that the replay runs
// the served jobs) or, when none was logged, the span from its Started to
// its Finished outcome (which holds the served run's straggling, so a
// replay of it counts that twice), else its reported JCT. Jobs without a
// model profile, a GPU count or a run time, or larger than the cluster,
// are left out and counted in s.Dropped.
func (s *ServedLog) Workload(epoch time.Time, profiles map[string]env.Profile, gpus int) *datasets.Workload {
	w := &datasets.Workload{Name: "served log"}
	for _, j := range s.jobs {
		d := datasets.Job{Name: j.id, Submit: max(0, j.submitted.Sub(epoch).Seconds()), GPUs: j.gpus, Model: j.model, BatchSize: j.batch, Duration: j.expect}
		if span, ok := j.run.Span(); !(d.Duration > 0) && ok {
			d.Duration = span
			s.FromOutcomes++
		}
		if !(d.Duration > 0) && j.run.JCT > 0 {
			d.Duration = j.run.JCT
		}
		switch _, ok := profiles[j.model]; {
		case !ok:
			s.Dropped["unknown model"]++
			continue
		case j.gpus <= 0:
			s.Dropped["no GPU count"]++
			continue
		case j.gpus > gpus:
			s.Dropped["larger than the cluster"]++
			continue
		case !(d.Duration > 0):
			s.Dropped["no run time"]++
			continue
		}
		if j.arch == "ps" {
			d.Arch, d.PSShards = datasets.ArchPS, j.ps
		}
		w.Jobs = append(w.Jobs, d)
	}
	return w
}

// ServedRun is the logged run as a comparison run: the logged JCTs of the
// replayed jobs that finished, in arrival order, and the summary they give
// (average and 99th percentile JCT, finished jobs, GPU-hours from the
// placements' Started-Finished spans; no TTA or stragglers: the log has
// none).
func (s *ServedLog) ServedRun(w *datasets.Workload) compare.Run {
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
// Finished outcomes, the duty cycle unknown). Samples of
// nodes c does not have are counted and left out.
func (s *ServedLog) recordedBackground(tl *telemlog.Log, c *env.Cluster, epoch time.Time, step float64) (*background.Recorded, int, error) {
	s.Samples, s.TelemetryFiles = len(tl.Samples), len(tl.Files)
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
		// The log does not say how much of its time a job communicates
		// (its exchange's share of an iteration, under every strategy).
		o := background.Occupant{Start: j.run.Started.Sub(epoch).Seconds(), End: math.Inf(1), Duty: math.NaN()}
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

// Place implements pb.SchedulerClient.
func (c coreClient) Place(ctx context.Context, req *pb.PlaceRequest, _ ...grpc.CallOption) (*pb.PlaceResponse, error) {
	return c.k.Place(ctx, req)
}

// Report implements pb.SchedulerClient.
func (c coreClient) Report(ctx context.Context, req *pb.ReportRequest, _ ...grpc.CallOption) (*pb.ReportResponse, error) {
	return c.k.Report(ctx, req)
}

// Status implements pb.SchedulerClient.
func (c coreClient) Status(context.Context, *pb.StatusRequest, ...grpc.CallOption) (*pb.StatusResponse, error) {
	return c.k.Status(), nil
}

// Route implements pb.SchedulerClient.
func (c coreClient) Route(ctx context.Context, req *pb.RouteRequest, _ ...grpc.CallOption) (*pb.RouteResponse, error) {
	return c.k.Route(ctx, req)
}

// RouteMM implements pb.SchedulerClient.
func (c coreClient) RouteMM(ctx context.Context, req *pb.RouteMMRequest, _ ...grpc.CallOption) (*pb.RouteMMResponse, error) {
	return c.k.RouteMM(ctx, req)
}

// Scale implements pb.SchedulerClient.
func (c coreClient) Scale(ctx context.Context, req *pb.ScaleRequest, _ ...grpc.CallOption) (*pb.ScaleResponse, error) {
	return c.k.Scale(ctx, req)
}

// Config is a replay of a served log: drover eval --log's flags.
type Config struct {
	// Dir is the log directory (--log): the server's decision and
	// telemetry logs and, for a run drover sim --remote --record drove,
	// its manifest (ManifestFile) and simulated telemetry (TelemetryDir).
	Dir string
	// Contenders are the policies replayed beside the served one
	// (--policies).
	Contenders []compare.Policy
	// Seeds are the replays' seeds (--seeds; nil: the recorded run's).
	Seeds []uint64
	// Stateless replays the served policy as a stateless server answers
	// (default: stateful, drover serve's default).
	Stateless bool
	// Checkpoints is the checkpoint directory the server read (drover
	// serve -checkpoints; --served-checkpoints): one checkpoint, served
	// as v1, or numbered versions. A log some of whose decisions a
	// learned policy answered ("learned@v1") needs it: the replay asks
	// each request of the policy that answered it in the log.
	Checkpoints string
	// Loader reads a view-level checkpoint (strn-rl, sas-rl) of
	// Checkpoints (nil: policies/direct's Load, as drover serve's).
	Loader serve.PolicyLoader
	// Live describes the run of a log without a manifest (a live
	// cluster's): eval's cluster and model flags (see NameNodes and
	// ServedLog.Origin).
	Live Manifest
}

// Replay is a served run rebuilt for replay: the workload and cluster
// (from the manifest, or Config.Live), the background from the recorded
// telemetry minus the served jobs' modelled load, and the policies to
// replay it under, the served one first. Run it with compare.Run over
// Policies, Seeds and Options, then AddLogged puts the logged run's row
// in front of the result.
type Replay struct {
	// Log is what the decision and telemetry logs held.
	Log *ServedLog
	// Manifest is the run's, resolved (Config.Live's for a live log, with
	// its epoch from the logs).
	Manifest Manifest
	// Workload is the replayed jobs.
	Workload *datasets.Workload
	// ClusterDesc, ModelDesc and ProfilesSrc describe the replay.
	ClusterDesc, ModelDesc, ProfilesSrc string
	// UnknownSamples counts the telemetry samples of nodes the cluster
	// lacks (left out).
	UnknownSamples int
	// Versions are the learned versions that answered decisions of the
	// log, found in Config.Checkpoints (none: the heuristic served alone).
	Versions []ServedVersion
	// Policies are the served policy's replay (as the server answers it:
	// each request by the policy that answered it in the log) and
	// Config.Contenders; Seeds the seeds.
	Policies []compare.Policy
	Seeds    []uint64
	// Options are each seed's simulation options.
	Options func(seed uint64) (trace.Options, error)
}

// Prepare rebuilds the served run of c.Dir for replay. Its errors name
// drover eval's flags.
func Prepare(c Config) (*Replay, error) {
	m, err := ReadManifest(c.Dir)
	live := errors.Is(err, fs.ErrNotExist)
	switch {
	case live:
		m = &c.Live
	case err != nil:
		return nil, fmt.Errorf("--log %s: %w", c.Dir, err)
	}
	sl, err := ReadServedLog(c.Dir)
	if err != nil {
		return nil, err
	}
	r := &Replay{Log: sl}
	if sl.heuristic == "" {
		return nil, fmt.Errorf("--log %s: no decision names the server's heuristic (heuristic:NAME): served %s", c.Dir, sl.Served)
	}
	if err := r.servedVersions(c, sl.heuristic); err != nil {
		return nil, err
	}
	telDir := c.Dir
	if m.TelemetryDir != "" {
		telDir = filepath.Join(c.Dir, m.TelemetryDir)
	}
	tl, err := telemlog.ReadDir(telDir)
	if err != nil {
		return nil, err
	}
	if live {
		m.Epoch = sl.Origin(tl)
	}
	if m.Model != trace.ModelDrover || !m.Stragglers {
		return nil, fmt.Errorf("--log %s: the run used the %s model without the per-worker model; re-scoring replays the recorded telemetry, which only the per-worker model reads", c.Dir, m.Model)
	}
	cluster, err := r.cluster(c, m, tl, live)
	if err != nil {
		return nil, err
	}
	if err := r.build(c, m, tl, cluster); err != nil {
		return nil, err
	}
	return r, nil
}

// cluster loads the run's cluster; a live log's nodes take the log's
// node ids.
func (r *Replay) cluster(c Config, m *Manifest, tl *telemlog.Log, live bool) (env.Cluster, error) {
	cluster, desc, err := trace.LoadCluster(m.Cluster, m.NodeCap, m.GPUsPerNode)
	if err != nil {
		return cluster, err
	}
	if live {
		renamed, err := NameNodes(&cluster, r.Log.NodeIDs(tl))
		if err != nil {
			return cluster, fmt.Errorf("--log %s (no %s: the cluster comes from --cluster, --nodes and --gpus-per-node): %w", c.Dir, ManifestFile, err)
		}
		desc += " (from the flags: the log has no " + ManifestFile
		if renamed > 0 {
			desc += fmt.Sprintf("; the first %d nodes take the log's node ids", renamed)
		}
		desc += ")"
	}
	if m.Regime == "" || m.Regime == trace.RegimeAuto {
		m.Regime = trace.AutoRegime("", &cluster)
	}
	r.ClusterDesc = desc
	return cluster, nil
}

// build makes the workload, the background, the policies and the
// options of the replay.
func (r *Replay) build(c Config, m *Manifest, tl *telemlog.Log, cluster env.Cluster) error {
	profiles, profSrc, err := trace.Profiles(m.Profiles, m.Workload)
	if err != nil {
		return err
	}
	gpus := 0
	for _, n := range cluster.Nodes {
		gpus += n.GPUs
	}
	w := r.Log.Workload(m.Epoch, profiles, gpus)
	if len(w.Jobs) == 0 {
		return fmt.Errorf("--log %s: no replayable job", c.Dir)
	}
	step := m.TelemetryStep
	if !(step > 0) {
		step = env.DefaultWorkerPeriod
	}
	bg, unknown, err := r.Log.recordedBackground(tl, &cluster, m.Epoch, step)
	if err != nil {
		return err
	}
	seeds := c.Seeds
	if seeds == nil {
		seeds = []uint64{m.Seed}
	}
	served := r.servedContender(c, r.Log.heuristic, m.Epoch, profiles)
	st := trace.Stragglers{Background: m.Background, Regime: m.Regime}
	ref, err := st.NewReference(len(cluster.Nodes))
	if err != nil {
		return err
	}
	r.Options = func(seed uint64) (trace.Options, error) {
		c := cluster
		c.Nodes = slices.Clone(cluster.Nodes)
		return trace.Options{Workload: w, Model: m.Model, Profiles: profiles, Cluster: &c, Interval: m.Interval, RestartDelay: m.RestartDelay,
			Stragglers: &trace.Stragglers{Background: m.Background, Load: m.Load, NoJitter: m.NoJitter, Seed: seed, Threshold: m.Threshold,
				Mitigation: m.Mitigation, Regime: m.Regime, Reference: ref,
				Tune: func(wk *env.Workers) { wk.Background = sourceLoads{bg} }}}, nil
	}
	r.Manifest, r.Workload, r.ProfilesSrc, r.UnknownSamples = *m, w, profSrc, unknown
	r.Policies, r.Seeds = append([]compare.Policy{served}, c.Contenders...), seeds
	r.ModelDesc = fmt.Sprintf("%s per-worker (regime %s, background: the recorded telemetry minus the served jobs' modelled load, %.0f s steps; jitter %v, mitigation %s)",
		m.Model, m.Regime, step, !m.NoJitter, m.Mitigation)
	return nil
}

// AddLogged puts the logged run's row (ServedLogName: the one logged
// run, repeated for each seed so that it pairs with every replay) in
// front of res, a comparison of r's Policies over r's Seeds, and returns
// the logged run.
func (r *Replay) AddLogged(res *compare.Result) compare.Run {
	logged := r.Log.ServedRun(r.Workload)
	runs := make([]compare.Run, len(r.Seeds))
	for i, s := range r.Seeds {
		runs[i] = logged
		runs[i].Seed = s
	}
	res.Policies = append([]compare.PolicyResult{servedLogResult(runs)}, res.Policies...)
	return logged
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

// Origin is the wall-clock time a log without a manifest replays from:
// the earliest job submission (or first decision) or telemetry sample,
// truncated to the second.
func (s *ServedLog) Origin(tl *telemlog.Log) time.Time {
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

// NodeIDs returns the node ids the log names (the placements' workers and
// the telemetry's nodes), distinct, in natural order (node-2 before
// node-10).
func (s *ServedLog) NodeIDs(tl *telemlog.Log) []string {
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

// NameNodes makes c's node ids (remote.NodeID) cover ids: when some id is
// not one of c's, c's first len(ids) nodes are renamed ids, in order, and
// the count is returned. More ids than nodes is an error.
func NameNodes(c *env.Cluster, ids []string) (int, error) {
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
