package serve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/profile"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/random"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// fakeClock is a Clock that moves only when Advance is called.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0).UTC()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	return ch
}

// Advance moves the clock and fires the waiters that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// Waiting returns the number of pending After calls.
func (c *fakeClock) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// testLoader is a PolicyLoader whose "learned" policy is a builtin
// heuristic: strn (good) or random (bad), as the atomic name says when an
// instance is built, so a test can make the learned policy turn bad.
type testLoader struct{ name atomic.Pointer[string] }

func newTestLoader(name string) *testLoader {
	l := &testLoader{}
	l.name.Store(&name)
	return l
}

func (l *testLoader) set(name string) { l.name.Store(&name) }

func (l *testLoader) load(dir string) (checkpoints.Meta, func() policies.Policy, error) {
	b, err := os.ReadFile(filepath.Join(dir, checkpoints.MetaFile))
	if err != nil {
		return checkpoints.Meta{}, nil, err
	}
	if !strings.Contains(string(b), "strn-rl") {
		return checkpoints.Meta{}, nil, fmt.Errorf("test loader: not a strn-rl checkpoint")
	}
	return checkpoints.Meta{Env: "strn-rl", Algo: "test"}, func() policies.Policy {
		var p policies.Policy
		switch *l.name.Load() {
		case random.Name:
			p, _ = random.New(policies.Config{Seed: 7})
		default:
			p, _ = strn.New(policies.Config{Seed: 1})
		}
		return p
	}, nil
}

// writeViewCheckpoint writes a view-level checkpoint's meta.json (all the
// test loader reads) into dir.
func writeViewCheckpoint(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoints.MetaFile), []byte(`{"version":1,"env":"strn-rl"}`), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// switchCluster is the cluster every replayed request reports: 8 nodes of
// 4 GPUs in two racks, idle.
func switchCluster() *pb.Cluster {
	c := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 25}
	for i := range 8 {
		c.Nodes = append(c.Nodes, &pb.Node{Id: fmt.Sprintf("node-%d", i), Gpus: 4, FreeGpus: 4, Cpus: 32, MemoryGib: 256,
			NicGbps: 25, Rack: int32(i / 4)})
	}
	return c
}

// workloadJobs returns n jobs of a seeded workload: a builtin model each,
// 1 to 8 workers, 10 to 60 minutes.
func workloadJobs(n int, seed uint64) []*pb.Job {
	rng := rand.New(rand.NewPCG(seed, 1))
	models := profile.BuiltinNames()
	jobs := make([]*pb.Job, n)
	for i := range jobs {
		jobs[i] = &pb.Job{Id: fmt.Sprintf("job-%d", i), Model: models[rng.IntN(len(models))],
			Workers: []int32{1, 2, 4, 4, 6, 8}[rng.IntN(6)], ExpectedDurationS: float64(600 + rng.IntN(3000))}
	}
	return jobs
}

// replayArrivals sends each job through Place, one a simulated minute
// apart, and reports its start; it returns the answers' policies.
func replayArrivals(t *testing.T, client pb.SchedulerClient, clock *fakeClock, jobs []*pb.Job) []string {
	t.Helper()
	var policies []string
	for _, j := range jobs {
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		resp, err := client.Place(ctx, &pb.PlaceRequest{Job: j, Cluster: switchCluster()})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		policies = append(policies, resp.Policy)
		if resp.Placed {
			var nodes []string
			for _, a := range resp.Assignments {
				nodes = append(nodes, a.NodeId)
			}
			_, err := client.Report(context.Background(), &pb.ReportRequest{Outcomes: []*pb.Outcome{{JobId: j.Id, DecisionId: resp.DecisionId,
				Event: &pb.Outcome_Started{Started: &pb.Started{NodeIds: nodes}}}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Minute)
	}
	return policies
}

// switchedBetween reports whether st's active policy answers since a time
// in [from, to]. The gate's evaluation runs beside the arrivals: the one
// the 20th arrival kicks can finish before the replay advances the clock
// past that arrival (it did every time on one core) or after.
func switchedBetween(st *pb.StatusResponse, from, to time.Time) bool {
	return st.ActiveSinceUnixNanos >= from.UnixNano() && st.ActiveSinceUnixNanos <= to.UnixNano()
}

// switchConfig is a small, quick gate: an evaluation after every 20
// arrivals on the last 30, 4 paired seeds.
func switchConfig() serve.SwitchConfig {
	return serve.SwitchConfig{Every: 20, MinArrivals: 20, Window: 30, Seeds: 4, Resamples: 2000, Seed: 1}
}

// waitStatus polls Status until ok holds (the evaluation runs on its own
// goroutine) or a minute has passed.
func waitStatus(t *testing.T, client pb.SchedulerClient, ok func(*pb.StatusResponse) bool) *pb.StatusResponse {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := client.Status(context.Background(), &pb.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSwitchEndToEnd serves a view-level learned checkpoint in shadow
// over gRPC (bufconn), replays a workload's arrivals through Place and
// Report, and watches Status: with a bad heuristic (random) and a better
// learned policy (strn), the gate switches the answer to the learned one;
// with the roles swapped, the gate refuses and the heuristic keeps
// answering. The shadow decisions are in the decision records throughout.
func TestSwitchEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		heuristic  string
		learned    string
		wantSwitch bool
	}{
		{"learned better: switch", random.Name, strn.Name, true},
		{"learned worse: refused", strn.Name, random.Name, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			sink := &serve.MemorySink{}
			loader := newTestLoader(tt.learned)
			h := startBufconn(t, serve.ServerConfig{}, serve.WithClock(clock), serve.WithSink(sink), serve.WithHeuristic(tt.heuristic),
				serve.WithPolicyLoader(loader.load), serve.WithSwitch(switchConfig()))
			dir := t.TempDir()
			writeViewCheckpoint(t, dir)
			v, err := h.core.LoadVersion(dir, 3)
			if err != nil {
				t.Fatal(err)
			}
			h.core.Swap(v)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); h.core.RunSwitch(ctx) }()
			defer func() { cancel(); <-done }()

			st := waitStatus(t, h.client, func(*pb.StatusResponse) bool { return true })
			heur := "heuristic:" + tt.heuristic
			if st.ActivePolicy != heur || st.ShadowPolicy != "learned@v3" || st.SwitchMode != serve.SwitchGate {
				t.Fatalf("before any arrival: active %q, shadow %q, mode %q; want %s, learned@v3, gate", st.ActivePolicy, st.ShadowPolicy, st.SwitchMode, heur)
			}
			// 20 arrivals: the heuristic answers them all, the learned
			// policy decides each in shadow; the 20th kicks an evaluation.
			got := replayArrivals(t, h.client, clock, workloadJobs(20, 1))
			for i, p := range got {
				if p != heur {
					t.Fatalf("arrival %d answered by %s before any gate verdict, want %s", i, p, heur)
				}
			}
			st = waitStatus(t, h.client, func(st *pb.StatusResponse) bool { return st.GateEvaluations >= 1 })
			if st.GateEvaluations < 1 {
				t.Fatalf("no gate evaluation after 20 arrivals: %v", st)
			}
			t.Logf("status: %s (since %d): %s", st.ActivePolicy, st.ActiveSinceUnixNanos, st.SwitchReason)
			if tt.wantSwitch {
				if st.ActivePolicy != "learned@v3" || st.ShadowPolicy != heur || !strings.HasPrefix(st.SwitchReason, "gate passed") ||
					st.GateLowerBound <= 0.02 || !switchedBetween(st, clock.Now().Add(-time.Minute), clock.Now()) {
					t.Fatalf("after the evaluation: %v; want learned@v3 answering since the 20th arrival (%d) or after, the gate passed",
						st, clock.Now().Add(-time.Minute).UnixNano())
				}
			} else if st.ActivePolicy != heur || st.ShadowPolicy != "learned@v3" || !strings.Contains(st.SwitchReason, "gate not passed") || st.GateLowerBound > 0.02 {
				t.Fatalf("after the evaluation: %v; want %s still answering, the gate refused", st, heur)
			}
			// The next arrivals are answered by whoever the gate chose.
			want := heur
			if tt.wantSwitch {
				want = "learned@v3"
			}
			got = replayArrivals(t, h.client, clock, workloadJobs(25, 2)[20:])
			for i, p := range got {
				if p != want {
					t.Errorf("arrival %d after the verdict answered by %s, want %s", 20+i, p, want)
				}
			}
			// Every decision record carries the other policy's decision.
			for _, r := range sink.Decisions() {
				other := map[string]string{heur: "learned@v3", "learned@v3": heur}[r.Policy]
				if r.Shadow != other || (r.ShadowFailure == "" && len(r.ShadowWorkerNodes) != r.Workers && r.Placed) {
					t.Errorf("record %s: answered by %s, shadow %q (%d workers, failure %q); want shadow %s deciding", r.ID, r.Policy,
						r.Shadow, len(r.ShadowWorkerNodes), r.ShadowFailure, other)
				}
			}
			if st := h.core.Status(); st.Shadow["decided"] == 0 {
				t.Errorf("shadow counts %v: want decided > 0", st.Shadow)
			}
		})
	}
}

// TestSwitchBack: after the gate switched to the learned policy, it turns
// bad (its instances are random from then on): the next evaluation, on
// the timer of the fake clock this time, sees it and switches back.
func TestSwitchBack(t *testing.T) {
	clock := newFakeClock()
	loader := newTestLoader(strn.Name)
	cfg := switchConfig()
	cfg.Every, cfg.Interval = -1, time.Hour // evaluate on the timer only
	metrics := serve.NewMetrics()
	h := startBufconn(t, serve.ServerConfig{}, serve.WithClock(clock), serve.WithHeuristic(random.Name), serve.WithMetrics(metrics),
		serve.WithPolicyLoader(loader.load), serve.WithSwitch(cfg))
	root := t.TempDir()
	writeViewCheckpoint(t, filepath.Join(root, "0002"))
	w, err := serve.NewWatcher(root, h.core, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Poll(); err != nil {
		t.Fatal(err)
	}
	if a := h.core.Active(); a == nil || a.Name != "v2" || !a.ViewLevel() {
		t.Fatalf("watcher loaded %+v, want view-level v2", a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.core.RunSwitch(ctx) }()
	defer func() { cancel(); <-done }()

	jobs := workloadJobs(30, 3)
	replayArrivals(t, h.client, clock, jobs[:20])
	// 20 simulated minutes passed, the timer is an hour: no evaluation.
	if st := h.core.Status(); st.GateEvaluations != 0 {
		t.Fatalf("%d evaluations before the interval passed", st.GateEvaluations)
	}
	waitTimer := func() {
		for clock.Waiting() == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	waitTimer()
	clock.Advance(time.Hour)
	st := waitStatus(t, h.client, func(st *pb.StatusResponse) bool { return st.GateEvaluations >= 1 })
	if st.ActivePolicy != "learned@v2" {
		t.Fatalf("after the first evaluation: %v, want learned@v2 answering", st)
	}
	switchedAt := st.ActiveSinceUnixNanos

	loader.set(random.Name)
	replayArrivals(t, h.client, clock, jobs[20:])
	waitTimer()
	clock.Advance(time.Hour)
	st = waitStatus(t, h.client, func(st *pb.StatusResponse) bool { return st.GateEvaluations >= 2 })
	if st.ActivePolicy != "heuristic:random" || !strings.HasPrefix(st.SwitchReason, "live gate failed") ||
		st.ActiveSinceUnixNanos <= switchedAt || st.ShadowPolicy != "learned@v2" {
		t.Fatalf("after the second evaluation: %v; want the heuristic back since then, the live gate failed", st)
	}
	body := scrape(t, metrics)
	for _, want := range []string{`drover_policy_switches_total{to="learned"} 1`, `drover_policy_switches_total{to="heuristic"} 1`,
		"drover_learned_answering 0", `drover_gate_evaluations_total{result="passed"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// scrape returns the metrics' text exposition.
func scrape(t *testing.T, m *serve.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}
