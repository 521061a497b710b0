package daemon_test

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon/daemontest"
	"github.com/drover-sched/drover/serve/mmlog"
	pb "github.com/drover-sched/drover/serve/proto"
)

// TestRunMMLogs: a server with the multimodal calls and a log directory
// answers a simulated deployment's RouteMM and Scale calls over TCP (half
// a busy hour of the generated LMM week at 2M requests a week, its pools
// asked of the server every minute and resized within the window), writes
// every answer to DIR/mmroutes.jsonl and DIR/scales.jsonl in order, and
// says who answered when it stops.
func TestRunMMLogs(t *testing.T) {
	reqs, err := llm.LMMSynth{Requests: 2_000_000, Start: 1440 + 600, Minutes: 30}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	base := mm.Decoupled(mm.Llama32_11BVision, 1, 1)
	prof := mmscale.Profile{ImageTokensPerSec: 21701, TextTokensPerSec: 9552, MonoRequestsPerSec: 0.8225, EncodeSeconds: 0.1224}
	cfg := mmscale.DefaultConfig()
	cfg.SLO = mmscale.Objective{Factor: 5, Text: 0.026287, Image: 0.104971}
	c := testConfig()
	c.LogDir = t.TempDir()
	c.MM = &serve.MMConfig{Base: base, Deployment: "test", Scaler: func() (mmscale.Scaler, error) {
		return mmscale.NewModServe(cfg, prof, mmscale.Sizes{Image: 2, Text: 2})
	}}
	addrs, out, stop := daemontest.Start(t, c)
	conn, err := grpc.NewClient(addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := pb.NewSchedulerClient(conn)
	s, err := mm.New(base, reqs)
	if err != nil {
		t.Fatal(err)
	}
	router := &serve.RemoteMMRouter{Client: client}
	scaler := &serve.RemoteScaler{Client: client, Deployment: "test"}
	got, err := mmscale.Run(s, reqs, router, scaler, cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The same run locally.
	ls, _ := mm.New(base, reqs)
	lr, _ := modserve.New(modserve.Name)
	lsc, _ := mmscale.NewModServe(cfg, prof, mmscale.Sizes{Image: 2, Text: 2})
	want, err := mmscale.Run(ls, reqs, lr, lsc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.GPUHours != want.Summary.GPUHours || got.Attainment != want.Attainment {
		t.Fatalf("served %v GPU-hours, attainment %v; local %v, %v", got.Summary.GPUHours, got.Attainment, want.Summary.GPUHours, want.Attainment)
	}
	routes, partial, err := mmlog.ReadRoutesFile(filepath.Join(c.LogDir, mmlog.RoutesFile))
	if err != nil || partial != 0 || len(routes) != len(reqs) {
		t.Fatalf("%d route records for %d requests, partial %d: %v", len(routes), len(reqs), partial, err)
	}
	scales, partial, err := mmlog.ReadScalesFile(filepath.Join(c.LogDir, mmlog.ScalesFile))
	if err != nil || partial != 0 || len(scales) != 1+len(want.Samples) {
		t.Fatalf("%d scale records for %d windows, partial %d: %v", len(scales), len(want.Samples), partial, err)
	}
	resized := false
	for i, r := range scales[1:] {
		resized = resized || r.Sizes != scales[i].Sizes
		if w := want.Samples[i].Sizes; r.Deployment != "test" || r.Sizes != (mmlog.Sizes{Image: w.Image, Text: w.Text}) {
			t.Fatalf("scale record %d: %+v, the window's sizes %+v", i+1, r, w)
		}
	}
	if !resized {
		t.Errorf("the pools kept their sizes over the window: the scale records check no change")
	}
	lat := func(ns []int64) (p50, p99 time.Duration) {
		slices.Sort(ns)
		return time.Duration(ns[len(ns)/2]), time.Duration(ns[len(ns)*99/100])
	}
	var rl, sl []int64
	for _, r := range routes {
		rl = append(rl, r.LatencyNanos)
	}
	for _, r := range scales {
		sl = append(sl, r.LatencyNanos)
	}
	r50, r99 := lat(rl)
	s50, s99 := lat(sl)
	t.Logf("%d requests over 30 min: %.1f GPU-hours, attainment %.4f; %d route records (decision p50 %v, p99 %v), %d scale records (p50 %v, p99 %v)",
		len(reqs), got.Summary.GPUHours, got.Attainment, len(routes), r50, r99, len(scales), s50, s99)
	if !strings.Contains(out.String(), "multimodal: ") || !strings.Contains(out.String(), "scaled, heuristic:modserve answering") {
		t.Errorf("no multimodal summary on shutdown:\n%s", out)
	}
}
