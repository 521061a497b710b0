package serve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// gateCore is a core answering RouteMM and Scale for Llama's pools with
// ModServe's rule (mmScaleConfig, target 1) as the heuristic and, as the
// "learned" autoscaler, the same rule sized for half the profiled
// capacity (twice the instances, fewer missed requests), in switch mode
// gate with the given penalty; the Scale gate replays 3 episodes.
func gateCore(t *testing.T, penalty float64, window float64, every int, opts ...serve.Option) *serve.Core {
	t.Helper()
	rich := mmScaleConfig()
	rich.Target = 0.5
	core, err := serve.NewCore(append(opts, serve.WithSwitch(serve.SwitchConfig{Seeds: 3, MinArrivals: 30}),
		serve.WithMM(serve.MMConfig{Base: mm.Decoupled(mm.Llama32_11BVision, 1, 1), Router: modserve.RouteOnly,
			Scaler: newModServeScaler, ScalerName: "modserve",
			Learned: func() (mmscale.Scaler, error) {
				return mmscale.NewModServe(rich, mmProfile, mmscale.Sizes{Image: 2, Text: 2})
			},
			Version: "rich", Mode: serve.SwitchGate, Rule: mmScaleConfig(), Penalty: penalty, GateWindow: window, GateEvery: every}))...)
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// routeBusyHalfHour routes half an hour of the week at 2M requests (day
// 1, from 22:00) through core and returns the requests.
func routeBusyHalfHour(t *testing.T, core *serve.Core) []mm.Request {
	t.Helper()
	reqs, err := llm.LMMSynth{Requests: 2_000_000, Start: 1440 + 600, Minutes: 30}.Generate(rand.NewPCG(3, 1))
	if err != nil {
		t.Fatal(err)
	}
	ins := []*pb.MMInstance{{Id: "i0", Pool: pb.MMPool_MM_POOL_IMAGE, State: pb.MMState_MM_STATE_ACTIVE, Tp: 1},
		{Id: "t0", Pool: pb.MMPool_MM_POOL_TEXT, State: pb.MMState_MM_STATE_ACTIVE, Tp: 4}}
	for _, r := range reqs {
		if _, err := core.RouteMM(context.Background(), &pb.RouteMMRequest{ArrivalSeconds: r.Arrival, Images: int32(r.Images),
			PromptTokens: int32(r.Prompt), OutputTokens: int32(r.Output), Instances: ins}); err != nil {
			t.Fatal(err)
		}
	}
	return reqs
}

// The Scale gate: in switch mode gate the rule answers until a replay of
// the routed requests shows the learned autoscaler cheaper with
// confidence. With a penalty of 1 GPU-hour a missed request the
// over-provisioned "learned" autoscaler wins every episode (its misses
// cost less than its GPUs) and the gate switches it in; with no penalty
// it only costs more GPUs, and the rule keeps answering.
func TestScaleGate(t *testing.T) {
	for _, tt := range []struct {
		penalty float64
		on      bool
		reason  string
	}{{1, true, "gate passed: learned:mm-rl@rich vs heuristic:modserve on a replay of"}, {0, false, "in shadow, gate not passed:"}} {
		m := serve.NewMetrics()
		core := gateCore(t, tt.penalty, 3600, 12, serve.WithMetrics(m))
		initial := &pb.ScaleRequest{Initial: true}
		resp, err := core.Scale(context.Background(), initial)
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetSource() != pb.Source_SOURCE_HEURISTIC || resp.GetReason() != "fallback: shadow" {
			t.Fatalf("before the gate: %v", resp)
		}
		if st, _ := core.EvaluateScale(context.Background()); !strings.HasPrefix(st.LastGate, "waiting: 0 of 30 routed requests") {
			t.Fatalf("no requests yet: %+v", st)
		}
		reqs := routeBusyHalfHour(t, core)
		st, err := core.EvaluateScale(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("penalty %v: %s", tt.penalty, st.LastGate)
		if st.Requests != len(reqs) || st.Evaluations != 1 || st.Verdict.Episodes != 3 || st.Verdict.Converged != tt.on || !strings.HasPrefix(st.Reason, tt.reason) {
			t.Fatalf("penalty %v: status %+v", tt.penalty, st)
		}
		want := pb.Source_SOURCE_HEURISTIC
		if tt.on {
			want = pb.Source_SOURCE_LEARNED
			if st.Answering != "learned:mm-rl@rich" || st.Verdict.Lower <= 0.02 {
				t.Fatalf("switched in: %+v", st)
			}
		}
		if resp, err := core.Scale(context.Background(), initial); err != nil || resp.GetSource() != want {
			t.Fatalf("after the gate: %v, %v; want source %v", resp, err, want)
		}
		result := map[bool]string{false: "failed", true: "passed"}[tt.on]
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"drover_scale_gate_evaluations_total", map[string]string{"result": "waiting"}, 1},
			{"drover_scale_gate_evaluations_total", map[string]string{"result": result}, 1},
			{"drover_scale_gate_mean_gain", nil, st.Verdict.MeanGain},
			{"drover_scale_gate_lower_bound", nil, st.Verdict.Lower},
			{"drover_scale_learned_answering", nil, map[bool]float64{false: 0, true: 1}[tt.on]},
		} {
			if got := metricValue(t, m, c.name, c.labels); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
			}
		}
	}
}

// The window keeps the requests of its last GateWindow seconds, and
// GateEvery period-end Scale calls have the switch loop (RunSwitch, as
// drover serve runs it) evaluate the gate.
func TestScaleGateWindowAndKick(t *testing.T) {
	core := gateCore(t, 1, 600, 2)
	reqs := routeBusyHalfHour(t, core)
	last, n := reqs[len(reqs)-1].Arrival, 0
	for _, r := range reqs {
		if r.Arrival >= last-600 {
			n++
		}
	}
	if st := core.MMSwitch(); st.Requests != n || st.Evaluations != 0 {
		t.Fatalf("window of 600 s: %d requests held, want %d (of %d); %d evaluations", st.Requests, n, len(reqs), st.Evaluations)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { core.RunSwitch(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	w := &pb.ScaleRequest{PeriodEnd: true, Current: &pb.MMSizes{Image: 2, Text: 2}, Seconds: 300, Requests: 10, Finished: 10, Met: 10}
	for range 2 {
		if _, err := core.Scale(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(2 * time.Minute); core.MMSwitch().Evaluations == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no evaluation 2 minutes after 2 period-end calls")
		}
	}
	if st := core.MMSwitch(); st.Evaluations != 1 || !strings.Contains(st.LastGate, fmt.Sprintf("on a replay of %d routed requests in 3 episodes", n)) {
		t.Fatalf("after the kick: %+v", st)
	}
}
