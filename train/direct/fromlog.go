package direct

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies/compare"
	pdirect "github.com/drover-sched/drover/policies/direct"
)

// LogSummary says what FromLog made of a decision log: what it read, the
// jobs it replays and how their run times were found, and how many jobs
// it left out and why.
type LogSummary struct {
	// Dir is the log directory; Files the sealed files read, in order;
	// Partial the unsealed files skipped (a live writer's, or a crash's).
	Dir     string
	Files   []string
	Partial []string
	// Decisions and Outcomes count the records read; Jobs the distinct job
	// ids with at least one decision.
	Decisions, Outcomes, Jobs int
	// Replayed counts the jobs in the replay. Of them, FromOutcomes took
	// their run time from the outcomes (finished minus first started),
	// FromJCT from the reported JCT, FromExpected from the request's
	// expected run time (job_expected_duration_s).
	Replayed                            int
	FromOutcomes, FromJCT, FromExpected int
	// Jobs left out: NoRunTime had no run time at all (no outcomes, no
	// expected run time); UnknownModel asked for a model without a profile
	// (or none was logged: files written before the job columns), and
	// UnknownModels counts them by model name ("" for unlogged); NoGPUs
	// had neither a logged GPU count nor a placed worker; TooLarge asked
	// for more GPUs than the cluster has.
	NoRunTime, UnknownModel, NoGPUs, TooLarge int
	UnknownModels                             map[string]int
	// Dropped lists the jobs left out, in the order of their first
	// decision.
	Dropped []DroppedJob
	// Orphans counts outcomes of jobs the log has no decision for.
	Orphans int
	// Span is the seconds from the first replayed arrival to the last.
	Span float64
	// Workload holds the replayed jobs, by arrival: the workload a replay
	// of the log runs (trace.Options.Workload), e.g. to judge a policy on
	// it (HeldOut).
	Workload *datasets.Workload
}

// String summarises the log in two lines: what was replayed, and what was
// left out.
func (s LogSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d decisions, %d outcomes of %d jobs in %d files: %d jobs replayed over %.0f s (run time from outcomes %d, reported JCT %d, expected %d)",
		s.Decisions, s.Outcomes, s.Jobs, len(s.Files), s.Replayed, s.Span, s.FromOutcomes, s.FromJCT, s.FromExpected)
	fmt.Fprintf(&b, "\nleft out: %d without a run time, %d of models without a profile", s.NoRunTime, s.UnknownModel)
	if len(s.UnknownModels) > 0 {
		names := make([]string, 0, len(s.UnknownModels))
		for m, n := range s.UnknownModels {
			if m == "" {
				m = "unlogged"
			}
			names = append(names, fmt.Sprintf("%s %d", m, n))
		}
		slices.Sort(names)
		fmt.Fprintf(&b, " (%s)", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, ", %d without a GPU count, %d larger than the cluster; %d outcomes without a decision; %d unsealed files skipped",
		s.NoGPUs, s.TooLarge, s.Orphans, len(s.Partial))
	return b.String()
}

// Reasons a job of the log is left out of the replay (DroppedJob.Reason).
const (
	// DropUnknownModel: the job's model has no profile, or none was logged.
	DropUnknownModel = "unknown model"
	// DropNoGPUs: neither a GPU count nor a placed worker was logged.
	DropNoGPUs = "no GPU count"
	// DropTooLarge: the job asks for more GPUs than the cluster has.
	DropTooLarge = "larger than the cluster"
	// DropNoRunTime: no outcome and no expected run time gives its run time.
	DropNoRunTime = "no run time"
)

// DroppedJob is a job of the log left out of the replay: its id, what the
// log says of its model and GPUs, and why.
type DroppedJob struct {
	// JobID is the job's id.
	JobID string
	// Model is its logged model ("" when none was logged) and GPUs its
	// GPU count (job_gpus, else its first placement's workers; 0 when
	// neither was logged).
	Model string
	GPUs  int
	// Reason is one of the Drop* reasons.
	Reason string
}

// ErrNoArrivals is returned by FromLog for a log none of whose jobs can be
// replayed.
var ErrNoArrivals = errors.New("direct: no replayable arrival in the decision log")

// logJob gathers what a log says about one job.
type logJob struct {
	id     string
	order  int       // index of its first decision among the decisions
	first  time.Time // its first decision: the arrival
	model  string
	gpus   int // the logged GPU count, else the first placement's workers
	placed int // workers of the first decision that placed it
	arch   string
	ps     int // parameter servers of the first decision with any
	batch  int
	expect float64

	run compare.JobRun // its outcomes: first started, last finished
}

// FromLog rebuilds the workload a deployment served from its decision log
// (datasets/declog, every sealed file of dir) and returns a training Setting
// that replays it on cluster each episode, with what it read. Each job's
// first decision is its arrival (the time since the first replayed
// arrival), with the GPUs it asked for (job_gpus, or its first placement's
// workers in logs written before the job columns), its model, architecture
// and batch size; its run time is the span from its first started outcome
// to its last finished one, else its reported JCT, else the run time the
// request expected. Jobs without a run time, of models without a profile
// in profiles (nil: the built-in profiles), or larger than the cluster are
// left out and counted (each under the first reason that applies, in the
// order model, GPU count, size, run time). Every episode replays the same jobs; the
// background load and the stragglers' jitter vary with the episode's seed,
// in the regime trace.AutoRegime picks for cluster (dedicated for a
// homogeneous cluster).
//
// What the log lacks is not learned from: the node loads each decision
// saw are not logged, so the episodes' loads are the simulator's.
//
// An unreadable file is an error naming it; a log without sealed files, or
// with no replayable job, is an error naming the directory and its files
// (ErrNoArrivals, with the counts of what was left out).
func FromLog(dir string, cluster env.Cluster, profiles map[string]env.Profile) (Setting, LogSummary, error) {
	sum := LogSummary{Dir: dir, UnknownModels: map[string]int{}}
	if profiles == nil {
		p, _, err := trace.Profiles("builtin", "")
		if err != nil {
			return Setting{}, sum, err
		}
		profiles = p
	}
	if len(cluster.Nodes) == 0 {
		return Setting{}, sum, fmt.Errorf("direct: decision log %s: empty cluster", dir)
	}
	log, err := declog.ReadDir(dir)
	if err != nil {
		return Setting{}, sum, fmt.Errorf("direct: decision log %s: %w", dir, err)
	}
	sum.Files, sum.Partial = log.Files, log.Partial
	if len(log.Files) == 0 {
		extra := ""
		if len(log.Partial) > 0 {
			extra = fmt.Sprintf(" (%d unsealed: %s)", len(log.Partial), filepath.Base(log.Partial[0]))
		}
		return Setting{}, sum, fmt.Errorf("direct: decision log %s: no sealed log file (%sNNNNNN%s)%s", dir, declog.FilePrefix, declog.FileSuffix, extra)
	}

	jobs := map[string]*logJob{}
	var order []*logJob
	for i := range log.Records {
		r := &log.Records[i]
		switch r.Kind {
		case declog.KindDecision:
			sum.Decisions++
			d := &r.Decision
			j := jobs[d.JobID]
			if j == nil {
				j = &logJob{id: d.JobID, order: len(order), first: d.Time}
				jobs[d.JobID] = j
				order = append(order, j)
			}
			j.model = cmp.Or(j.model, d.JobModel)
			j.gpus = cmp.Or(j.gpus, d.JobGPUs)
			if j.placed == 0 {
				j.placed = len(d.Workers)
			}
			j.arch = cmp.Or(j.arch, d.JobArch)
			if j.ps == 0 {
				j.ps = len(d.PS)
			}
			j.batch = cmp.Or(j.batch, d.JobBatchSize)
			j.expect = cmp.Or(j.expect, d.JobExpectedDuration)
		case declog.KindOutcome:
			sum.Outcomes++
			j := jobs[r.Outcome.JobID]
			if j == nil {
				sum.Orphans++
				continue
			}
			j.run.Add(&r.Outcome)
		}
	}
	sum.Jobs = len(order)

	total := cluster.TotalGPUs()
	var kept []*logJob
	var runs []float64
	for _, j := range order {
		gpus := cmp.Or(j.gpus, j.placed)
		run, spanned := j.run.Span()
		var from *int
		switch {
		case spanned:
			from = &sum.FromOutcomes
		case j.run.JCT > 0:
			run, from = j.run.JCT, &sum.FromJCT
		case j.expect > 0:
			run, from = j.expect, &sum.FromExpected
		}
		reason := ""
		switch {
		case profiles[j.model] == nil:
			sum.UnknownModel++
			sum.UnknownModels[j.model]++
			reason = DropUnknownModel
		case gpus == 0:
			sum.NoGPUs++
			reason = DropNoGPUs
		case gpus > total:
			sum.TooLarge++
			reason = DropTooLarge
		case from == nil:
			sum.NoRunTime++
			reason = DropNoRunTime
		default:
			*from++
			kept = append(kept, j)
			runs = append(runs, run)
			continue
		}
		sum.Dropped = append(sum.Dropped, DroppedJob{JobID: j.id, Model: j.model, GPUs: gpus, Reason: reason})
	}
	if len(kept) == 0 {
		return Setting{}, sum, fmt.Errorf("%w %s (%s): %d jobs, %d of models without a profile, %d without a GPU count, %d larger than the cluster's %d GPUs, %d without a run time",
			ErrNoArrivals, dir, filesNamed(log.Files), sum.Jobs, sum.UnknownModel, sum.NoGPUs, sum.TooLarge, total, sum.NoRunTime)
	}

	t0 := kept[0].first
	for _, j := range kept {
		if j.first.Before(t0) {
			t0 = j.first
		}
	}
	w := &datasets.Workload{Name: "log " + dir}
	for k, j := range kept {
		job := datasets.Job{Name: j.id, Submit: j.first.Sub(t0).Seconds(), GPUs: cmp.Or(j.gpus, j.placed), Duration: runs[k],
			Model: j.model, BatchSize: j.batch}
		if j.arch == "ps" {
			job.Arch, job.PSShards = datasets.ArchPS, max(1, j.ps)
		}
		w.Jobs = append(w.Jobs, job)
	}
	slices.SortStableFunc(w.Jobs, func(a, b datasets.Job) int { return cmp.Compare(a.Submit, b.Submit) })
	sum.Replayed = len(w.Jobs)
	sum.Span = w.Jobs[len(w.Jobs)-1].Submit
	sum.Workload = w
	specs := trace.Specs(w)
	s := Setting{
		Name:     fmt.Sprintf("log %s (%d jobs)", dir, len(specs)),
		Cluster:  cluster,
		NewJobs:  func(uint64) []env.JobSpec { return slices.Clone(specs) },
		Regime:   trace.AutoRegime(w.Format, &cluster),
		Profiles: profiles,
	}
	return s, sum, nil
}

// HeldOut returns the replay of the log's jobs on s's cluster as a
// workload to judge policies on (Judge), named name: the same arrivals as
// the training episodes, so a judgement on it is on the served workload
// under other seeds (background and jitter), not on unseen jobs.
func (s LogSummary) HeldOut(name string, set Setting) HeldOut {
	c := set.Cluster
	c.Nodes = slices.Clone(set.Cluster.Nodes)
	return HeldOut{Name: name, Workload: s.Workload, Cluster: c, Profiles: set.Profiles, Regime: set.Regime}
}

// filesNamed names a log's files for an error: the file, or the first and
// the last of several.
func filesNamed(files []string) string {
	switch len(files) {
	case 0:
		return "no files"
	case 1:
		return files[0]
	}
	return fmt.Sprintf("%d files, %s to %s", len(files), filepath.Base(files[0]), filepath.Base(files[len(files)-1]))
}

// InitFrom makes c fine-tune the direct checkpoint (m, nets): training
// starts from its actor (Init), with its groups, hold and hidden widths.
// It refuses a checkpoint that is not a direct policy, one of another
// policy than c.Name, one whose encoding Config cannot reproduce from
// Groups and Hold (other hold limit, refresh or sync strategies), and one
// without a tanh actor (a DQN checkpoint's Q-network).
func (c *Config) InitFrom(m checkpoints.Meta, nets map[string]*nn.MLP) error {
	if !pdirect.IsDirect(m) {
		return fmt.Errorf("direct: init checkpoint of %s/%s is not a direct policy", m.Env, m.Algo)
	}
	if m.Env != c.Name {
		return fmt.Errorf("direct: init checkpoint is of %s, training %s", m.Env, c.Name)
	}
	got, err := pdirect.ConfigOf(m)
	if err != nil {
		return err
	}
	want, err := pdirect.Config(c.Name, got.Groups, got.Hold)
	if err != nil {
		return err
	}
	hg, hw := map[string]float64{}, map[string]float64{}
	if err := pdirect.PutConfig(hg, got); err != nil {
		return err
	}
	if err := pdirect.PutConfig(hw, want); err != nil {
		return err
	}
	for k, v := range hw {
		if hg[k] != v {
			return fmt.Errorf("direct: init checkpoint's encoding has %s = %v, training would use %v", k, hg[k], v)
		}
	}
	actor := nets["actor"]
	if actor == nil || m.Activation != "tanh" {
		return fmt.Errorf("direct: init checkpoint (%s, %s) has no tanh actor to start from (a DQN checkpoint's Q-network cannot)", m.Algo, m.Activation)
	}
	c.Groups, c.Hold, c.Hidden, c.Init = got.Groups, got.Hold, slices.Clone(m.Hidden), actor
	return nil
}
