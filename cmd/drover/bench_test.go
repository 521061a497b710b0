package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/drover-sched/drover/serve/proto"
)

// stallingScheduler answers Place at once, except its stall-th call
// (counting from 0), which it holds for 50 ms. It refuses a request that
// is not drover bench's default (64 nodes, an 8-worker job), so the
// pre-encoded bytes are checked to arrive whole.
type stallingScheduler struct {
	pb.UnimplementedSchedulerServer
	calls atomic.Int64
	stall int64
}

func (s *stallingScheduler) Place(_ context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	i := s.calls.Add(1) - 1
	if len(req.GetCluster().GetNodes()) != 64 || req.GetJob().GetWorkers() != 8 {
		return nil, status.Errorf(codes.InvalidArgument, "%d nodes, %d workers", len(req.GetCluster().GetNodes()), req.GetJob().GetWorkers())
	}
	if i == s.stall {
		time.Sleep(50 * time.Millisecond)
	}
	return &pb.PlaceResponse{Placed: true, Policy: "stalling"}, nil
}

// serveStalling serves s on a loopback port.
func serveStalling(t *testing.T, s *stallingScheduler) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterSchedulerServer(srv, s)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// TestBenchPlaceCountsQueueing runs drover bench place at 100/s for 40
// requests on one in-flight slot against a server that holds the 11th
// request for 50 ms. The four requests due during the stall (10, 20, 30
// and 40 ms into it) wait for the slot; measured from their intended
// send times their latencies are about 40, 30, 20 and 10 ms, so with the
// stalled one the top five of 40 are >= 10 ms and p90 (the 36th) is at
// least 10 ms. Timed from the actual send (closed loop), only the max
// would show the stall.
func TestBenchPlaceCountsQueueing(t *testing.T) {
	for _, client := range []string{"h2", "grpc"} {
		t.Run(client, func(t *testing.T) { testBenchPlaceCountsQueueing(t, client) })
	}
}

func testBenchPlaceCountsQueueing(t *testing.T, client string) {
	s := &stallingScheduler{stall: 11} // the first call is the decoded probe
	addr := serveStalling(t, s)
	code, out, errOut := drover(t, "bench", "place", "-addr", addr, "-rate", "100", "-n", "40", "-conns", "1",
		"-concurrency", "1", "-warmup", "0", "-json", "-server-pid", strconv.Itoa(os.Getpid()), "-client", client)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Client != client {
		t.Errorf("report's client %q, want %q", rep.Client, client)
	}
	if rep.Sent != 40 || rep.OK != 40 || len(rep.Errors) != 0 || rep.Latency.Count != 40 || s.calls.Load() != 41 || rep.Answer != "stalling" {
		t.Errorf("sent %d, ok %d, errors %v, %d latencies, server saw %d, answer %q; want 40, 40, none, 40, 41 (the probe), stalling",
			rep.Sent, rep.OK, rep.Errors, rep.Latency.Count, s.calls.Load(), rep.Answer)
	}
	// Lower bounds only: a loaded machine can add, not remove, latency.
	// The 12th request, due 10 ms into the stall, is sent when it ends:
	// at least 40 ms late.
	if rep.Latency.P90 < 9 || rep.Latency.Max < 50 || rep.Lag.Max < 39 {
		t.Errorf("latency p90 %.2f ms, max %.2f ms, lag max %.2f ms; want >= 9, >= 50, >= 39 (the queue behind the stall)",
			rep.Latency.P90, rep.Latency.Max, rep.Lag.Max)
	}
	// 40 requests at 100/s: the last is due at 390 ms.
	if rep.ElapsedS < 0.39 || rep.Achieved > 100*40/39.0 {
		t.Errorf("elapsed %.3f s, achieved %.1f/s: the schedule was not kept", rep.ElapsedS, rep.Achieved)
	}
	if runtime.GOOS == "linux" && (rep.Server == nil || rep.Server.PeakRSSMB <= 0) {
		t.Errorf("server section %+v: want this process's RSS", rep.Server)
	}
}

// TestBenchPlaceText runs the text report with a request file, two
// connections and a warm-up.
func TestBenchPlaceText(t *testing.T) {
	s := &stallingScheduler{stall: -1}
	addr := serveStalling(t, s)
	code, o, _ := drover(t, "place", "-nodes", "64", "-workers", "8", "-print-request")
	req := filepath.Join(t.TempDir(), "req.json")
	if code != 0 || os.WriteFile(req, []byte(o), 0o644) != nil {
		t.Fatalf("print-request: exit %d", code)
	}
	code, out, errOut := drover(t, "bench", "place", "-addr", addr, "-request", req, "-rate", "200", "-duration", "200ms", "-warmup", "50ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"64 nodes, 8 workers", "asked 200/s, 40 requests, 2 connections", "answer: stalling\n", "sent 40, ok 40, errors none",
		"latency from intended send: p50", "client CPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := s.calls.Load(); got != 51 {
		t.Errorf("server saw %d calls, want 51 (the probe, 10 warm-up, 40 measured)", got)
	}
}

// TestBenchHealth sends the health check, the floor, with its empty
// request.
func TestBenchHealth(t *testing.T) {
	s := &stallingScheduler{stall: -1}
	addr := serveStalling(t, s)
	code, out, errOut := drover(t, "bench", "place", "-health", "-addr", addr, "-rate", "200", "-n", "20", "-warmup", "0", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Method != healthpb.Health_Check_FullMethodName || rep.RequestBytes != 0 || rep.OK != 20 || rep.Answer != "health SERVING" || s.calls.Load() != 0 {
		t.Errorf("method %s, %d bytes, ok %d, answer %q, %d Place calls; want the health check, 0 bytes, 20, SERVING, none",
			rep.Method, rep.RequestBytes, rep.OK, rep.Answer, s.calls.Load())
	}
}

func TestBenchRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"bench"}, 2, "usage: drover bench place"},
		{"unknown subcommand", []string{"bench", "status"}, 2, "usage: drover bench place"},
		{"zero rate", []string{"bench", "place", "-rate", "0"}, 1, "-rate 0"},
		{"no requests", []string{"bench", "place", "-duration", "0s"}, 1, "no requests"},
		{"zero conns", []string{"bench", "place", "-conns", "0"}, 1, "-conns 0"},
		{"unknown client", []string{"bench", "place", "-client", "ghz"}, 1, `-client "ghz"`},
		{"extra argument", []string{"bench", "place", "x"}, 2, "unexpected argument"},
		{"help", []string{"bench", "-h"}, 0, "-server-pid"},
		{"missing request file", []string{"bench", "place", "-request", "/nonexistent.json"}, 1, "nonexistent.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := drover(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestBenchTail: a run's -json report carries its latency tail (every
// call counted once: the last point has none above it, the fractions fall
// as the latencies rise), -tail-png draws it, and drover bench plot draws
// two reports in one PNG; bad reports are refused naming the file.
func TestBenchTail(t *testing.T) {
	s := &stallingScheduler{stall: 5}
	addr := serveStalling(t, s)
	dir := t.TempDir()
	png := filepath.Join(dir, "run.png")
	code, out, errOut := drover(t, "bench", "place", "-addr", addr, "-rate", "200", "-n", "20", "-warmup", "0", "-json", "-tail-png", png)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	tail := rep.Tail
	if len(tail) < 2 || tail[len(tail)-1].Above != 0 || tail[len(tail)-1].Ms != rep.Latency.Max {
		t.Fatalf("tail %v: want several points ending at the max, %v ms, with none above", tail, rep.Latency.Max)
	}
	for i := 1; i < len(tail); i++ {
		if !(tail[i].Ms > tail[i-1].Ms && tail[i].Above < tail[i-1].Above) {
			t.Fatalf("tail %v: points %d and %d do not rise in latency and fall in fraction", tail, i-1, i)
		}
	}
	if tail[len(tail)-2].Above != 1.0/20 || tail[len(tail)-1].Ms < 50 {
		t.Errorf("tail %v: want the stalled call (>= 50 ms) alone at the end, 1/20 above the point before", tail)
	}
	isPNG := func(path string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
			t.Errorf("%s: not a PNG (%d bytes, %v)", path, len(b), err)
		}
	}
	isPNG(png)
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(out), 0o644)
	os.WriteFile(b, []byte(out), 0o644)
	both := filepath.Join(dir, "both.png")
	if code, out, errOut := drover(t, "bench", "plot", "-o", both, a, b); code != 0 || !strings.Contains(out, "2 runs") {
		t.Fatalf("bench plot: exit %d, %q, %s", code, out, errOut)
	}
	isPNG(both)
	bad := filepath.Join(dir, "bad.json")
	old := filepath.Join(dir, "old.json")
	os.WriteFile(bad, []byte("{not json"), 0o644)
	os.WriteFile(old, []byte(`{"method": "/drover.v1.Scheduler/Place"}`), 0o644)
	for _, tt := range []struct{ file, want string }{{bad, "bad.json: not a drover bench place -json report"}, {old, "old.json: the report has no latency tail"}} {
		if code, _, errOut := drover(t, "bench", "plot", "-o", both, a, tt.file); code != 1 || !strings.Contains(errOut, tt.want) {
			t.Errorf("bench plot with %s: exit %d, %q; want 1 and %q", tt.file, code, errOut, tt.want)
		}
	}
	if code, _, errOut := drover(t, "bench", "plot", a); code != 2 || !strings.Contains(errOut, "usage: drover bench plot") {
		t.Errorf("bench plot without -o: exit %d, %q", code, errOut)
	}
}
