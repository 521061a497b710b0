package serve_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/random"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// loaderOf is a PolicyLoader of a strn-rl checkpoint whose policy mk
// builds.
func loaderOf(mk func() policies.Policy) serve.PolicyLoader {
	return func(string) (checkpoints.Meta, func() policies.Policy, error) {
		return checkpoints.Meta{Env: "strn-rl"}, mk, nil
	}
}

// policyFunc is a policy from a function.
type policyFunc func(*env.View) ([]env.Decision, error)

func (f policyFunc) Schedule(v *env.View) ([]env.Decision, error) { return f(v) }

// newSwitchCore returns a core serving a view-level v1 of mk's policy.
func newSwitchCore(t *testing.T, mk func() policies.Policy, opts ...serve.Option) *serve.Core {
	t.Helper()
	k, err := serve.NewCore(append([]serve.Option{serve.WithPolicyLoader(loaderOf(mk)), serve.WithModelTimeout(testDeadline)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	dir := t.TempDir()
	writeViewCheckpoint(t, dir)
	v, err := k.LoadVersion(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	k.Swap(v)
	return k
}

func place(t *testing.T, k *serve.Core, j *pb.Job) *pb.PlaceResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	resp, err := k.Place(ctx, &pb.PlaceRequest{Job: j, Cluster: switchCluster()})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func strnPolicy() policies.Policy { p, _ := strn.New(policies.Config{Seed: 1}); return p }

func TestSwitchConfigRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  serve.SwitchConfig
		want string
	}{
		{"mode", serve.SwitchConfig{Mode: "sometimes"}, "switch mode"},
		{"one seed", serve.SwitchConfig{Seeds: 1}, "seeds"},
		{"window below min", serve.SwitchConfig{MinArrivals: 50, Window: 10}, "window"},
		{"no hysteresis", serve.SwitchConfig{Margin: 0.02, BackMargin: 0.05}, "back margin"},
		{"metric", serve.SwitchConfig{Metric: "p99"}, "metric"},
		{"interval", serve.SwitchConfig{Interval: -time.Second}, "interval"},
		{"confidence", serve.SwitchConfig{Confidence: 1.5}, "confidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := serve.NewCore(serve.WithSwitch(tt.cfg)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewCore: %v, want an error about %s", err, tt.want)
			}
		})
	}
}

// TestLoadVersionNeedsLoader: a view-level checkpoint without a loader is
// a clear error; with one, it becomes a view-level version.
func TestLoadVersionNeedsLoader(t *testing.T) {
	dir := t.TempDir()
	writeViewCheckpoint(t, dir)
	k, err := serve.NewCore()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.LoadVersion(dir, 1); err == nil || !strings.Contains(err.Error(), "WithPolicyLoader") {
		t.Errorf("LoadVersion without a loader: %v", err)
	}
	k = newSwitchCore(t, strnPolicy)
	if a := k.Active(); !a.ViewLevel() || a.Meta.Env != "strn-rl" {
		t.Errorf("active %+v, want a view-level strn-rl version", a)
	}
	if _, err := serve.NewPolicyVersion(dir, 1, checkpoints.Meta{Env: "placement"}, strnPolicy); err == nil {
		t.Error("NewPolicyVersion accepted a placement checkpoint")
	}
}

// TestSwitchCadence: the evaluation loop runs after Every distinct new
// arrivals (a job asked about again is not a new arrival), and with fewer
// than MinArrivals it only says it waits.
func TestSwitchCadence(t *testing.T) {
	clock := newFakeClock()
	cfg := serve.SwitchConfig{Every: 5, MinArrivals: 8, Window: 8, Seeds: 2, Resamples: 100}
	k := newSwitchCore(t, strnPolicy, serve.WithClock(clock), serve.WithHeuristic(random.Name), serve.WithSwitch(cfg))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); k.RunSwitch(ctx) }()
	defer func() { cancel(); <-done }()
	jobs := workloadJobs(10, 4)
	for range 3 {
		for _, j := range jobs[:4] {
			place(t, k, j)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if st := k.Switch(); st.Evaluations != 0 || st.LastGate != "" {
		t.Fatalf("after 4 distinct arrivals (12 requests): %+v, want no evaluation", st)
	}
	place(t, k, jobs[4])
	st := waitFor(t, k, func(st serve.SwitchStatus) bool { return st.LastGate != "" })
	if st.LastGate != "waiting: 5 of 8 arrivals" || st.Answering != "heuristic:random" {
		t.Fatalf("after 5 arrivals: %+v, want waiting for 8", st)
	}
	for _, j := range jobs[5:] {
		place(t, k, j)
	}
	st = waitFor(t, k, func(st serve.SwitchStatus) bool { return st.Evaluations >= 1 })
	if st.Verdict.Episodes != 2 || st.Answering != "learned@v1" {
		t.Fatalf("after 10 arrivals: %+v, want a 2-episode verdict that switched", st)
	}
}

func waitFor(t *testing.T, k *serve.Core, ok func(serve.SwitchStatus) bool) serve.SwitchStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st := k.Switch()
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestSwitchModes: in shadow mode the gate is judged and never switches;
// in converged mode the checkpoint's verdict decides and no gate runs.
func TestSwitchModes(t *testing.T) {
	cfg := serve.SwitchConfig{Mode: serve.SwitchShadow, MinArrivals: 10, Window: 10, Seeds: 2, Resamples: 100}
	k := newSwitchCore(t, strnPolicy, serve.WithHeuristic(random.Name), serve.WithSwitch(cfg))
	for _, j := range workloadJobs(10, 5) {
		place(t, k, j)
	}
	st, err := k.EvaluateSwitch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Answering != "heuristic:random" || !strings.Contains(st.Reason, "the gate would switch") || !st.Verdict.Converged {
		t.Errorf("shadow mode: %+v, want the heuristic answering, a converged verdict", st)
	}

	conv := func() policies.Policy { return strnPolicy() }
	k, err = serve.NewCore(serve.WithHeuristic(random.Name), serve.WithSwitch(serve.SwitchConfig{Mode: serve.SwitchConverged}))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for _, converged := range []bool{false, true} {
		v, err := serve.NewPolicyVersion("test", 1, checkpoints.Meta{Env: "sas-rl", Converged: converged}, conv)
		if err != nil {
			t.Fatal(err)
		}
		k.Swap(v)
		resp := place(t, k, workloadJobs(1, 6)[0])
		want := map[bool]string{false: "heuristic:random", true: "learned@v1"}[converged]
		if resp.Policy != want {
			t.Errorf("converged mode, checkpoint converged %v: answered by %s (%s), want %s", converged, resp.Policy, resp.Reason, want)
		}
		if st, _ := k.EvaluateSwitch(context.Background()); st.Evaluations != 0 {
			t.Errorf("converged mode evaluated the gate: %+v", st)
		}
	}
}

// TestShadowFailures: a shadow policy that fails or runs past the
// deadline never changes the answer; each failure is recorded and
// counted.
func TestShadowFailures(t *testing.T) {
	release := make(chan struct{})
	tests := []struct {
		name    string
		policy  policyFunc
		failure string
	}{
		{"error", func(*env.View) ([]env.Decision, error) { return nil, errors.New("boom") }, serve.FallbackError},
		{"panic", func(*env.View) ([]env.Decision, error) { panic("boom") }, serve.FallbackError},
		{"infeasible", func(*env.View) ([]env.Decision, error) {
			return []env.Decision{{Job: 0, Nodes: []int{0, 0, 0, 0, 0, 0, 0, 0}}}, nil
		}, serve.FallbackInfeasible},
		{"deadline", func(*env.View) ([]env.Decision, error) { <-release; return nil, nil }, serve.FallbackDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Release the blocked policy before the core closes (Close
			// waits for the learned calls still running; defers run
			// before cleanups).
			if tt.failure == serve.FallbackDeadline {
				defer close(release)
			}
			sink := &serve.MemorySink{}
			limit := testDeadline // an error must not be slower than its limit on a loaded machine
			if tt.failure == serve.FallbackDeadline {
				limit = 20 * time.Millisecond
			}
			k := newSwitchCore(t, func() policies.Policy { return tt.policy }, serve.WithSink(sink),
				serve.WithModelTimeout(limit))
			resp := place(t, k, &pb.Job{Id: "a", Model: "cifar10", Workers: 8})
			if resp.Policy != "heuristic:strn" || !resp.Placed || resp.Reason != "fallback: shadow" {
				t.Errorf("answer %s placed %v (%s), want heuristic:strn placing, fallback: shadow", resp.Policy, resp.Placed, resp.Reason)
			}
			recs := sink.Decisions()
			if len(recs) != 1 || recs[0].Shadow != "learned@v1" || recs[0].ShadowFailure != tt.failure || recs[0].ShadowWorkerNodes != nil {
				t.Fatalf("records %+v, want one with shadow learned@v1 failing %s", recs, tt.failure)
			}
			if n := k.Status().Shadow[tt.failure]; n != 1 {
				t.Errorf("shadow counts %v, want %s: 1", k.Status().Shadow, tt.failure)
			}
		})
	}
}

// TestSetAnswering: a replay sets who answers as the served log says,
// without a gate: the learned version answers until set back; setting it
// is refused without a view-level version or outside the gate mode.
func TestSetAnswering(t *testing.T) {
	k := newSwitchCore(t, strnPolicy, serve.WithHeuristic(random.Name))
	steps := []struct {
		learned bool
		want    string
	}{{false, "heuristic:random"}, {true, "learned@v1"}, {true, "learned@v1"}, {false, "heuristic:random"}}
	for i, s := range steps {
		if err := k.SetAnswering(s.learned, "the log says so"); err != nil {
			t.Fatal(err)
		}
		resp := place(t, k, workloadJobs(4, 7)[i])
		if resp.Policy != s.want || k.Switch().Answering != s.want {
			t.Errorf("step %d, learned %v: answered by %s, status %q, want %s", i, s.learned, resp.Policy, k.Switch().Answering, s.want)
		}
	}
	if st := k.Switch(); st.Evaluations != 0 || st.Reason != "the log says so" {
		t.Errorf("status %+v, want no gate evaluation and the reason given", st)
	}
	plain, err := serve.NewCore(serve.WithHeuristic(random.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.SetAnswering(true, ""); err == nil {
		t.Error("SetAnswering without a learned version: no error")
	}
	conv := newSwitchCore(t, strnPolicy, serve.WithHeuristic(random.Name), serve.WithSwitch(serve.SwitchConfig{Mode: serve.SwitchConverged}))
	if err := conv.SetAnswering(true, ""); err == nil || !strings.Contains(err.Error(), "switch mode converged") {
		t.Errorf("SetAnswering in converged mode: %v, want an error naming the mode", err)
	}
}

// TestSwitchReportsTeacher: the gate reports the learned policy's
// comparison with its teacher (strn for a strn-rl checkpoint) beside the
// verdict against the heuristic, which alone decides the switch. The
// learned policy here is STRN itself, so against its teacher every
// replay's cost is the same (gain 0: its whole gain over random is its
// teacher's); with STRN as the heuristic too the two comparisons are one.
func TestSwitchReportsTeacher(t *testing.T) {
	cfg := serve.SwitchConfig{MinArrivals: 10, Window: 10, Seeds: 2, Resamples: 100}
	for _, heur := range []string{random.Name, strn.Name} {
		t.Run(heur, func(t *testing.T) {
			k := newSwitchCore(t, strnPolicy, serve.WithHeuristic(heur), serve.WithSwitch(cfg))
			for _, j := range workloadJobs(10, 5) {
				place(t, k, j)
			}
			st, err := k.EvaluateSwitch(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			r := st.Report
			if r.Teacher != strn.Name || r.Verdict != st.Verdict || r.Heuristic != "heuristic:"+heur {
				t.Fatalf("report %+v, verdict %+v", r, st.Verdict)
			}
			if r.VsTeacher.MeanGain != 0 || r.VsTeacher.Lower != 0 || r.VsTeacher.Episodes != 2 {
				t.Errorf("vs teacher %+v, want gain 0 over 2 episodes (the learned policy is its teacher)", r.VsTeacher)
			}
			if !strings.Contains(st.LastGate, "vs its teacher strn: mean gain 0.0%, lower bound 0.0%") {
				t.Errorf("LastGate %q lacks the teacher's comparison", st.LastGate)
			}
			teachers := strings.Contains(st.LastGate, "is its teacher's")
			switch heur {
			case random.Name:
				// STRN beats random: the gate switches on that, and says the
				// gain is the teacher's.
				if !st.Verdict.Converged || st.Answering != "learned@v1" || !teachers {
					t.Errorf("against random: %+v", st)
				}
			case strn.Name:
				if st.Verdict != r.VsTeacher || st.Verdict.Converged || st.Answering != "heuristic:strn" || teachers {
					t.Errorf("against strn, its teacher: %+v", st)
				}
			}
		})
	}
}
