package logreplay

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/serve/remote"
)

// TestNameNodes: a log whose node ids the cluster lacks names the
// cluster's first nodes, in natural order; ids the cluster has change
// nothing; more ids than nodes is an error.
func TestNameNodes(t *testing.T) {
	tests := []struct {
		name    string
		ids     []string
		want    []string // the cluster's node names after
		renamed int
		err     bool
	}{
		{"the cluster's own", []string{"node-2", "node-0"}, []string{"node-0", "node-1", "node-2"}, 0, false},
		{"other ids", []string{"gpu-a", "gpu-b"}, []string{"gpu-a", "gpu-b", "node-2"}, 2, false},
		{"too many", []string{"a", "b", "c", "d"}, nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := env.Homogeneous(3, 4)
			n, err := NameNodes(&c, tt.ids)
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error %v", err, tt.err)
			}
			if err != nil {
				return
			}
			var got []string
			for _, nd := range c.Nodes {
				got = append(got, nd.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || n != tt.renamed {
				t.Errorf("names (-want,+got):\n%s renamed %d, want %d", diff, n, tt.renamed)
			}
		})
	}
	ids := []string{"node-10", "node-2", "node-1", "b", "a", "node-02x"}
	slices.SortFunc(ids, naturalCompare)
	if diff := cmp.Diff([]string{"a", "b", "node-1", "node-2", "node-02x", "node-10"}, ids); diff != "" {
		t.Errorf("natural order (-want,+got):\n%s", diff)
	}
}

// TestServedLogWorkload: the replay's workload from a hand-made log. Job
// a: submitted 100 s after the epoch, a PS job whose placement has two
// parameter servers, 600 s expected; b: no expected run time, so the
// Started-Finished span (at 200 and 1100 s: 900 s); c: an unknown model,
// left out; d: no submission logged, so its first decision (at 50 s),
// and only a reported JCT (300 s). The served run's row holds the logged
// JCTs of the replayed jobs.
func TestServedLogWorkload(t *testing.T) {
	dir := t.TempDir()
	epoch := remote.DefaultEpoch
	at := func(s float64) time.Time { return epoch.Add(time.Duration(s * float64(time.Second))) }
	w, err := declog.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(
		declog.Decision{Time: at(50), JobID: "d", JobModel: "bert", JobGPUs: 2, JobArch: "ring", Source: "heuristic:strn", Workers: []string{"n0", "n0"}, Sync: "bsp"}.Record(),
		declog.Decision{Time: at(100), JobID: "a", JobModel: "cifar10", JobGPUs: 4, JobArch: "ps", JobExpectedDuration: 600, JobSubmitted: at(100),
			Source: "heuristic:strn", Workers: []string{"n0", "n0", "n1", "n1"}, PS: []string{"n0", "n1"}, Sync: "bsp"}.Record(),
		declog.Decision{Time: at(200), JobID: "b", JobModel: "ncf", JobGPUs: 1, JobArch: "ring", JobSubmitted: at(150),
			Source: "heuristic:strn", Workers: []string{"n1"}, Sync: "bsp"}.Record(),
		declog.Decision{Time: at(210), JobID: "c", JobModel: "gpt-9", JobGPUs: 1, JobSubmitted: at(210), Source: "heuristic:strn", Workers: []string{"n1"}}.Record(),
		declog.Outcome{Time: at(200), JobID: "b", Kind: declog.Started}.Record(),
		declog.Outcome{Time: at(1100), JobID: "b", Kind: declog.Finished, JCT: 950}.Record(),
		declog.Outcome{Time: at(400), JobID: "d", Kind: declog.Finished, JCT: 300}.Record(),
		declog.Outcome{Time: at(700), JobID: "a", Kind: declog.Finished, JCT: 600}.Record(),
	); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sl, err := ReadServedLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	got := sl.Workload(epoch, profiles, 16)
	want := []datasets.Job{
		{Name: "d", Submit: 50, GPUs: 2, Model: "bert", Duration: 300},
		{Name: "a", Submit: 100, GPUs: 4, Model: "cifar10", Duration: 600, Arch: datasets.ArchPS, PSShards: 2},
		{Name: "b", Submit: 150, GPUs: 1, Model: "ncf", Duration: 900},
	}
	if diff := cmp.Diff(want, got.Jobs); diff != "" {
		t.Errorf("workload (-want,+got):\n%s", diff)
	}
	if sl.Dropped["unknown model"] != 1 || sl.FromOutcomes != 1 || sl.Served != "heuristic:strn" {
		t.Errorf("dropped %v, %d from outcomes, served %q; want 1 unknown model, 1, heuristic:strn", sl.Dropped, sl.FromOutcomes, sl.Served)
	}
	run := sl.ServedRun(got)
	if diff := cmp.Diff([]float64{300, 600, 950}, run.JCTs); diff != "" {
		t.Errorf("logged JCTs (-want,+got):\n%s", diff)
	}
	// GPU-hours from the Started-Finished spans: only b has both (1 GPU, 900 s).
	if run.Summary.AvgJCT != 1850.0/3 || run.Summary.Finished != 3 || run.Summary.GPUHours != 0.25 {
		t.Errorf("summary %+v, want avg JCT 1850/3, 3 finished, 0.25 GPU-hours", run.Summary)
	}
}
