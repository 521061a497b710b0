package logreplay

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/checkpoints"
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

// TestServedLogSegments: a hand-made log of a server whose gate switched
// from SAS to learned@v1 and back. The heuristic answered a and b (v1 in
// shadow); v1 answered c, missed its deadline on d (the heuristic stood in),
// found no room for e at 45 s and placed it at 50 s; the gate switched
// back before f. The segments say who was in charge of which decisions,
// and a replay's request goes to the policy that answered it in the log,
// or, at a time the log has no decision of that job, to the one in
// charge then. Without the checkpoints, Prepare refuses, naming the flag
// and the version.
func TestServedLogSegments(t *testing.T) {
	dir := t.TempDir()
	epoch := remote.DefaultEpoch
	at := func(s float64) time.Time { return epoch.Add(time.Duration(s * float64(time.Second))) }
	w, err := declog.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec := func(s float64, job, source, fallback, shadow string, placed bool) declog.Record {
		d := declog.Decision{Time: at(s), JobID: job, JobModel: "bert", JobGPUs: 1, Source: source, Fallback: fallback, Shadow: shadow}
		if placed {
			d.Workers, d.Sync = []string{"n0"}, "bsp"
		}
		return d.Record()
	}
	const heur, v1 = "heuristic:sas", "learned@v1"
	if err := w.Append(
		dec(10, "a", heur, "shadow", v1, true),
		dec(20, "b", heur, "shadow", v1, true),
		dec(30, "c", v1, "", heur, true),
		dec(40, "d", heur, "deadline", v1, true),
		dec(45, "e", heur, "no-room", "", false),
		dec(50, "e", v1, "", heur, true),
		dec(60, "f", heur, "shadow", v1, true),
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
	want := []Segment{
		{Policy: heur, First: 1, Last: 2, From: at(10), To: at(20), Answered: 2, Placed: 2, Fallbacks: map[string]int{}},
		{Policy: v1, First: 3, Last: 6, From: at(30), To: at(50), Answered: 2, Placed: 2, Fallbacks: map[string]int{"heuristic:sas (deadline)": 1}, NoRoom: 1},
		{Policy: heur, First: 7, Last: 7, From: at(60), To: at(60), Answered: 1, Placed: 1, Fallbacks: map[string]int{}},
	}
	if diff := cmp.Diff(want, sl.Segments); diff != "" {
		t.Errorf("segments (-want,+got):\n%s", diff)
	}
	if sl.Served != "heuristic:sas, then learned@v1, then heuristic:sas" || sl.heuristic != "sas" {
		t.Errorf("served %q, heuristic %q", sl.Served, sl.heuristic)
	}
	routes := []struct {
		job  string
		at   float64
		want string
	}{
		{"c", 30, v1},     // as logged
		{"d", 40, heur},   // the fallback, as logged
		{"e", 50, v1},     // its second decision
		{"x", 35, v1},     // no such decision: v1 was in charge
		{"d", 41, v1},     // d at another time: v1 was in charge
		{"x", 5, heur},    // before the first decision: the first's
		{"x", 1000, heur}, // after the switch back
	}
	for _, r := range routes {
		if got := sl.route(r.job, at(r.at)); got != r.want {
			t.Errorf("route(%s, %v s) = %s, want %s", r.job, r.at, got, r.want)
		}
	}
	_, err = Prepare(Config{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "learned@v1 answered 2 of the 7 decisions") || !strings.Contains(err.Error(), "--served-checkpoints") {
		t.Errorf("Prepare without the checkpoints: %v, want an error naming learned@v1 and --served-checkpoints", err)
	}
	_, err = Prepare(Config{Dir: dir, Checkpoints: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "has no version 1 (a directory such as 0001)") {
		t.Errorf("Prepare with an empty checkpoint directory: %v", err)
	}
}

// TestVersionDir: a served version is found in the server's checkpoint
// directory as drover serve reads it: one checkpoint is v1, numbered
// versions by their number.
func TestVersionDir(t *testing.T) {
	one := t.TempDir()
	if err := os.WriteFile(filepath.Join(one, checkpoints.MetaFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	many := t.TempDir()
	for _, d := range []string{"0001", "0003", "x3"} {
		if err := os.Mkdir(filepath.Join(many, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		dir  string
		seq  int
		want string // "" for an error
	}{
		{one, 1, one},
		{one, 2, ""},
		{many, 3, filepath.Join(many, "0003")},
		{many, 2, ""},
	}
	for _, tt := range tests {
		got, err := versionDir(tt.dir, tt.seq)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("versionDir(%s, %d) = %q, %v; want %q", tt.dir, tt.seq, got, err, tt.want)
		}
	}
}
