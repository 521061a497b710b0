package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/remote"
	"github.com/drover-sched/drover/serve/state"
)

// serveForTest serves a stateful core answering with STRN, logging to
// dir, on a loopback port, as drover serve -log-dir dir does; it returns
// the address and a function that shuts the server down (sealing the log).
func serveForTest(t *testing.T, dir string) (addr string, stop func()) {
	t.Helper()
	w, err := declog.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.New(state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	core, err := serve.NewCore(serve.WithHeuristic("strn"), serve.WithState(st, nil), serve.WithSink(serve.NewLogSink(w)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.NewServer(core, serve.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	t.Cleanup(stop)
	return lis.Addr().String(), stop
}

// matchRE reads eval --log's match line.
var matchRE = regexp.MustCompile(`match      served heuristic:strn: avg JCT ([0-9.]+) s logged, ([0-9.]+) s replayed \(([-+][0-9.]+)%\)`)

// TestRecordAndRescore is issue 17's acceptance for offline evaluation: a
// recorded run (a server answering with STRN and logging; drover sim
// --remote --record standing in for the cluster and its agents) re-scored
// by drover eval --log under first-fit, STRN, SAS and the shipped sas-rl
// checkpoint. The served policy's replay matches the logged average JCT
// within 1%, and the policies' rows differ (so the comparison can fail).
// About 0.5 s without the race detector, 8 s with it.
func TestRecordAndRescore(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "log")
	addr, stop := serveForTest(t, logDir)
	code, out, errOut := drover(t, "sim", "--quiet", "--remote", addr, "--record", logDir)
	if code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "finished   400/400 jobs") {
		t.Fatalf("sim output:\n%s", out)
	}
	stop()
	tl, err := telemlog.ReadDir(filepath.Join(logDir, simTelemetryDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Samples) == 0 || len(tl.Nodes()) != 16 {
		t.Fatalf("telemetry: %d samples of %d nodes, want samples of 16", len(tl.Samples), len(tl.Nodes()))
	}
	if _, err := os.Stat(filepath.Join(logDir, ManifestFile)); err != nil {
		t.Fatal(err)
	}

	ckpt := filepath.Join("..", "..", "checkpoints", "sas-rl")
	code, out, errOut = drover(t, "eval", "--quiet", "--log", logDir, "--policies", "first-fit,strn,sas,"+ckpt, "--out", filepath.Join(dir, "eval"))
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	t.Log("\n" + out)
	m := matchRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no match line in:\n%s", out)
	}
	logged, _ := strconv.ParseFloat(m[1], 64)
	replayed, _ := strconv.ParseFloat(m[2], 64)
	if d := replayed/logged - 1; d < -0.01 || d > 0.01 {
		t.Errorf("served STRN: logged avg JCT %v s, replayed %v s: %+.2f%%, want within 1%%", logged, replayed, 100*d)
	}
	avg := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, " | ")
		if len(f) > 2 && strings.HasPrefix(f[0], "| ") {
			if _, seen := avg[f[0][2:]]; !seen {
				avg[f[0][2:]] = f[1]
			}
		}
	}
	for _, name := range []string{ServedLogName, "served strn (replay)", "first-fit", "strn", "sas", "sas-rl@sas-rl"} {
		if avg[name] == "" {
			t.Errorf("no row %q in:\n%s", name, out)
		}
	}
	if avg["first-fit"] == avg["strn"] || avg["sas"] == avg["strn"] || avg["sas"] == avg["first-fit"] {
		t.Errorf("policies' avg JCTs do not differ: first-fit %s, strn %s, sas %s", avg["first-fit"], avg["strn"], avg["sas"])
	}
	for _, name := range []string{"table.md", "summary.json", "jct_cdf.png", "stragglers.png"} {
		if _, err := os.Stat(filepath.Join(dir, "eval", name)); err != nil {
			t.Error(err)
		}
	}

	// The same log as a live cluster's: no manifest, the telemetry beside
	// the decision log (as drover serve -log-dir writes the agents'). The
	// cluster and model come from eval's flags (here their defaults: the
	// recorded run's), and the replay matches as well.
	if err := os.Remove(filepath.Join(logDir, ManifestFile)); err != nil {
		t.Fatal(err)
	}
	for _, p := range tl.Files {
		if err := os.Rename(p, filepath.Join(logDir, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = drover(t, "eval", "--quiet", "--log", logDir, "--policies", "strn", "--out", filepath.Join(dir, "eval-live"))
	if code != 0 {
		t.Fatalf("eval of the live log: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "(from the flags: the log has no "+ManifestFile+")") {
		t.Errorf("output does not say where the cluster came from:\n%s", out)
	}
	if m := matchRE.FindStringSubmatch(out); m == nil || m[1] != strconv.FormatFloat(logged, 'f', 2, 64) {
		t.Errorf("live log: match line %q, want the logged %.2f s", m, logged)
	} else if r, _ := strconv.ParseFloat(m[2], 64); r/logged-1 < -0.01 || r/logged-1 > 0.01 {
		t.Errorf("live log: replayed %v s, logged %v s: want within 1%%", r, logged)
	}
}

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
			n, err := nameNodes(&c, tt.ids)
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
	sl, err := readServedLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	got := sl.workload(epoch, profiles, 16)
	want := []datasets.Job{
		{Name: "d", Submit: 50, GPUs: 2, Model: "bert", Duration: 300},
		{Name: "a", Submit: 100, GPUs: 4, Model: "cifar10", Duration: 600, Arch: datasets.ArchPS, PSShards: 2},
		{Name: "b", Submit: 150, GPUs: 1, Model: "ncf", Duration: 900},
	}
	if diff := cmp.Diff(want, got.Jobs); diff != "" {
		t.Errorf("workload (-want,+got):\n%s", diff)
	}
	if sl.dropped["unknown model"] != 1 || sl.fromOutcomes != 1 || sl.served != "heuristic:strn" {
		t.Errorf("dropped %v, %d from outcomes, served %q; want 1 unknown model, 1, heuristic:strn", sl.dropped, sl.fromOutcomes, sl.served)
	}
	run := sl.servedRun(got)
	if diff := cmp.Diff([]float64{300, 600, 950}, run.JCTs); diff != "" {
		t.Errorf("logged JCTs (-want,+got):\n%s", diff)
	}
	// GPU-hours from the Started-Finished spans: only b has both (1 GPU, 900 s).
	if run.Summary.AvgJCT != 1850.0/3 || run.Summary.Finished != 3 || run.Summary.GPUHours != 0.25 {
		t.Errorf("summary %+v, want avg JCT 1850/3, 3 finished, 0.25 GPU-hours", run.Summary)
	}
}
