package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/logreplay"
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
	tl, err := telemlog.ReadDir(filepath.Join(logDir, logreplay.TelemetryDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Samples) == 0 || len(tl.Nodes()) != 16 {
		t.Fatalf("telemetry: %d samples of %d nodes, want samples of 16", len(tl.Samples), len(tl.Nodes()))
	}
	if _, err := os.Stat(filepath.Join(logDir, logreplay.ManifestFile)); err != nil {
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
	for _, name := range []string{logreplay.ServedLogName, "served strn (replay)", "first-fit", "strn", "sas", "sas-rl@sas-rl"} {
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
	if err := os.Remove(filepath.Join(logDir, logreplay.ManifestFile)); err != nil {
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
	if !strings.Contains(out, "(from the flags: the log has no "+logreplay.ManifestFile+")") {
		t.Errorf("output does not say where the cluster came from:\n%s", out)
	}
	if m := matchRE.FindStringSubmatch(out); m == nil || m[1] != strconv.FormatFloat(logged, 'f', 2, 64) {
		t.Errorf("live log: match line %q, want the logged %.2f s", m, logged)
	} else if r, _ := strconv.ParseFloat(m[2], 64); r/logged-1 < -0.01 || r/logged-1 > 0.01 {
		t.Errorf("live log: replayed %v s, logged %v s: want within 1%%", r, logged)
	}
}
