package serve_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies/pdrl"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/routelog"
)

// routeFixture is pd-rl's deployment and the first 60 s of the Azure 2023
// conv trace (arrivals shifted by 1 s).
func routeFixture(tb testing.TB) (infer.Config, []infer.Request) {
	tb.Helper()
	data, err := os.ReadFile(sharedtraces.Path(tb, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	perf, err := infer.ParsePerfTable(data)
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := llm.ReadFile(sharedtraces.Path(tb, "llm", "azure_llm_2023", "AzureLLMInferenceTrace_conv.csv"), llm.FormatAzure, llm.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	reqs, err := llm.Replay{Duration: 60, Shift: 1}.Apply(tr.Requests)
	if err != nil {
		tb.Fatal(err)
	}
	return infergym.Deployment(perf), reqs
}

func routeEncoding(c infer.Config) infergym.Config {
	return infergym.Config{Arch: c.Model.Arch, LinkBytesPerSec: c.Link.BytesPerSec}
}

// lastValid is a stand-in learned actor: the last valid joint action.
func lastValid(_ []float64, mask []bool) int {
	for a := len(mask) - 1; a >= 0; a-- {
		if mask[a] {
			return a
		}
	}
	return -1
}

// servedRun replays reqs through the server: at each arrival the
// simulator's instances go to Route and its answer is applied.
func servedRun(t *testing.T, client pb.SchedulerClient, cfg infer.Config, reqs []infer.Request) (*infer.Sim, []*pb.RouteResponse) {
	t.Helper()
	s, err := infer.New(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	var st infergym.State
	var answers []*pb.RouteResponse
	for {
		r, v, err := s.Next()
		if err == infer.ErrDone {
			return s, answers
		}
		if err != nil {
			t.Fatal(err)
		}
		st = infergym.StateOf(v, st)
		resp, err := client.Route(context.Background(), &pb.RouteRequest{RequestId: fmt.Sprint(r.ID), PromptTokens: int32(r.Prompt),
			OutputTokens: int32(r.Output), Instances: serve.RouteInstances(st), UnixNanos: int64(1e9 * (1 + v.Now()))})
		if err != nil {
			t.Fatalf("request %d: %v", r.ID, err)
		}
		f, err := kv.Parse(resp.KvFormat)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(infer.Decision{Prefill: int(resp.Prefill), Decode: int(resp.Decode), Format: f}); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, resp)
	}
}

// localRun routes reqs with d in process.
func localRun(t *testing.T, cfg infer.Config, reqs []infer.Request, d pdrl.Decider) *infer.Sim {
	t.Helper()
	s, err := infer.New(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(pdrl.Router(d)); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRouteEndToEnd replays a trace window through the policy server over
// bufconn: every request is routed and logged, and the simulation of the
// served decisions is the simulation of routing locally, request by
// request and in its summary: with HACK's router while the learned one
// has not passed the gate, and with the learned one once it has.
func TestRouteEndToEnd(t *testing.T) {
	cfg, reqs := routeFixture(t)
	enc := routeEncoding(cfg)
	learned := func() *pdrl.Policy {
		p, err := pdrl.New(enc, lastValid)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name      string
		converged bool
		local     pdrl.Decider
		source    pb.Source
		policy    string
		reason    string
	}{
		{"not converged: HACK answers", false, pdrl.NewHACK(enc.Arch), pb.Source_SOURCE_HEURISTIC, "heuristic:hack", "fallback: " + serve.FallbackNotConverged},
		{"converged: pd-rl answers", true, learned(), pb.Source_SOURCE_LEARNED, "learned:pd-rl@v1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &serve.MemorySink{}
			h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink),
				serve.WithRouter(serve.RouteConfig{Encoder: enc, Learned: learned, Version: "v1", Converged: tt.converged}))
			served, answers := servedRun(t, h.client, cfg, reqs)
			local := localRun(t, cfg, reqs, tt.local)
			if len(answers) != len(reqs) {
				t.Fatalf("%d answers for %d requests", len(answers), len(reqs))
			}
			for _, a := range answers {
				if a.Source != tt.source || a.Policy != tt.policy || a.Reason != tt.reason {
					t.Fatalf("answer %+v, want source %v policy %s reason %q", a, tt.source, tt.policy, tt.reason)
				}
			}
			// %v prints each float in its shortest exact form (NaN as NaN).
			if got, want := fmt.Sprintf("%+v", served.Results()), fmt.Sprintf("%+v", local.Results()); got != want {
				t.Fatal("served results differ from the local run's")
			}
			if got, want := fmt.Sprintf("%+v", served.Summary()), fmt.Sprintf("%+v", local.Summary()); got != want {
				t.Fatalf("served summary\n%s\nlocal\n%s", got, want)
			}
			if sum := served.Summary(); sum.Finished != len(reqs) {
				t.Fatalf("%d of %d requests finished", sum.Finished, len(reqs))
			}
			recs := sink.Routes()
			if len(recs) != len(reqs) {
				t.Fatalf("%d route records for %d requests", len(recs), len(reqs))
			}
			for i, rr := range recs {
				a := answers[i]
				if rr.ID != a.DecisionId || rr.Policy != tt.policy || rr.Prefill != a.PrefillId || rr.Decode != a.DecodeId || rr.Format != a.KvFormat || rr.RequestID != fmt.Sprint(i) {
					t.Fatalf("record %+v for answer %+v", rr, a)
				}
				// The other router decided beside the one that answered.
				if shadow := map[bool]string{false: "learned:pd-rl@v1", true: "heuristic:hack"}[tt.converged]; rr.Shadow != shadow || rr.ShadowFailure != "" || rr.ShadowFormat == "" {
					t.Fatalf("record %+v: want shadow %s", rr, shadow)
				}
			}
		})
	}
}

// TestRouteCheckpoint serves the committed pd-rl checkpoint (drover train
// --env pd-rl --algo ppo --steps 100000 --eval-seeds 3): its gate verdict
// is "converged" (a mean gain above the gate's 2% margin), so the learned
// router answers, and its served run equals the checkpoint's local run;
// served as not converged, HACK answers, and the served run is HACK's.
func TestRouteCheckpoint(t *testing.T) {
	cfg, reqs := routeFixture(t)
	enc := routeEncoding(cfg)
	m, newP, err := pdrl.Load(filepath.Join("..", "checkpoints", "pd-rl"), enc)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Converged || !(m.Eval["gate_mean_gain"] > 0.02) {
		t.Fatalf("the checkpoint says converged %v, gain %v", m.Converged, m.Eval["gate_mean_gain"])
	}
	for _, converged := range []bool{m.Converged, false} {
		h := startBufconn(t, serve.ServerConfig{}, serve.WithRouter(serve.RouteConfig{Encoder: enc, Learned: newP, Version: "ckpt", Converged: converged}))
		served, answers := servedRun(t, h.client, cfg, reqs)
		var local *infer.Sim
		if converged {
			local = localRun(t, cfg, reqs, newP())
		} else {
			local = localRun(t, cfg, reqs, pdrl.NewHACK(enc.Arch))
		}
		if got, want := fmt.Sprintf("%+v", served.Results()), fmt.Sprintf("%+v", local.Results()); got != want {
			t.Fatalf("converged %v: served results differ from the local run's", converged)
		}
		if want := map[bool]pb.Source{false: pb.Source_SOURCE_HEURISTIC, true: pb.Source_SOURCE_LEARNED}[converged]; answers[0].Source != want {
			t.Fatalf("converged %v: answered by %v", converged, answers[0].Source)
		}
	}
}

// TestRouteErrors: a bad field is InvalidArgument naming it; a core
// without a router answers FailedPrecondition.
func TestRouteErrors(t *testing.T) {
	cfg, _ := routeFixture(t)
	h := startBufconn(t, serve.ServerConfig{}, serve.WithRouter(serve.RouteConfig{Encoder: routeEncoding(cfg)}))
	good := func() *pb.RouteRequest {
		return &pb.RouteRequest{PromptTokens: 10, OutputTokens: 5, Instances: []*pb.Instance{
			{Id: "p", Role: pb.InstanceRole_INSTANCE_PREFILL, Gpu: "a100-80gb", Tp: 8, MaxBytes: 1 << 40},
			{Id: "d", Role: pb.InstanceRole_INSTANCE_DECODE, Gpu: "a100-80gb", Tp: 8, MaxBytes: 1 << 40}}}
	}
	resp, err := h.client.Route(context.Background(), good())
	if err != nil || resp.PrefillId != "p" || resp.DecodeId != "d" || resp.KvFormat != "hack-pi64" || resp.Reason != "fallback: "+serve.FallbackNoModel {
		t.Fatalf("good request: %+v, %v", resp, err)
	}
	tests := []struct {
		name  string
		edit  func(*pb.RouteRequest)
		field string
	}{
		{"no prompt", func(r *pb.RouteRequest) { r.PromptTokens = 0 }, "prompt_tokens"},
		{"no instances", func(r *pb.RouteRequest) { r.Instances = nil }, "instances"},
		{"unknown gpu", func(r *pb.RouteRequest) { r.Instances[1].Gpu = "tpu" }, "instances[1].gpu"},
		{"negative pending", func(r *pb.RouteRequest) { r.Instances[0].PendingTokens = -1 }, "instances[0].pending_tokens"},
		{"unknown role", func(r *pb.RouteRequest) { r.Instances[1].Role = 7 }, "instances[1].role"},
		{"no memory", func(r *pb.RouteRequest) { r.Instances[0].MaxBytes = 0 }, "instances[0].max_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good()
			tt.edit(r)
			_, err := h.client.Route(context.Background(), r)
			if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || len(s.Message()) < len(tt.field) || s.Message()[:len(tt.field)] != tt.field {
				t.Fatalf("%v, want InvalidArgument on %s", err, tt.field)
			}
		})
	}
	plain := startBufconn(t, serve.ServerConfig{})
	if _, err := plain.client.Route(context.Background(), good()); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("no router: %v, want FailedPrecondition", err)
	}
}

// TestRouteLogRecord: a route goes to the decision log as a valid decision
// record: the request as the job, the prefill and decode instances as the
// workers, the KV format in the sync column.
func TestRouteLogRecord(t *testing.T) {
	rr := &serve.RouteRecord{ID: "x-1", At: time.Unix(5, 0), RequestID: "17", Prompt: 900, Output: 40, Instances: 5,
		Prefill: "2", Decode: "3", Format: "hack-pi64", Source: "heuristic", Policy: "heuristic:hack", Fallback: serve.FallbackNoModel}
	r := serve.LogRecord(rr)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	d := r.Decision
	if d.RequestID != "x-1" || d.JobID != "17" || len(d.Workers) != 2 || d.Workers[0] != "2" || d.Workers[1] != "3" || d.Sync != "hack-pi64" || d.Source != "heuristic:hack" {
		t.Fatalf("logged as %+v", d)
	}
}

// TestRouteLogReplay: the route log's records of a served run replay it.
// Under the logged answers the simulation meets, at every arrival, the
// instance states the client sent (all of them, every field), and ends
// with the served run's latencies; the learned router's shadow decision
// is in every record while HACK answers.
func TestRouteLogReplay(t *testing.T) {
	cfg, reqs := routeFixture(t)
	enc := routeEncoding(cfg)
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
	learned := func() *pdrl.Policy {
		p, err := pdrl.New(enc, lastValid)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink),
		serve.WithRouter(serve.RouteConfig{Encoder: enc, Learned: learned, Version: "v1", Deployment: "pd-rl"}))
	served, _ := servedRun(t, h.client, cfg, reqs)
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	recs, partial, err := routelog.ReadFile(filepath.Join(dir, routelog.FileName))
	if err != nil || partial != 0 || len(recs) != len(reqs) {
		t.Fatalf("%d records for %d requests, partial %d: %v", len(recs), len(reqs), partial, err)
	}
	for _, r := range recs {
		if r.Deployment != "pd-rl" || r.Model != enc.Arch.Name || r.Shadow == nil || r.Shadow.Policy != "learned:pd-rl@v1" || r.Shadow.Failure != "" || r.Fallback != serve.FallbackNotConverged {
			t.Fatalf("record %+v", r)
		}
	}
	// The client's clock is 1 s + the simulation's: origin 1 s.
	rp, err := routelog.NewReplay(recs, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Check(cfg); err != nil {
		t.Fatal(err)
	}
	s, err := infer.New(cfg, rp.Requests)
	if err != nil {
		t.Fatal(err)
	}
	logged := rp.Logged()
	if _, err := s.Run(logged); err != nil {
		t.Fatal(err)
	}
	if logged.Compared != len(reqs) || logged.Matched != len(reqs) {
		t.Fatalf("states matched at %d of %d arrivals (first mismatch %s)", logged.Matched, logged.Compared, logged.FirstMismatch)
	}
	want, got := served.Summary(), s.Summary()
	if rel := math.Abs(got.E2E.Mean/want.E2E.Mean - 1); rel > 1e-9 || got.Finished != want.Finished {
		t.Fatalf("replayed JCT mean %v (%d finished), served %v (%d): relative difference %v", got.E2E.Mean, got.Finished, want.E2E.Mean, want.Finished, rel)
	}
	// Another deployment is refused.
	other := cfg
	other.Instances = other.Instances[1:]
	if err := rp.Check(other); !errors.Is(err, routelog.ErrDeployment) {
		t.Fatalf("a deployment with one instance less: %v", err)
	}
}

// hackClone is a stand-in learned actor that routes as HACK does on this
// deployment: prefill slot 0, HACK Pi = 64, decode slot 0.
func hackClone(t *testing.T, enc infergym.Config) pdrl.Actor {
	e, err := infergym.NewEncoder(enc)
	if err != nil {
		t.Fatal(err)
	}
	a := e.Action(0, e.FormatIndex(kv.HACKPi(64)), 0)
	return func(_ []float64, mask []bool) int {
		if mask[a] {
			return a
		}
		return lastValid(nil, mask)
	}
}

// TestRouteGate: in the gate's mode the learned router decides in shadow
// until the gate, on a replay of the routed requests, says it beats HACK;
// then it answers. A router no better than HACK stays in shadow at the
// default margin; with a margin of -50% (a test setting: "no more than
// 50% worse") the same router passes and answers the next requests.
func TestRouteGate(t *testing.T) {
	cfg, reqs := routeFixture(t)
	enc := routeEncoding(cfg)
	tests := []struct {
		name       string
		sw         serve.SwitchConfig
		actor      pdrl.Actor
		wantSwitch bool
	}{
		{"as HACK, default margin", serve.SwitchConfig{Every: -1, Seeds: 4}, hackClone(t, enc), false},
		{"as HACK, margin -50%", serve.SwitchConfig{Every: -1, Seeds: 4, Margin: -0.5, BackMargin: -1}, hackClone(t, enc), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			learned := func() *pdrl.Policy {
				p, err := pdrl.New(enc, tt.actor)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			m := serve.NewMetrics()
			h := startBufconn(t, serve.ServerConfig{}, serve.WithSwitch(tt.sw), serve.WithMetrics(m),
				serve.WithRouter(serve.RouteConfig{Encoder: enc, Learned: learned, Version: "v1", Replay: &cfg, Deployment: "pd-rl"}))
			if st := h.core.RouteSwitch(); st.Mode != serve.SwitchGate || st.Answering != "heuristic:hack" || st.Shadow != "learned:pd-rl@v1" {
				t.Fatalf("before: %+v", st)
			}
			_, answers := servedRun(t, h.client, cfg, reqs)
			for _, a := range answers {
				if a.Source != pb.Source_SOURCE_HEURISTIC || a.Reason != "fallback: "+serve.FallbackShadow {
					t.Fatalf("answer before the gate: %+v", a)
				}
			}
			st, err := h.core.EvaluateRoute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Evaluations != 1 || st.Verdict.MeanGain != 0 {
				t.Fatalf("a router routing as HACK: %+v", st)
			}
			if switched := st.Answering == "learned:pd-rl@v1"; switched != tt.wantSwitch {
				t.Fatalf("switched %v, want %v: %+v", switched, tt.wantSwitch, st)
			}
			_, answers = servedRun(t, h.client, cfg, reqs[:10])
			want := map[bool]pb.Source{false: pb.Source_SOURCE_HEURISTIC, true: pb.Source_SOURCE_LEARNED}[tt.wantSwitch]
			if answers[0].Source != want {
				t.Fatalf("after the gate: %+v", answers[0])
			}
			result := map[bool]string{false: "failed", true: "passed"}[tt.wantSwitch]
			learnedAfter := map[bool]float64{false: 0, true: 10}[tt.wantSwitch]
			for _, c := range []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"drover_route_learned_answering", nil, learnedAfter / 10},
				{"drover_route_gate_evaluations_total", map[string]string{"result": result}, 1},
				{"drover_route_gate_mean_gain", nil, 0},
				{"drover_route_decisions_total", map[string]string{"source": "heuristic", "fallback": serve.FallbackShadow}, float64(len(reqs)) + 10 - learnedAfter},
				{"drover_route_decisions_total", map[string]string{"source": "learned", "fallback": ""}, learnedAfter},
			} {
				if got := metricValue(t, m, c.name, c.labels); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
		})
	}
}

// TestRouteGateConfig: the gate's mode needs a deployment to replay.
func TestRouteGateConfig(t *testing.T) {
	cfg, _ := routeFixture(t)
	if _, err := serve.NewCore(serve.WithRouter(serve.RouteConfig{Encoder: routeEncoding(cfg), Mode: serve.SwitchGate})); err == nil {
		t.Fatal("gate mode without a deployment accepted")
	}
	if _, err := serve.NewCore(serve.WithRouter(serve.RouteConfig{Encoder: routeEncoding(cfg), Mode: "sometimes"})); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

// metricValue returns the value of the series of metric name with labels
// (a counter's or a gauge's; 0 when the metric has no such series yet),
// failing the test when the metric is not registered.
func metricValue(t *testing.T, m *serve.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, x := range mf.GetMetric() {
			for _, l := range x.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			if c := x.GetCounter(); c != nil {
				return c.GetValue()
			}
			return x.GetGauge().GetValue()
		}
		return 0
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestRouteGateRunSwitch: RunSwitch evaluates the route gate after every
// SwitchConfig.Every routed requests, off the request path.
func TestRouteGateRunSwitch(t *testing.T) {
	cfg, reqs := routeFixture(t)
	enc := routeEncoding(cfg)
	learned := func() *pdrl.Policy {
		p, err := pdrl.New(enc, hackClone(t, enc))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	h := startBufconn(t, serve.ServerConfig{}, serve.WithSwitch(serve.SwitchConfig{Every: 50, Seeds: 4, Margin: -0.5, BackMargin: -1}),
		serve.WithRouter(serve.RouteConfig{Encoder: enc, Learned: learned, Version: "v1", Replay: &cfg}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.core.RunSwitch(ctx)
	}()
	defer func() { cancel(); <-done }()
	servedRun(t, h.client, cfg, reqs)
	// The evaluations run on RunSwitch's goroutine: wait for the first.
	deadline := time.Now().Add(testDeadline)
	for h.core.RouteSwitch().Evaluations == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no route gate evaluation within %v: %+v", testDeadline, h.core.RouteSwitch())
		}
		time.Sleep(time.Millisecond)
	}
	if st := h.core.RouteSwitch(); st.Answering != "learned:pd-rl@v1" || !strings.HasPrefix(st.Reason, "gate passed") && !strings.HasPrefix(st.Reason, "live gate holds") {
		t.Fatalf("after RunSwitch's evaluation: %+v", st)
	}
}
