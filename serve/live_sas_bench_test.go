package serve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// BenchmarkPlaceLiveSAS measures one Place decision of the stateful
// server with -heuristic sas (64 nodes of 4 GPUs, 8 workers) while the
// store tracks 1,000 or 20,000 running jobs (state.Config's MaxJobs) of 1
// to 8 workers on those nodes: "place" asks again and again with the
// running jobs unchanged, "after-start" starts one more job before each
// Place (a Report's Started: the store's change the next Place takes in).
// Compare runs with benchstat:
// go test -run '^$' -bench PlaceLiveSAS -count 6 ./serve | tee new.txt
func BenchmarkPlaceLiveSAS(b *testing.B) {
	req := makeRequest(64, 4, 8)
	var ids []string
	for _, n := range req.Cluster.Nodes {
		ids = append(ids, n.Id)
	}
	for _, jobs := range []int{1000, 20000} {
		for _, mode := range []string{"place", "after-start"} {
			b.Run(fmt.Sprintf("%s/jobs=%d", mode, jobs), func(b *testing.B) {
				st, err := state.New(state.Config{MaxJobs: jobs + 1})
				if err != nil {
					b.Fatal(err)
				}
				core, err := serve.NewCore(serve.WithState(st, nil), serve.WithHeuristic("sas"))
				if err != nil {
					b.Fatal(err)
				}
				defer core.Close()
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
				rng := rand.New(rand.NewPCG(1, 1))
				start := func(id string) {
					w := 1 + rng.IntN(8)
					at := make([]string, w)
					for k := range at {
						at[k] = ids[rng.IntN(len(ids))]
					}
					st.JobStarted(id, "", at, now, now)
				}
				for k := range jobs {
					start(fmt.Sprintf("r%d", k))
				}
				ctx := context.Background()
				if _, err := core.Place(ctx, req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if mode == "after-start" {
						// The store stays at jobs running: the new job
						// takes the place of the oldest.
						start("r0")
					}
					if _, err := core.Place(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
