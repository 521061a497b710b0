package direct

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/compare"
	pdirect "github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/train"
)

// logStart is the server clock's time of the test log's first decision.
var logStart = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// at returns logStart plus s seconds.
func at(s float64) time.Time { return logStart.Add(time.Duration(s * float64(time.Second))) }

// logModels are built-in profile names, cycled over the test log's jobs.
var logModels = []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}

// writeTestLog writes a decision log to dir with the Writer, sealing a
// file every 25 records so that the log spans several files: 36 regular
// jobs and four odd ones (41 decisions), and the outcomes below. Job i of
// the regular ones (job-NN) arrives at 30i + i%3 s, asks for 1 + i%8 GPUs
// of model logModels[i%6], batch 32(i%4), expected run time 600 + 10i s;
// jobs with i%5 == 4 are PS jobs with two parameter servers. Its outcomes
// by i%4: 0, started 5 s after the decision and finished 100 + i s later
// (reported JCT 9999, not used); 1, finished with JCT 300 + i and no
// started report; 2, none (the expected run time); 3, started only (the
// expected run time). The odd jobs: "big" asks for 100 GPUs, "mystery" for
// the unknown model gpt-5, "lost" has no outcome and no expected run time,
// and "retry" is decided twice (unplaced at 1000 s, placed at 1100 s).
// An outcome of "ghost", which has no decision, ends the log.
func writeTestLog(t *testing.T, dir string) {
	t.Helper()
	w, err := declog.NewWriter(dir, declog.WithMaxRecords(25))
	if err != nil {
		t.Fatal(err)
	}
	var recs []declog.Record
	for i := range 36 {
		arrive := float64(30*i + i%3)
		gpus := 1 + i%8
		d := declog.Decision{Time: at(arrive), RequestID: fmt.Sprintf("req-%d", i), JobID: fmt.Sprintf("job-%02d", i), Source: "heuristic:strn",
			Sync: "bsp", JobModel: logModels[i%6], JobGPUs: gpus, JobArch: "ring", JobBatchSize: 32 * (i % 4), JobExpectedDuration: float64(600 + 10*i)}
		for k := range gpus {
			d.Workers = append(d.Workers, fmt.Sprintf("n%d", k))
		}
		if i%5 == 4 {
			d.JobArch, d.PS = "ps", []string{"n0", "n1"}
		}
		recs = append(recs, d.Record())
		o := declog.Outcome{RequestID: d.RequestID, JobID: d.JobID}
		switch i % 4 {
		case 0:
			o.Kind, o.Time = declog.Started, at(arrive+5)
			recs = append(recs, o.Record())
			o.Kind, o.Time, o.JCT = declog.Finished, at(arrive+5+float64(100+i)), 9999
			recs = append(recs, o.Record())
		case 1:
			o.Kind, o.Time, o.JCT = declog.Finished, at(arrive+400), float64(300+i)
			recs = append(recs, o.Record())
		case 3:
			o.Kind, o.Time = declog.Started, at(arrive+2)
			recs = append(recs, o.Record())
		}
	}
	odd := func(s float64, id, model string, gpus int, workers []string, expect float64) declog.Record {
		return declog.Decision{Time: at(s), RequestID: "req-" + id, JobID: id, Source: "heuristic:strn", Workers: workers,
			JobModel: model, JobGPUs: gpus, JobArch: "ring", JobExpectedDuration: expect}.Record()
	}
	recs = append(recs,
		odd(1080, "big", "bert", 100, nil, 60),
		odd(1085, "mystery", "gpt-5", 2, []string{"n0", "n1"}, 60),
		odd(1090, "lost", "cifar10", 2, []string{"n0", "n1"}, 0),
		odd(1000, "retry", "ncf", 4, nil, 900),
		odd(1100, "retry", "ncf", 4, []string{"n0", "n0", "n1", "n1"}, 900),
		declog.Outcome{Time: at(1200), JobID: "ghost", Kind: declog.Finished, JCT: 5}.Record(),
	)
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFromLog: the arrivals and run times FromLog rebuilds from a log
// written with the Writer, checked job by job against the records (worked
// from writeTestLog's comment), the left-out jobs with their reasons, and
// a setting that replays the same jobs every episode and trains.
func TestFromLog(t *testing.T) {
	dir := t.TempDir()
	writeTestLog(t, dir)
	set, sum, err := FromLog(dir, env.Homogeneous(16, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []datasets.Job
	for i := range 36 {
		j := datasets.Job{Name: fmt.Sprintf("job-%02d", i), Submit: float64(30*i + i%3), GPUs: 1 + i%8, Model: logModels[i%6], BatchSize: 32 * (i % 4)}
		switch i % 4 {
		case 0:
			j.Duration = float64(100 + i)
		case 1:
			j.Duration = float64(300 + i)
		default:
			j.Duration = float64(600 + 10*i)
		}
		if i%5 == 4 {
			j.Arch, j.PSShards = datasets.ArchPS, 2
		}
		want = append(want, j)
	}
	// retry arrives at 1000 s, between job-33 (990 s) and job-34 (1021 s).
	want = slices.Insert(want, 34, datasets.Job{Name: "retry", Submit: 1000, GPUs: 4, Model: "ncf", Duration: 900})
	if diff := cmp.Diff(want, sum.Workload.Jobs); diff != "" {
		t.Errorf("replayed jobs (-want,+got):\n%s", diff)
	}
	wantDropped := []DroppedJob{
		{JobID: "big", Model: "bert", GPUs: 100, Reason: DropTooLarge},
		{JobID: "mystery", Model: "gpt-5", GPUs: 2, Reason: DropUnknownModel},
		{JobID: "lost", Model: "cifar10", GPUs: 2, Reason: DropNoRunTime},
	}
	if diff := cmp.Diff(wantDropped, sum.Dropped); diff != "" {
		t.Errorf("dropped jobs (-want,+got):\n%s", diff)
	}
	// Records: 36 + 5 decisions; outcomes 9 x 2 (i%4 == 0) + 9 + 9 + the
	// ghost's = 37; 78 records in files of 25.
	got := [...]int{sum.Decisions, sum.Outcomes, sum.Jobs, sum.Replayed, sum.FromOutcomes, sum.FromJCT, sum.FromExpected,
		sum.NoRunTime, sum.UnknownModel, sum.NoGPUs, sum.TooLarge, sum.Orphans, len(sum.Files), len(sum.Partial)}
	if wantN := [...]int{41, 37, 40, 37, 9, 9, 19, 1, 1, 0, 1, 1, 4, 0}; got != wantN {
		t.Errorf("counts %v, want %v (decisions, outcomes, jobs, replayed, from outcomes, JCT, expected, no run time, unknown model, no GPUs, too large, orphans, files, partial)", got, wantN)
	}
	if sum.Span != 1052 || sum.UnknownModels["gpt-5"] != 1 {
		t.Errorf("span %v s (want 1052, job-35's arrival), unknown models %v", sum.Span, sum.UnknownModels)
	}
	if set.Regime != trace.RegimeDedicated || len(set.Cluster.Nodes) != 16 || set.Profiles["bert"] == nil {
		t.Errorf("setting: regime %s, %d nodes", set.Regime, len(set.Cluster.Nodes))
	}
	a, b := set.NewJobs(1), set.NewJobs(2)
	if len(a) != 37 || !slices.Equal(a, b) || a[4].Arch != env.PS || a[4].PSShards != 2 || a[0].Arch != env.Ring {
		t.Errorf("episodes' jobs differ between seeds, or wrong: %+v", a[:5])
	}
	a[0].GPUs = 99
	if set.NewJobs(1)[0].GPUs == 99 {
		t.Error("NewJobs returns a shared slice")
	}
	for _, want := range []string{"41 decisions, 37 outcomes of 40 jobs in 4 files: 37 jobs replayed", "gpt-5 1", "1 larger than the cluster"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	if _, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoBC, Seed: 1, Settings: []Setting{set}, TeacherEpisodes: 1, BCEpochs: 1, Hidden: []int{8}}); err != nil {
		t.Errorf("training on the log's setting: %v", err)
	}
}

// TestFromLogBeforeJobColumns reads a log written before the job columns
// (datasets/declog's testdata file: six jobs of two workers, no model): the
// GPU counts come from the workers, and every job is left out for its
// unknown model, counted, with an error naming the file.
func TestFromLogBeforeJobColumns(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "datasets", "declog", "testdata", "v1-before-job.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, declog.FileName(1))
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, sum, err := FromLog(dir, env.Homogeneous(4, 4), nil)
	if !errors.Is(err, ErrNoArrivals) || !strings.Contains(err.Error(), file) {
		t.Fatalf("error %v: want ErrNoArrivals naming %s", err, file)
	}
	var want []DroppedJob
	for i := range 6 {
		want = append(want, DroppedJob{JobID: fmt.Sprintf("job-%d", i), GPUs: 2, Reason: DropUnknownModel})
	}
	if diff := cmp.Diff(want, sum.Dropped); diff != "" {
		t.Errorf("dropped (-want,+got):\n%s", diff)
	}
	if sum.Decisions != 6 || sum.Outcomes != 6 || sum.UnknownModel != 6 || sum.UnknownModels[""] != 6 || sum.Replayed != 0 {
		t.Errorf("summary %+v", sum)
	}
}

// TestFromLogErrors: a missing directory, one without sealed files, a
// corrupt file (named), profiles for none of the log's models (the error
// names the files and says why each job was left out), and no cluster.
func TestFromLogErrors(t *testing.T) {
	good := t.TempDir()
	writeTestLog(t, good)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, declog.FileName(1)+declog.TmpSuffix), []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := t.TempDir()
	bad := filepath.Join(corrupt, declog.FileName(2))
	if err := os.WriteFile(bad, []byte("PAR1 not parquet PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	prof, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		dir      string
		cluster  env.Cluster
		profiles map[string]env.Profile
		want     []string
	}{
		{"missing", filepath.Join(empty, "nope"), env.Homogeneous(4, 4), nil, []string{"nope"}},
		{"no sealed file", empty, env.Homogeneous(4, 4), nil, []string{"no sealed log file", "1 unsealed"}},
		{"corrupt", corrupt, env.Homogeneous(4, 4), nil, []string{bad, "file"}},
		{"no profile", good, env.Homogeneous(4, 4), map[string]env.Profile{"resnet": prof["ncf"]}, []string{"no replayable arrival", "4 files, decisions-000001.parquet to decisions-000004.parquet", "40 jobs, 40 of models without a profile"}},
		{"no cluster", good, env.Cluster{}, nil, []string{"empty cluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := FromLog(tt.dir, tt.cluster, tt.profiles)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// judgeSelf judges a policy against itself on h over two seeds.
func judgeSelf(mk func() policies.Policy, h HeldOut) ([]Judgement, error) {
	p := func(uint64) (policies.Policy, error) { return mk(), nil }
	cs := []compare.Policy{{Name: "a", New: p}, {Name: "b", New: p}}
	return Judge(cs, []HeldOut{h}, []uint64{5, 6}, train.GateConfig{Seed: 1}, compare.Config{}, nil)
}

// TestFromLogJudge: the log's replay judges a policy against itself to a
// tie (the same policy on paired seeds: gain 0 exactly).
func TestFromLogJudge(t *testing.T) {
	dir := t.TempDir()
	writeTestLog(t, dir)
	set, sum, err := FromLog(dir, env.Homogeneous(16, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoBC, Seed: 1, Settings: []Setting{set}, TeacherEpisodes: 1, BCEpochs: 1, Hidden: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	mk, err := pdirect.FromCheckpoint(r.Meta, r.Nets)
	if err != nil {
		t.Fatal(err)
	}
	js, err := judgeSelf(mk, sum.HeldOut("log", set))
	if err != nil {
		t.Fatal(err)
	}
	v := js[0].Verdict
	if v.Episodes != 2 || v.MeanGain != 0 || math.IsNaN(js[0].Result.Policies[0].AvgTTA.Mean) {
		t.Errorf("verdict %v, TTA %v", v, js[0].Result.Policies[0].AvgTTA.Mean)
	}
}

// TestInitFrom: a BC checkpoint of strn-rl sets the config's groups, hold,
// hidden widths and initial actor; a checkpoint of the other policy, one
// whose hold limit Config cannot reproduce, and one without a tanh actor
// (a DQN checkpoint's shape) are refused, naming why.
func TestInitFrom(t *testing.T) {
	r, err := Train(Config{Name: pdirect.STRNRL, Algo: AlgoBC, Seed: 1, Settings: small(t), TeacherEpisodes: 1, BCEpochs: 1, Groups: 4, Hidden: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Name: pdirect.STRNRL}
	if err := c.InitFrom(r.Meta, r.Nets); err != nil {
		t.Fatal(err)
	}
	if c.Groups != 4 || c.Hold || !slices.Equal(c.Hidden, []int{8}) || c.Init != r.Nets["actor"] {
		t.Errorf("config groups %d, hold %v, hidden %v, init %p (actor %p)", c.Groups, c.Hold, c.Hidden, c.Init, r.Nets["actor"])
	}
	holdLimit := r.Meta
	holdLimit.Hyperparams = maps.Clone(r.Meta.Hyperparams)
	holdLimit.Hyperparams["hold_limit_s"] += 17
	dqnLike := r.Meta
	dqnLike.Algo, dqnLike.Activation, dqnLike.Networks = AlgoDQN, "relu", []string{"q"}
	tests := []struct {
		name string
		cfg  string
		meta checkpoints.Meta
		nets map[string]*nn.MLP
		want string
	}{
		{"other policy", pdirect.SASRL, r.Meta, r.Nets, "init checkpoint is of strn-rl, training sas-rl"},
		{"hold limit", pdirect.STRNRL, holdLimit, r.Nets, "hold_limit_s"},
		{"no actor", pdirect.STRNRL, dqnLike, map[string]*nn.MLP{"q": r.Nets["actor"]}, "no tanh actor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Name: tt.cfg}
			err := c.InitFrom(tt.meta, tt.nets)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("InitFrom: %v, want an error saying %q", err, tt.want)
			}
			if c.Init != nil {
				t.Error("a refused checkpoint set Init")
			}
		})
	}
}
