package soak

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-sched/drover/internal/loadgen"

	pb "github.com/drover-sched/drover/serve/proto"
)

// PlaceRequest returns the well-behaved client's request: one 8-worker
// ring job on nodes node-0 ... node-(n-1), 4 GPUs each, 8 to a rack (the
// shape of drover bench place's default). The fake agents speak for
// the same node names, so the server answers from their telemetry.
func PlaceRequest(n int) *pb.PlaceRequest {
	c := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 40, PendingJobs: 1}
	for i := range n {
		c.Nodes = append(c.Nodes, &pb.Node{Id: nodeID(i), Gpus: 4, FreeGpus: 4, Speed: 1, Cpus: 64,
			MemoryGib: 256, NicGbps: 100, Rack: int32(i / 8), CpuUtil: 0.3, MemBwUtil: 0.3, NetUtil: 0.3})
	}
	return &pb.PlaceRequest{Cluster: c,
		Job: &pb.Job{Id: "soak-place", Model: "cifar10", Workers: 8, Arch: pb.Arch_ARCH_RING, ExpectedDurationS: 3600}}
}

func nodeID(i int) string { return fmt.Sprintf("node-%d", i) }

// placeClient is the well-behaved client: Place on an open-loop
// schedule (call i due at the start plus i/rate), each call's latency
// measured from its due time into Windows, at most slots calls in
// flight (a call due while all are busy waits, and its wait counts).
// The schedule ends at end (no call is due at or after it). lag
// records how late the schedule woke for each call (before it waits
// for a slot, a wait the server causes): when its tail is large, the
// client's own core or timer, not the server, made calls late.
type placeClient struct {
	conn    grpc.ClientConnInterface
	req     *pb.PlaceRequest
	rate    float64
	timeout time.Duration
	slots   int
	end     time.Duration

	lagMu sync.Mutex
	lag   *loadgen.Histogram
}

// run keeps the schedule until ctx ends, then waits for the calls in
// flight (each bounded by the client's timeout, not by ctx, so that the
// end of the run fails no call).
func (p *placeClient) run(ctx context.Context, w *Windows) {
	client := pb.NewSchedulerClient(p.conn)
	sem := make(chan struct{}, p.slots)
	var wg sync.WaitGroup
	defer wg.Wait()
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := 0; ; i++ {
		due := time.Duration(float64(i) / p.rate * 1e9)
		if due >= p.end {
			return
		}
		timer.Reset(time.Until(start.Add(due)))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		p.lagMu.Lock()
		p.lag.Record(time.Since(start) - due)
		p.lagMu.Unlock()
		select {
		case <-ctx.Done():
			return
		case sem <- struct{}{}:
		}
		wg.Go(func() {
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(context.Background(), p.timeout)
			defer cancel()
			_, err := client.Place(cctx, p.req)
			w.Record(due, time.Since(start)-due, err == nil)
		})
	}
}
