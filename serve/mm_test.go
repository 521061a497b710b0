package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/mmlog"
	pb "github.com/drover-sched/drover/serve/proto"
)

// mmProfile is Llama-3.2-11B-Vision's offline profile as drover serve
// -scale computes it (mmscale.ProfileOf on the synthetic week drawn with
// seed 2, objective 5 x the isolated TTFT of a median text-only or
// one-image request, modserve-route pools), rounded: any profile serves
// the equivalence below, this one sizes pools as the server would.
var mmProfile = mmscale.Profile{ImageTokensPerSec: 21701, TextTokensPerSec: 9552, MonoRequestsPerSec: 0.8225, EncodeSeconds: 0.1224}

// mmScaleConfig is ModServe's rule with that profile's objective.
func mmScaleConfig() mmscale.Config {
	cfg := mmscale.DefaultConfig()
	cfg.SLO = mmscale.Objective{Factor: 5, Text: 0.026287, Image: 0.104971}
	return cfg
}

func newModServeScaler() (mmscale.Scaler, error) {
	return mmscale.NewModServe(mmScaleConfig(), mmProfile, mmscale.Sizes{Image: 2, Text: 2})
}

// decisionLog is a router that records every decision of the router it
// wraps.
type decisionLog struct {
	mm.Router
	got []mm.Decision
}

func (l *decisionLog) Route(v *mm.View, r *mm.Request, d *mm.Decision) error {
	err := l.Router.Route(v, r, d)
	l.got = append(l.got, mm.Decision{Instance: d.Instance, Images: slices.Clone(d.Images), Priority: d.Priority})
	return err
}

// mmRun runs reqs on cfg under r and returns the simulation and its
// decisions.
func mmRun(t *testing.T, cfg mm.Config, reqs []mm.Request, r mm.Router) (*mm.Sim, []mm.Decision) {
	t.Helper()
	s, err := mm.New(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	l := &decisionLog{Router: r}
	if _, err := s.Run(l); err != nil {
		t.Fatal(err)
	}
	return s, l.got
}

// TestRouteMMEndToEnd routes a window of the generated LMM week (the
// Tuesday's first busy 2 minutes at 5M requests a week) through the server
// over bufconn, and locally with the same router, on ModServe's static
// deployment (48 image and 20 text instances) and on the monolith (32):
// the decisions are equal request by request (text instance, each image's
// instance, priority bit for bit), so every result and the summary are
// too; every answer is logged with its request and instances.
func TestRouteMMEndToEnd(t *testing.T) {
	reqs, err := llm.LMMSynth{Requests: 5_000_000, Start: 1440 + 600, Minutes: 2}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cfg    mm.Config
		router string
	}{
		{"modserve on decoupled pools", mm.Decoupled(mm.InternVL25_26B, 48, 20), modserve.Name},
		{"round robin images (Decoup)", mm.Decoupled(mm.Llama32_11BVision, 48, 20), modserve.Decoup},
		{"monolith", mm.Monolith(mm.Llama32_11BVision, 32), modserve.Monolith},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &serve.MemorySink{}
			h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink), serve.WithMM(serve.MMConfig{Base: tt.cfg, Router: tt.router, Deployment: "test"}))
			local, err := modserve.New(tt.router)
			if err != nil {
				t.Fatal(err)
			}
			ls, want := mmRun(t, tt.cfg, reqs, local)
			remote := &serve.RemoteMMRouter{Client: h.client}
			rs, got := mmRun(t, tt.cfg, reqs, remote)
			if len(got) != len(reqs) {
				t.Fatalf("%d decisions for %d requests", len(got), len(reqs))
			}
			for i := range want {
				if diff := cmp.Diff(want[i], got[i]); diff != "" {
					t.Fatalf("request %d (%+v): decision (-local,+served):\n%s", i, reqs[i], diff)
				}
			}
			if g, w := fmt.Sprintf("%+v", rs.Results()), fmt.Sprintf("%+v", ls.Results()); g != w {
				t.Fatal("served results differ from the local run's")
			}
			if remote.Sources["heuristic:"+tt.router] != len(reqs) {
				t.Fatalf("answers by %v, want all %d by heuristic:%s", remote.Sources, len(reqs), tt.router)
			}
			recs := sink.MMRoutes()
			if len(recs) != len(reqs) {
				t.Fatalf("%d records for %d requests", len(recs), len(reqs))
			}
			var buf bytes.Buffer
			for i, rec := range recs {
				if rec.RequestID != fmt.Sprint(i) || rec.Instance != want[i].Instance || !slices.Equal(rec.ImageInstances, want[i].Images) ||
					rec.Priority != want[i].Priority || rec.Fallback != serve.FallbackNoModel || len(rec.Instances) != len(rec.InstanceIDs) {
					t.Fatalf("record %d: %+v, want decision %+v", i, rec, want[i])
				}
				line := serve.MMRouteLogRecord(rec)
				buf.Write(mmlog.EncodeRoute(nil, &line))
			}
			back, partial, err := mmlog.ReadRoutes(&buf)
			if err != nil || partial != 0 || len(back) != len(reqs) {
				t.Fatalf("log read back: %d records, %d partial, %v", len(back), partial, err)
			}
			if n := sum(back, func(r mmlog.Route) int { return r.Images }); n != sum(reqs, func(r mm.Request) int { return r.Images }) {
				t.Fatalf("log holds %d images", n)
			}
		})
	}
}

// liveLog is a router that records, with every decision of the router
// it wraps, the instances live when it decided.
type liveLog struct {
	decisionLog
	live [][]int
}

func (l *liveLog) Route(v *mm.View, r *mm.Request, d *mm.Decision) error {
	l.live = append(l.live, slices.Clone(v.Live()))
	return l.decisionLog.Route(v, r, d)
}

// TestRouteMMAutoscaled routes ten minutes of the generated LMM week (5M
// requests a week) through the server, and locally with the same router,
// on pools that change every 10 s (an instance added to each pool three
// times in four, then a starting one removed at once and the two oldest
// active ones drained), so that gone instances sit among live ones: the
// decisions are equal request by request, round robin included (it
// counts gone instances by number), while each request sent the server
// only the instances live at its arrival, named by their indexes.
func TestRouteMMAutoscaled(t *testing.T) {
	reqs, err := llm.LMMSynth{Requests: 5_000_000, Start: 1440, Minutes: 10}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, cfg mm.Config, r mm.Router) (*mm.Sim, *liveLog) {
		s, err := mm.New(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		l := &liveLog{decisionLog: decisionLog{Router: r}}
		pools := []mm.Pool{mm.Image, mm.Text}
		if !cfg.Decoupled() {
			pools = []mm.Pool{mm.Mono}
		}
		for step := 1; !s.Done(); step++ {
			if err := s.RunUntil(10*float64(step), l); err != nil {
				t.Fatal(err)
			}
			if 10*float64(step) > reqs[len(reqs)-1].Arrival {
				continue
			}
			v := s.View()
			for _, p := range pools {
				if step%4 != 3 {
					if _, err := s.AddInstance(p); err != nil {
						t.Fatal(err)
					}
					continue
				}
				var starting, active []int
				for _, i := range v.Live() {
					if x := v.Instances[i]; x.Pool == p && x.State == mm.Starting {
						starting = append(starting, i)
					} else if x.Pool == p && x.State == mm.Active {
						active = append(active, i)
					}
				}
				for _, i := range append(starting[:min(1, len(starting))], active[:min(2, len(active)-1)]...) {
					if err := s.RemoveInstance(i); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return s, l
	}
	for _, tt := range []struct {
		cfg    mm.Config
		router string
	}{
		{mm.Decoupled(mm.InternVL25_26B, 6, 3), modserve.Name},
		{mm.Decoupled(mm.InternVL25_26B, 6, 3), modserve.Decoup},
		{mm.Decoupled(mm.Llama32_11BVision, 6, 3), modserve.Sched},
		{mm.Monolith(mm.InternVL25_26B, 4), modserve.Monolith},
	} {
		t.Run(tt.router, func(t *testing.T) {
			sink := &serve.MemorySink{}
			h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink), serve.WithMM(serve.MMConfig{Base: tt.cfg, Router: tt.router, Deployment: "test"}))
			local, err := modserve.New(tt.router)
			if err != nil {
				t.Fatal(err)
			}
			ls, want := run(t, tt.cfg, local)
			rs, got := run(t, tt.cfg, &serve.RemoteMMRouter{Client: h.client})
			for i := range want.got {
				if diff := cmp.Diff(want.got[i], got.got[i]); diff != "" {
					t.Fatalf("request %d (%+v): decision (-local,+served):\n%s", i, reqs[i], diff)
				}
			}
			if g, w := fmt.Sprintf("%+v", rs.Results()), fmt.Sprintf("%+v", ls.Results()); g != w {
				t.Fatal("served results differ from the local run's")
			}
			if g, w := rs.GPUSeconds(), ls.GPUSeconds(); g != w {
				t.Fatalf("served run's GPU seconds %v, local %v", g, w)
			}
			recs := sink.MMRoutes()
			if len(recs) != len(reqs) {
				t.Fatalf("%d records for %d requests", len(recs), len(reqs))
			}
			sent := 0
			for i, rec := range recs {
				ids := make([]string, len(got.live[i]))
				for k, x := range got.live[i] {
					ids[k] = fmt.Sprint(x)
				}
				if !slices.Equal(rec.InstanceIDs, ids) {
					t.Fatalf("request %d listed instances %v, want the live ones %v", i, rec.InstanceIDs, ids)
				}
				if want := got.got[i]; rec.InstanceIDs[rec.Instance] != fmt.Sprint(want.Instance) {
					t.Fatalf("request %d: the server answered instance %s, the simulation ran it on %d", i, rec.InstanceIDs[rec.Instance], want.Instance)
				}
				// The log line keeps the numbers and the count deployed,
				// which Decoup's and Sched's round robin read.
				line := serve.MMRouteLogRecord(rec)
				if err := line.Validate(); err != nil {
					t.Fatalf("request %d: log line: %v", i, err)
				}
				live := got.live[i]
				if line.Deployed <= live[len(live)-1] {
					t.Fatalf("request %d: deployed %d, but instance %d is live", i, line.Deployed, live[len(live)-1])
				}
				for k, x := range live {
					if line.Instances[k].Number != x {
						t.Fatalf("request %d: instance %d logged with number %d, want %d", i, k, line.Instances[k].Number, x)
					}
				}
				sent += len(ids)
			}
			v := rs.View()
			t.Logf("%d requests, %d instances deployed, %d live at the end; %.1f instances sent a request", len(reqs), len(v.Instances), len(v.Live()), float64(sent)/float64(len(recs)))
			if gone := len(v.Instances) - len(v.Live()); gone < 2*len(v.Live()) {
				t.Errorf("%d instances gone, %d live: want the gone ones to outnumber the live twice", gone, len(v.Live()))
			}
		})
	}
}

func sum[T any](xs []T, f func(T) int) int {
	n := 0
	for _, x := range xs {
		n += f(x)
	}
	return n
}

// TestScaleEndToEnd drives a simulated half day of the generated LMM week
// (day 1, 06:00 to 18:00, the trace's 1M requests a week) under
// mmscale.Run, once with ModServe's autoscaler locally and once asking the
// server over bufconn every monitoring window (a minute) and every
// 5-minute period: the pool sizes of every window, the GPU-hours and the
// attainment are the same, the pools both grow and shrink, and the scale
// log holds every call in order (one initial, a window a minute, every
// fifth of them a period end).
func TestScaleEndToEnd(t *testing.T) {
	reqs, err := llm.LMMSynth{Start: 1440 + 360, Minutes: 720}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	cfg := mm.Decoupled(mm.Llama32_11BVision, 1, 1)
	run := func(sc mmscale.Scaler) mmscale.Outcome {
		s, err := mm.New(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := modserve.New(modserve.RouteOnly)
		out, err := mmscale.Run(s, reqs, r, sc, mmScaleConfig())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	local, err := newModServeScaler()
	if err != nil {
		t.Fatal(err)
	}
	want := run(local)
	sink := &serve.MemorySink{}
	h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink), serve.WithMM(serve.MMConfig{Base: cfg, NoRouter: true, Scaler: newModServeScaler}))
	remote := &serve.RemoteScaler{Client: h.client, Deployment: "day1"}
	got := run(remote)
	if err := remote.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Samples, got.Samples); diff != "" {
		t.Fatalf("samples (-local,+served):\n%s", diff)
	}
	gh, wh := got.Summary.GPUHours, want.Summary.GPUHours
	if gh != wh || got.Attainment != want.Attainment || got.Added != want.Added || got.Removed != want.Removed {
		t.Fatalf("served %.3f GPU-hours, attainment %v, %d added, %d removed; local %.3f, %v, %d, %d", gh, got.Attainment, got.Added, got.Removed, wh, want.Attainment, want.Added, want.Removed)
	}
	t.Logf("half a day of %d requests: %.1f GPU-hours, attainment %.4f, %d instances added, %d removed", len(reqs), gh, got.Attainment, got.Added, got.Removed)
	if got.Added == 0 || got.Removed == 0 {
		t.Errorf("%d instances added, %d removed: want the pools to grow and shrink", got.Added, got.Removed)
	}
	recs := sink.Scales()
	if len(recs) != 1+len(want.Samples) {
		t.Fatalf("%d scale records for %d windows", len(recs), len(want.Samples))
	}
	ends := 0
	for i, rec := range recs {
		if rec.Initial != (i == 0) || rec.Deployment != "day1" || rec.Policy != "heuristic:modserve" || rec.Fallback != serve.FallbackNoModel {
			t.Fatalf("record %d: %+v", i, rec)
		}
		if rec.PeriodEnd {
			ends++
		}
		if i > 0 && rec.Sizes != want.Samples[i-1].Sizes && !(rec.Sizes.Image < 1 || rec.Sizes.Text < 1) {
			// The driver reaches the targets but for a pool's last active
			// instance, which never goes: the samples equal the answers.
			t.Fatalf("record %d answers %+v, the window's sizes are %+v", i, rec.Sizes, want.Samples[i-1].Sizes)
		}
		line := serve.ScaleLogRecord(rec)
		if err := line.Validate(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if ends != len(want.Samples)/5 {
		t.Fatalf("%d period ends in %d windows", ends, len(want.Samples))
	}
}

// stubScaler is a learned autoscaler's stand-in: it asks for fixed sizes,
// or panics.
type stubScaler struct {
	sizes mmscale.Sizes
	panic bool
}

func (s stubScaler) Initial() mmscale.Sizes { return s.sizes }
func (s stubScaler) Decide(mmscale.Window, mmscale.Sizes, bool) mmscale.Sizes {
	if s.panic {
		panic("stub")
	}
	return s.sizes
}

// TestScaleLearnedGate checks who answers Scale with a learned autoscaler
// behind the gate: ModServe's rule while the checkpoint is not converged
// (the learned sizes in shadow), the learned one once it is (ModServe's in
// shadow), ModServe's in shadow mode whatever the verdict, and ModServe's
// when the learned one fails.
func TestScaleLearnedGate(t *testing.T) {
	learned := mmscale.Sizes{Image: 7, Text: 3}
	w := mmscale.Window{Seconds: 300, Requests: 600, ImageTokens: 300 * 21701 * 2.5, TextLoad: 300 * 9552 * 1.5, Finished: 600, Met: 600}
	heur := mmscale.Sizes{Image: 3, Text: 2} // ceil(2.5), ceil(1.5)
	tests := []struct {
		name             string
		mode             string
		converged, panic bool
		sizes            mmscale.Sizes
		source           pb.Source
		policy, reason   string
		shadow           string
	}{
		{"not converged", "", false, false, heur, pb.Source_SOURCE_HEURISTIC, "heuristic:modserve", "fallback: not-converged", "learned:mm-rl@v1"},
		{"converged", "", true, false, learned, pb.Source_SOURCE_LEARNED, "learned:mm-rl@v1", "", "heuristic:modserve"},
		{"shadow mode", serve.SwitchShadow, true, false, heur, pb.Source_SOURCE_HEURISTIC, "heuristic:modserve", "fallback: shadow", "learned:mm-rl@v1"},
		{"learned fails", "", true, true, heur, pb.Source_SOURCE_HEURISTIC, "heuristic:modserve", "fallback: error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &serve.MemorySink{}
			m := serve.NewMetrics()
			h := startBufconn(t, serve.ServerConfig{}, serve.WithSink(sink), serve.WithMetrics(m), serve.WithMM(serve.MMConfig{Base: mm.Decoupled(mm.Llama32_11BVision, 1, 1),
				Scaler: newModServeScaler, Learned: func() (mmscale.Scaler, error) { return stubScaler{learned, tt.panic}, nil },
				Version: "v1", Converged: tt.converged, Mode: tt.mode}))
			resp, err := h.client.Scale(context.Background(), serve.ScaleRequestOf(w, mmscale.Sizes{Image: 2, Text: 2}, true))
			if err != nil {
				t.Fatal(err)
			}
			s := resp.GetSizes()
			if got := (mmscale.Sizes{Image: int(s.GetImage()), Text: int(s.GetText())}); got != tt.sizes || resp.GetSource() != tt.source || resp.GetPolicy() != tt.policy || resp.GetReason() != tt.reason {
				t.Fatalf("answer %v, want sizes %+v by %s (%v, %q)", resp, tt.sizes, tt.policy, tt.source, tt.reason)
			}
			rec := sink.Scales()[0]
			if rec.Shadow != tt.shadow {
				t.Fatalf("shadow %q, want %q", rec.Shadow, tt.shadow)
			}
			st := h.core.MMSwitch()
			// The status names who answers a call needing no fallback.
			if st.Answering != map[bool]string{false: "heuristic:modserve", true: "learned:mm-rl@v1"}[tt.converged && tt.mode != serve.SwitchShadow] {
				t.Fatalf("switch %+v", st)
			}
			if got := metricValue(t, m, "drover_scale_decisions_total", map[string]string{"source": map[bool]string{false: "heuristic", true: "learned"}[tt.source == pb.Source_SOURCE_LEARNED],
				"fallback": strings.TrimPrefix(tt.reason, "fallback: ")}); got != 1 {
				t.Fatalf("drover_scale_decisions_total %v, want 1", got)
			}
		})
	}
}

// TestMMInvalid checks that bad requests are refused with
// InvalidArgument naming the field, and calls the core was not configured
// for with FailedPrecondition.
func TestMMInvalid(t *testing.T) {
	h := startBufconn(t, serve.ServerConfig{}, serve.WithMM(serve.MMConfig{Base: mm.Decoupled(mm.Llama32_11BVision, 1, 1), Scaler: newModServeScaler}))
	ok := []*pb.MMInstance{{Id: "i", Pool: pb.MMPool_MM_POOL_IMAGE, State: pb.MMState_MM_STATE_ACTIVE, Tp: 1}, {Id: "t", Pool: pb.MMPool_MM_POOL_TEXT, State: pb.MMState_MM_STATE_ACTIVE, Tp: 4}}
	route := func(f func(*pb.RouteMMRequest)) *pb.RouteMMRequest {
		r := &pb.RouteMMRequest{Images: 2, PromptTokens: 100, OutputTokens: 10, ArrivalSeconds: 1, Instances: ok}
		f(r)
		return r
	}
	for _, tt := range []struct {
		name  string
		req   *pb.RouteMMRequest
		field string
	}{
		{"nan arrival", route(func(r *pb.RouteMMRequest) { r.ArrivalSeconds = math.NaN() }), "arrival_seconds"},
		{"no prompt", route(func(r *pb.RouteMMRequest) { r.PromptTokens = 0 }), "prompt_tokens"},
		{"negative images", route(func(r *pb.RouteMMRequest) { r.Images = -1 }), "images"},
		{"no instances", route(func(r *pb.RouteMMRequest) { r.Instances = nil }), "instances"},
		{"mixed deployment", route(func(r *pb.RouteMMRequest) {
			r.Instances = append(slices.Clone(ok), &pb.MMInstance{Pool: pb.MMPool_MM_POOL_MONO, Tp: 4})
		}), "instances"},
		{"bad pool", route(func(r *pb.RouteMMRequest) { r.Instances = []*pb.MMInstance{{Pool: 7, Tp: 1}} }), "instances[0].pool"},
		{"no active text instance", route(func(r *pb.RouteMMRequest) { r.Instances = ok[:1] }), "instances"},
		{"number without deployed", route(func(r *pb.RouteMMRequest) { r.Instances = numbered(ok, 0, 1) }), "instances[1].number"},
		{"negative deployed", route(func(r *pb.RouteMMRequest) { r.Deployed = -1 }), "deployed"},
		{"deployed below the list", route(func(r *pb.RouteMMRequest) { r.Deployed = 1 }), "deployed"},
		{"number past deployed", route(func(r *pb.RouteMMRequest) { r.Instances, r.Deployed = numbered(ok, 3, 7), 7 }), "instances[1].number"},
		{"numbers not increasing", route(func(r *pb.RouteMMRequest) { r.Instances, r.Deployed = numbered(ok, 5, 5), 7 }), "instances[1].number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.client.RouteMM(context.Background(), tt.req)
			wantInvalid(t, err, tt.field)
		})
	}
	w := mmscale.Window{Seconds: 60, Finished: 3, Met: 2}
	for _, tt := range []struct {
		name  string
		f     func(*pb.ScaleRequest)
		field string
	}{
		{"zero window", func(r *pb.ScaleRequest) { r.Seconds = 0 }, "seconds"},
		{"met > finished", func(r *pb.ScaleRequest) { r.Met = 4 }, "met"},
		{"negative load", func(r *pb.ScaleRequest) { r.ImageTokens = -1 }, "image_tokens"},
		{"infinite wait", func(r *pb.ScaleRequest) { r.TextWait = math.Inf(1) }, "text_wait"},
		{"huge pool", func(r *pb.ScaleRequest) { r.Current.Text = 1 << 30 }, "current"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := serve.ScaleRequestOf(w, mmscale.Sizes{Image: 1, Text: 1}, false)
			tt.f(req)
			_, err := h.client.Scale(context.Background(), req)
			wantInvalid(t, err, tt.field)
		})
	}
	bare := startBufconn(t, serve.ServerConfig{})
	if _, err := bare.client.Scale(context.Background(), &pb.ScaleRequest{Initial: true}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Scale without WithMM: %v, want FailedPrecondition", err)
	}
	if _, err := bare.client.RouteMM(context.Background(), route(func(*pb.RouteMMRequest) {})); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("RouteMM without WithMM: %v, want FailedPrecondition", err)
	}
}

// numbered is a copy of ins numbered as given.
func numbered(ins []*pb.MMInstance, numbers ...int32) []*pb.MMInstance {
	out := make([]*pb.MMInstance, len(ins))
	for i, in := range ins {
		out[i] = proto.CloneOf(in)
		out[i].Number = numbers[i]
	}
	return out
}

func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), field) {
		t.Fatalf("error %v, want InvalidArgument naming %s", err, field)
	}
}
