package serve_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/servetest"
	"github.com/drover-sched/drover/serve/state"
)

// BenchmarkPlace measures one Place decision for a job on a 64-node
// cluster (4 GPUs per node, 8 racks, half the GPUs free), through the
// Core (with the heuristic answering, and with a converged learned policy
// answering: the test fixture's 16-16 tanh network, its observation, forward
// pass and the check that its choice is feasible)
// and through a gRPC client over bufconn. Compare runs with benchstat:
// go test -run '^$' -bench Place -count 6 ./serve | tee new.txt
func BenchmarkPlace(b *testing.B) {
	for _, workers := range []int{2, 8} {
		req := makeRequest(64, 4, workers)
		b.Run(fmt.Sprintf("core/nodes=64/workers=%d", workers), func(b *testing.B) {
			core, err := serve.NewCore()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Place(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The stateful core (drover serve's default): every node streams
		// telemetry, and STRN probes the per-worker model for the job's
		// sensitivities and sync strategy.
		b.Run(fmt.Sprintf("core-live/nodes=64/workers=%d", workers), func(b *testing.B) {
			st, err := state.New(state.Config{})
			if err != nil {
				b.Fatal(err)
			}
			core, err := serve.NewCore(serve.WithState(st, nil))
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			for i, n := range req.Cluster.Nodes {
				if _, err := st.Hello(&pb.AgentHello{NodeId: n.Id, AgentId: "a", Gpus: n.Gpus, Rack: n.Rack, NicGbps: 100}, now); err != nil {
					b.Fatal(err)
				}
				m := &pb.AgentMessage{Seq: 1, Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{UnixNanos: now.UnixNano(),
					CpuUtil: float64(i%10) / 10, MemPressure: float64(i%10) / 20}}}
				if _, err := st.Apply(n.Id, m, now); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Place(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("core-learned/nodes=64/workers=%d", workers), func(b *testing.B) {
			dir := b.TempDir()
			writeCheckpoint(b, dir, true, 8, 1)
			v, err := serve.LoadVersion(dir, 1)
			if err != nil {
				b.Fatal(err)
			}
			core := newCore(b)
			core.Swap(v)
			ctx := context.Background()
			if resp, err := core.Place(ctx, req); err != nil || resp.Source != pb.Source_SOURCE_LEARNED {
				b.Fatalf("not answered by the learned policy: %v, %v", resp, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := core.Place(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bufconn/nodes=64/workers=%d", workers), func(b *testing.B) {
			h := startBufconn(b, serve.ServerConfig{})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.client.Place(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// makeRequest builds a Place request: nodes nodes of gpus GPUs, 8 to a
// rack, every other node half free, with varied utilisation
// (servetest.PlaceRequest, ids not padded).
func makeRequest(nodes, gpus, workers int) *pb.PlaceRequest {
	return servetest.PlaceRequest(nodes, gpus, workers, 0)
}
