package serve_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

func TestServerTCP(t *testing.T) {
	leakcheck.Check(t)
	sink := &serve.MemorySink{}
	metrics := serve.NewMetrics()
	h := startTCP(t, serve.ServerConfig{Token: "s3cret", Metrics: metrics},
		[]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(serve.BearerToken{Token: "s3cret", AllowInsecure: true})},
		serve.WithSink(sink), serve.WithMetrics(metrics))
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()

	resp, err := h.client.Place(ctx, makeRequest(64, 4, 8))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Placed || len(resp.Assignments) != 8 || resp.Policy != "heuristic:strn" {
		t.Fatalf("Place: %v", resp)
	}
	rep, err := h.client.Report(ctx, &pb.ReportRequest{Outcomes: []*pb.Outcome{
		{JobId: "job-1", DecisionId: resp.DecisionId, Event: &pb.Outcome_Iterations{Iterations: &pb.Iterations{Seconds: []float64{0.3, 0.31}, Worker: 2}}},
	}})
	if err != nil || rep.Accepted != 1 {
		t.Fatalf("Report: %v, %v", rep, err)
	}
	st, err := h.client.Status(ctx, &pb.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.ActivePolicy != "heuristic:strn" || st.Decisions["heuristic"] != 1 || st.Outcomes["iterations"] != 1 {
		t.Errorf("Status: %v", st)
	}

	// An invalid request: InvalidArgument naming the field.
	bad := makeRequest(8, 4, 2)
	bad.Cluster.Nodes[3].FreeGpus = -1
	_, err = h.client.Place(ctx, bad)
	if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || s.Message() != "cluster.nodes[3].free_gpus: negative (-1)" {
		t.Errorf("invalid request: %v", err)
	}

	// Without the token: Unauthenticated; the health check needs none.
	conn, err := grpc.NewClient(h.conn.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := pb.NewSchedulerClient(conn).Status(ctx, &pb.StatusRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no token: %v, want Unauthenticated", err)
	}
	hr, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: serve.ServiceName})
	if err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v, %v", hr, err)
	}

	// The metrics count the calls by method and code, and the decisions.
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`drover_grpc_requests_total{code="OK",listener="grpc",method="/drover.v1.Scheduler/Place"} 1`,
		`drover_grpc_requests_total{code="InvalidArgument",listener="grpc",method="/drover.v1.Scheduler/Place"} 1`,
		`drover_decisions_total{fallback="no-model",source="heuristic",version=""} 1`,
		`drover_outcomes_total{kind="iterations"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// Shutdown flushes and closes the sink, with every record in it.
	h.stop(t)
	if closed, flushes := sink.Closed(); !closed || flushes != 1 {
		t.Errorf("sink closed %v, flushes %d", closed, flushes)
	}
	if len(sink.Decisions()) != 1 || len(sink.Outcomes()) != 1 {
		t.Errorf("sink holds %d decisions, %d outcomes; want 1, 1", len(sink.Decisions()), len(sink.Outcomes()))
	}
}

// TestHotReloadUnderLoad drops new checkpoint versions into the watched
// directory while goroutines send Place requests without pause: no
// request fails, each answer comes from a whole version, corrupt and
// unconverged versions are refused and the last good one keeps serving.
func TestHotReloadUnderLoad(t *testing.T) {
	leakcheck.Check(t)
	root := t.TempDir()
	writeCheckpoint(t, versionDir(root, 1), true, 8, 1)
	h := startBufconn(t, serve.ServerConfig{})
	w, err := serve.NewWatcher(root, h.core, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Poll(); err != nil {
		t.Fatal(err)
	}
	if v := h.core.Active(); v == nil || v.Name != "v1" {
		t.Fatalf("active %v, want v1", v)
	}

	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		mu       sync.Mutex
		policies = map[string]int{}
		failures atomic.Int64
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
				resp, err := h.client.Place(ctx, makeRequest(64, 4, 2))
				cancel()
				if err != nil {
					failures.Add(1)
					t.Error(err)
					return
				}
				mu.Lock()
				policies[resp.Policy]++
				mu.Unlock()
			}
		}()
	}
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(testDeadline)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := policies[want]
			mu.Unlock()
			if n > 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Errorf("no answer from %s", want)
	}
	wait("learned@v1")
	steps := []struct {
		write  func(dir string)
		active string
		refuse string
	}{
		{func(d string) { writeCheckpoint(t, d, true, 8, 2) }, "v2", ""},
		{func(d string) { corrupt(t, d) }, "v2", "v3: checkpoints: corrupt checkpoint"},
		{func(d string) { writeCheckpoint(t, d, false, 8, 4) }, "v2", "v4: not converged"},
		{func(d string) { writeCheckpoint(t, d, true, 8, 5) }, "v5", ""},
	}
	for i, s := range steps {
		s.write(versionDir(root, i+2))
		if err := w.Poll(); err != nil {
			t.Fatal(err)
		}
		if got := h.core.Active().Name; got != s.active {
			t.Errorf("after version %d: active %s, want %s", i+2, got, s.active)
		}
		if s.refuse != "" && !strings.HasPrefix(h.core.Status().LastRefused, s.refuse) {
			t.Errorf("after version %d: last refused %q, want %q...", i+2, h.core.Status().LastRefused, s.refuse)
		}
		wait("learned@" + s.active)
	}
	stop.Store(true)
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatalf("%d requests failed during reloads", failures.Load())
	}
	for p := range policies {
		if p != "learned@v1" && p != "learned@v2" && p != "learned@v5" {
			t.Errorf("answer from %s", p)
		}
	}
	// An unconverged first version is loaded (the heuristic answers).
	root2 := t.TempDir()
	writeCheckpoint(t, versionDir(root2, 7), false, 8, 7)
	k := newCore(t)
	w2, _ := serve.NewWatcher(root2, k, time.Hour)
	w2.Poll()
	resp, err := k.Place(context.Background(), makeRequest(64, 4, 2))
	if err != nil || resp.Reason != "fallback: not-converged" || resp.ModelVersion != "v7" {
		t.Errorf("unconverged only: %v, %v", resp, err)
	}
}

// TestWatcherCanary: with a canary fraction, a new converged version
// becomes the candidate and the old one stays active.
func TestWatcherCanary(t *testing.T) {
	root := t.TempDir()
	writeCheckpoint(t, versionDir(root, 1), true, 8, 1)
	k := newCore(t, serve.WithCanary(0.1, 0))
	w, _ := serve.NewWatcher(root, k, time.Hour)
	w.Poll()
	writeCheckpoint(t, versionDir(root, 2), true, 8, 2)
	w.Poll()
	if k.Active().Name != "v1" || k.Candidate() == nil || k.Candidate().Name != "v2" {
		t.Errorf("active %v, candidate %v; want v1 and v2", k.Active(), k.Candidate())
	}
	if st := k.Status(); st.CandidateVersion != "v2" || st.CanaryFraction != 0.1 {
		t.Errorf("status %v", st)
	}
}

// TestShutdownDuringLoad: Shutdown while clients send requests loses no
// decision record (every answered Place is in the sink) and leaks no
// goroutine.
func TestShutdownDuringLoad(t *testing.T) {
	leakcheck.Check(t)
	sink := &serve.MemorySink{}
	h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink))
	var answered atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err := h.client.Place(context.Background(), makeRequest(64, 4, 2))
				if err != nil {
					if c := status.Code(err); c != codes.Unavailable && c != codes.Canceled {
						t.Errorf("Place: %v", err)
					}
					return
				}
				answered.Add(1)
			}
		}()
	}
	// Shut down while the clients are under way: once they have had some
	// answers (not after a fixed sleep, which a loaded machine under -race
	// can spend before the first answer, leaving nothing to check).
	for answered.Load() < 16 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	if err := h.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	h.conn.Close()
	h.conn = nil
	if err := <-h.done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		t.Errorf("Serve: %v", err)
	}
	if got := int64(len(sink.Decisions())); got != answered.Load() || got == 0 {
		t.Errorf("sink holds %d decisions, clients got %d answers", got, answered.Load())
	}
}
