package serve_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// validatingSink fails the test when a multimodal record does not make a
// valid log line.
type validatingSink struct{ t *testing.T }

func (s validatingSink) Record(r serve.Record) error {
	switch r := r.(type) {
	case *serve.ScaleRecord:
		line := serve.ScaleLogRecord(r)
		if err := line.Validate(); err != nil {
			s.t.Fatalf("scale record %+v: %v", r, err)
		}
	case *serve.MMRouteRecord:
		line := serve.MMRouteLogRecord(r)
		if err := line.Validate(); err != nil {
			s.t.Fatalf("route record %+v: %v", r, err)
		}
	}
	return nil
}

// FuzzRouteMM unmarshals arbitrary bytes as a RouteMMRequest: the core
// (modserve's router, or the round robin's for an odd deployed) answers
// without panicking, either InvalidArgument (a *FieldError) or a
// decision whose instances are active instances of the right pool, one
// image instance an image the model takes, logged as a valid line.
func FuzzRouteMM(f *testing.F) {
	img := func(load int64) *pb.MMInstance {
		return &pb.MMInstance{Pool: pb.MMPool_MM_POOL_IMAGE, State: pb.MMState_MM_STATE_ACTIVE, Tp: 1, PendingImageTokens: load}
	}
	txt := &pb.MMInstance{Pool: pb.MMPool_MM_POOL_TEXT, State: pb.MMState_MM_STATE_ACTIVE, Tp: 4, PendingPrefillTokens: 10}
	for _, r := range []*pb.RouteMMRequest{
		{Images: 3, PromptTokens: 500, OutputTokens: 20, ArrivalSeconds: 2, Instances: []*pb.MMInstance{img(6404), img(0), txt}},
		{Images: 40, PromptTokens: 100_000, OutputTokens: 1, Instances: []*pb.MMInstance{img(0), {Pool: pb.MMPool_MM_POOL_IMAGE, State: pb.MMState_MM_STATE_DRAINING, Tp: 1}, txt}},
		{PromptTokens: 1, OutputTokens: 1, Instances: []*pb.MMInstance{{Pool: pb.MMPool_MM_POOL_MONO, State: pb.MMState_MM_STATE_ACTIVE, Tp: 4}}},
		// Live instances only, numbered (odd deployed: the round robin).
		{Images: 5, PromptTokens: 700, OutputTokens: 9, Deployed: 9, Instances: numbered([]*pb.MMInstance{img(0), txt, img(30)}, 2, 5, 7)},
		{Images: 2, PromptTokens: 70, OutputTokens: 9, Deployed: 12, Instances: numbered([]*pb.MMInstance{txt, img(0)}, 0, 11)},
		{},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req := &pb.RouteMMRequest{}
		if err := proto.Unmarshal(data, req); err != nil {
			return
		}
		router := modserve.Name
		if req.GetDeployed()%2 != 0 {
			router = modserve.Decoup // numbers matter to its round robin
		}
		core, err := serve.NewCore(serve.WithSink(validatingSink{t}), serve.WithMM(serve.MMConfig{Base: mm.Decoupled(mm.Llama32_11BVision, 1, 1), Router: router}))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := core.RouteMM(context.Background(), req)
		var fe *serve.FieldError
		if errors.As(err, &fe) {
			return
		}
		if err != nil {
			t.Fatalf("error %v, want a *FieldError or an answer", err)
		}
		ins := req.GetInstances()
		mono := false
		for _, in := range ins {
			mono = mono || in.GetPool() == pb.MMPool_MM_POOL_MONO
		}
		want := map[bool]pb.MMPool{false: pb.MMPool_MM_POOL_TEXT, true: pb.MMPool_MM_POOL_MONO}[mono]
		if x := ins[resp.GetInstance()]; x.GetPool() != want || x.GetState() != pb.MMState_MM_STATE_ACTIVE {
			t.Fatalf("text instance %d: %v", resp.GetInstance(), x)
		}
		if n := len(resp.GetImages()); mono && n != 0 || !mono && n != min(int(req.GetImages()), 16) {
			t.Fatalf("%d image placements for %d images (monolithic %v)", n, req.GetImages(), mono)
		}
		for _, i := range resp.GetImages() {
			if x := ins[i]; x.GetPool() != pb.MMPool_MM_POOL_IMAGE || x.GetState() != pb.MMState_MM_STATE_ACTIVE {
				t.Fatalf("image instance %d: %v", i, x)
			}
		}
	})
}

// FuzzScale unmarshals arbitrary bytes as a ScaleRequest: the core answers
// without panicking, either InvalidArgument or sizes within the
// simulator's bound, at least one instance a pool at a period's end and
// at the start (ModServe's minimum), logged as a valid line.
func FuzzScale(f *testing.F) {
	for _, r := range []*pb.ScaleRequest{
		{Initial: true},
		{PeriodEnd: true, Seconds: 300, Requests: 400, ImageTokens: 3e6, TextLoad: 1e6, Finished: 390, Met: 380, PeakImageTokens: 2e4, PeakTextLoad: 8e3, Current: &pb.MMSizes{Image: 2, Text: 2}},
		{Seconds: 60, Finished: 10, Met: 1, PendingImageTokens: 1e9, ImageWait: 30, Current: &pb.MMSizes{Image: 1, Text: 1}},
		// A past crasher: a load asking for more image instances than a
		// deployment holds (197,916), which the core refused as its own
		// error; it answers the bound now.
		{PeriodEnd: true, Seconds: 1, ImageTokens: 4.3e9, Current: &pb.MMSizes{Image: 1, Text: 1}},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req := &pb.ScaleRequest{}
		if err := proto.Unmarshal(data, req); err != nil {
			return
		}
		core, err := serve.NewCore(serve.WithSink(validatingSink{t}), serve.WithMM(serve.MMConfig{Base: mm.Decoupled(mm.Llama32_11BVision, 1, 1), NoRouter: true, Scaler: newModServeScaler}))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := core.Scale(context.Background(), req)
		var fe *serve.FieldError
		if errors.As(err, &fe) {
			return
		}
		if err != nil {
			t.Fatalf("error %v, want a *FieldError or an answer", err)
		}
		// At a period's end and at the start ModServe sizes each pool to at
		// least one instance; in a monitoring window it keeps the current
		// sizes unless the SLO was missed.
		s := resp.GetSizes()
		lo := int32(0)
		if req.GetInitial() || req.GetPeriodEnd() {
			lo = 1
		}
		if s.GetImage() < lo || s.GetText() < lo || max(s.GetImage(), s.GetText()) > mm.MaxInstances || s.GetMono() != 0 {
			t.Fatalf("sizes %v for %v", s, req)
		}
	})
}
