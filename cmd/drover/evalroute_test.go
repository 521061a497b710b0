package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/routelog"
)

// recordRoutes serves HACK's router for deployment pd-rl on a loopback
// listener, with a decision log and a route log in a new directory, routes
// the first 120 s of the conv trace through it with drover infer sim
// --remote, and returns the directory once the logs are closed.
func recordRoutes(t *testing.T) string {
	t.Helper()
	perf := inferPerfFlag(t)
	conv := inferAzureTrace(t, "conv")
	dir := t.TempDir()
	w, err := declog.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := routelog.Create(filepath.Join(dir, routelog.FileName))
	if err != nil {
		t.Fatal(err)
	}
	sink := serve.NewLogSink(w).WithRoutes(rw)
	core, err := serve.NewCore(serve.WithSink(sink), serve.WithRouter(serve.RouteConfig{
		Encoder: infergym.Config{Arch: kv.Llama2_70B, LinkBytesPerSec: 25e9 / 8}, Deployment: "pd-rl"}))
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
	code, out, errOut := drover(t, append(append([]string{"infer", "sim"}, perf...), "--remote", lis.Addr().String(), "--cluster", "pd-rl", "--trace", conv, "--duration", "120", "--shift", "1")...)
	if code != 0 || !strings.Contains(out, "router     remote "+lis.Addr().String()+" (heuristic:hack ") {
		t.Fatalf("drover infer sim --remote: exit %d\n%s%s", code, out, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEvalRouteLog records a served run (drover infer sim --remote against
// a server answering with HACK) and re-scores its route log with drover
// eval --log: the logged answers' replay meets every logged instance
// state, and its row equals HACK's, which answered every request; a
// corrupt line fails the re-scoring with its line number.
func TestEvalRouteLog(t *testing.T) {
	dir := recordRoutes(t)
	perf := inferPerfFlag(t)
	code, out, errOut := drover(t, append([]string{"eval", "--log", dir, "--policies", "hack,disagg-fp16", "--out", t.TempDir()}, perf...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "served     heuristic:hack ") || !strings.Contains(out, "instance states at every one of its") {
		t.Fatalf("no full match:\n%s", out)
	}
	row := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "| "+name+" |") {
				return strings.TrimPrefix(l, "| "+name+" |")
			}
		}
		t.Fatalf("no row %s:\n%s", name, out)
		return ""
	}
	if served, hack, fp16 := row(servedRouteName), row("hack"), row("disagg-fp16"); served != hack || served == fp16 {
		t.Fatalf("served %s\nhack %s\ndisagg-fp16 %s", served, hack, fp16)
	}

	// Windows, and the gate's verdict for the committed pd-rl checkpoint,
	// which beats HACK (13.4% on the gate's held-out windows).
	code, out, errOut = drover(t, append([]string{"eval", "--log", dir, "--policies", "hack," + filepath.Join("..", "..", "checkpoints", "pd-rl"),
		"--seeds", "1-3", "--duration", "30", "--out", t.TempDir()}, perf...)...)
	if code != 0 || !strings.Contains(out, "gate       pd-rl:") || !strings.Contains(out, "on 3 paired replays (mean JCT): converged: mean gain") {
		t.Fatalf("windows: exit %d\n%s%s", code, out, errOut)
	}

	// A corrupt line 3.
	data, err := os.ReadFile(filepath.Join(dir, routelog.FileName))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[2] = strings.Replace(lines[2], `"prefill":`, `"prefill":9`, 1) // 90.., out of range
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = drover(t, append([]string{"eval", "--log", bad, "--policies", "hack", "--out", t.TempDir()}, perf...)...)
	if code == 0 || !strings.Contains(errOut, "line 3: routelog: bad record: prefill") {
		t.Fatalf("a corrupt line 3: exit %d\n%s%s", code, out, errOut)
	}
	// The wrong deployment is refused.
	code, _, errOut = drover(t, append([]string{"eval", "--log", dir, "--cluster", "splitwise-ha", "--out", t.TempDir()}, perf...)...)
	if code == 0 || !strings.Contains(errOut, "the deployment differs from the logged one") {
		t.Fatalf("--cluster splitwise-ha: exit %d\n%s", code, errOut)
	}
}
