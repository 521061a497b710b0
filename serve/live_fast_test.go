package serve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// TestLiveFastMatchesSTRN: the stateful server's STRN fast path
// (runLiveSTRN: probed sensitivity, the fast path's placement arithmetic,
// strn.ChooseSync, both cached) answers exactly as STRN itself run as a
// policy on the live view, over 30 random requests on random clusters
// and loads (120 in make test-long; 12 s of the race run, issue 31), for
// jobs with and without measured profiles, each asked twice (the second
// answer from the caches).
func TestLiveFastMatchesSTRN(t *testing.T) {
	requests := 30
	if longtest.Enabled() {
		requests = 120
	}
	clock := newFakeClock()
	st, err := state.New(state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := serve.NewCore(serve.WithClock(clock), serve.WithState(st, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	slow, err := serve.NewCore(serve.WithClock(clock), serve.WithState(st, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	serve.SlowLiveSTRN(slow)
	rng := rand.New(rand.NewPCG(7, 11))
	models := []string{"cifar10", "imagenet", "bert", "deepspeech2", "yolov3", "ncf", "unknown-model"}
	ctx := context.Background()
	seq := uint64(0)
	for i := range requests {
		nodes := 4 + rng.IntN(20)
		gpus := []int32{4, 8}[rng.IntN(2)]
		req := &pb.PlaceRequest{Cluster: &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 25}}
		seq++
		for n := range nodes {
			id := fmt.Sprintf("c%d-n%d", i%5, n)
			free := rng.Int32N(gpus + 1)
			req.Cluster.Nodes = append(req.Cluster.Nodes, &pb.Node{Id: id, Gpus: gpus, FreeGpus: free, Cpus: 32, MemoryGib: 256,
				NicGbps: 25, Rack: int32(n / 4), CpuUtil: rng.Float64(), MemBwUtil: rng.Float64() / 4, NetUtil: rng.Float64() / 2})
			if rng.IntN(2) == 0 { // about half the nodes have an agent
				if _, err := st.Hello(&pb.AgentHello{NodeId: id, AgentId: "a", Gpus: gpus, NicGbps: 25, Rack: int32(n / 4)}, clock.Now()); err != nil {
					t.Fatal(err)
				}
				m := &pb.AgentMessage{Seq: seq, Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{UnixNanos: clock.Now().UnixNano(),
					CpuUtil: rng.Float64(), MemPressure: rng.Float64() / 3, NetRxBps: rng.Float64() * 2e9, NetTxBps: 0}}}
				if _, err := st.Apply(id, m, clock.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
		w := 1 + rng.IntN(int(gpus)*3)
		job := fmt.Sprintf("j%d", i)
		if rng.IntN(3) == 0 { // a measured job
			var outs []*pb.Outcome
			for k := range w {
				secs := make([]float64, 16)
				for q := range secs {
					secs[q] = 0.5 * (1 + rng.Float64()*float64(k%3))
				}
				outs = append(outs, &pb.Outcome{JobId: job, Event: &pb.Outcome_Iterations{Iterations: &pb.Iterations{Worker: int32(k), Seconds: secs}}})
			}
			if _, err := fast.Report(ctx, &pb.ReportRequest{Outcomes: outs}); err != nil {
				t.Fatal(err)
			}
		}
		req.Job = &pb.Job{Id: job, Model: models[rng.IntN(len(models))], Workers: int32(w)}
		for round := range 2 {
			a, err := fast.Place(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := slow.Place(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(nodesOf(a), nodesOf(b)) || a.GetSync().String() != b.GetSync().String() || a.GetPlaced() != b.GetPlaced() {
				t.Fatalf("request %d (%s x%d on %d nodes), round %d: fast %v %v, STRN %v %v", i, req.Job.Model, w, nodes, round,
					nodesOf(a), a.GetSync(), nodesOf(b), b.GetSync())
			}
		}
		clock.Advance(time.Second)
	}
}

// TestLiveCachedPlaceAllocates: once a job's probed sensitivity and sync
// choice are cached, the stateful STRN's Place allocates no more than the
// stateless one's (the response and its assignments). Before 2026-12-04
// every stateful Place built a STRN, a prober and a per-worker model
// (20 allocations and 8.5 KB for a 64-node, 8-worker Place, against 5
// and 0.8 KB), the garbage that made the server collect every 20 ms at
// 10k Place/s.
func TestLiveCachedPlaceAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	st, err := state.New(state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := serve.NewCore(serve.WithState(st, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	plain, err := serve.NewCore()
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	req := &pb.PlaceRequest{Cluster: &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 25},
		Job: &pb.Job{Id: "j", Model: "cifar10", Workers: 8}}
	for n := range 64 {
		req.Cluster.Nodes = append(req.Cluster.Nodes, &pb.Node{Id: fmt.Sprintf("n%d", n), Gpus: 4, FreeGpus: int32(n % 5),
			Cpus: 32, MemoryGib: 256, NicGbps: 25, Rack: int32(n / 8), CpuUtil: float64(n%7) / 7, MemBwUtil: 0.2, NetUtil: 0.1})
	}
	ctx := context.Background()
	allocs := func(k *serve.Core) float64 {
		resp, err := k.Place(ctx, req)
		if err != nil || !resp.GetPlaced() {
			t.Fatalf("Place: %v, %v", resp, err)
		}
		return testing.AllocsPerRun(200, func() {
			if _, err := k.Place(ctx, req); err != nil {
				t.Fatal(err)
			}
		})
	}
	want, got := allocs(plain), allocs(live)
	if got > want {
		t.Errorf("a cached stateful Place allocates %v times, the stateless one %v", got, want)
	}
}
