package serve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// startRunning starts n jobs named prefix0.. in st, each of 1 to 8
// workers on random nodes among nodes (some on one node, some across
// several, some partly on nodes no request names).
func startRunning(st *state.Store, rng *rand.Rand, prefix string, n int, nodes []string, now time.Time) {
	for k := range n {
		w := 1 + rng.IntN(8)
		var at []string
		home := nodes[rng.IntN(len(nodes))]
		for range w {
			switch r := rng.IntN(10); {
			case r < 6:
				at = append(at, home)
			case r < 9:
				at = append(at, nodes[rng.IntN(len(nodes))])
			default:
				at = append(at, "elsewhere")
			}
		}
		st.JobStarted(fmt.Sprintf("%s%d", prefix, k), "", at, now, now)
	}
}

// TestLiveSASAggregateMatches: the stateful SAS that reads the store's
// running jobs in aggregate (sas.Occupancy, rebuilt only when the running
// jobs change) answers exactly as the one handed every running job in its
// view, over 40 requests on two clusters (four in turn), with 2,000
// running jobs and jobs starting (four workers on each node just chosen
// among them; once 2,500 at a time on four nodes, more changes than the store keeps),
// finishing and being forgotten between requests: the aggregate is
// rebuilt when the nodes change and brought up to date from the store's
// changes otherwise.
func TestLiveSASAggregateMatches(t *testing.T) {
	clock := newFakeClock()
	st, err := state.New(state.Config{MaxJobs: 2100})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := serve.NewCore(serve.WithClock(clock), serve.WithState(st, nil), serve.WithHeuristic("sas"))
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	slow, err := serve.NewCore(serve.WithClock(clock), serve.WithState(st, nil), serve.WithHeuristic("sas"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	serve.SlowLiveSAS(slow)
	rng := rand.New(rand.NewPCG(3, 5))
	var all []string
	for n := range 32 {
		all = append(all, fmt.Sprintf("n%d", n))
		if _, err := st.Hello(&pb.AgentHello{NodeId: all[n], AgentId: "a", Gpus: 8, NicGbps: 25, Rack: int32(n / 4)}, clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	startRunning(st, rng, "r", 2000, all, clock.Now())
	ctx := context.Background()
	seq := uint64(0)
	differ := 0
	var last []string
	for i := range 40 {
		seq++
		for _, id := range all {
			m := &pb.AgentMessage{Seq: seq, Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{UnixNanos: clock.Now().UnixNano(),
				CpuUtil: rng.Float64(), MemPressure: rng.Float64() / 3, NetRxBps: rng.Float64() * 2e9}}}
			if _, err := st.Apply(id, m, clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		// Two clusters, four requests each in turn: the first 24 nodes,
		// and the last 24.
		nodes := all[:24]
		if i/4%2 == 1 {
			nodes = all[8:]
		}
		req := &pb.PlaceRequest{Cluster: &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 25},
			Job: &pb.Job{Id: fmt.Sprintf("j%d", i), Model: "imagenet", Workers: int32(1 + rng.IntN(12))}}
		for n, id := range nodes {
			req.Cluster.Nodes = append(req.Cluster.Nodes, &pb.Node{Id: id, Gpus: 8, FreeGpus: rng.Int32N(9), Cpus: 32, MemoryGib: 256,
				NicGbps: 25, Rack: int32(n / 4)})
		}
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
				t.Fatalf("request %d, round %d: aggregate %v %v, every job %v %v", i, round, nodesOf(a), a.GetSync(), nodesOf(b), b.GetSync())
			}
			if !slices.Equal(nodesOf(a), last) {
				differ++
			}
			last = nodesOf(a)
			// Between the rounds and the requests the running jobs change:
			// new ones start (past MaxJobs the oldest are forgotten), some
			// finish, and one moves through a Report.
			startRunning(st, rng, fmt.Sprintf("s%d.%d-", i, round), 1+rng.IntN(60), all, clock.Now())
			for k, n := range nodesOf(a) { // the nodes just chosen get busy
				st.JobStarted(fmt.Sprintf("b%d.%d.%d", i, round, k), "", []string{n, n, n, n}, clock.Now(), clock.Now())
			}
			if i == 21 && round == 0 {
				// More changes than the store keeps for RunningSince.
				startRunning(st, rng, "many-", 2500, all[8:12], clock.Now())
			}
			for range 5 {
				st.JobFinished(fmt.Sprintf("r%d", rng.IntN(2000)), clock.Now())
			}
			if _, err := fast.Report(ctx, &pb.ReportRequest{Outcomes: []*pb.Outcome{{JobId: "r7",
				Event: &pb.Outcome_Started{Started: &pb.Started{NodeIds: []string{all[rng.IntN(32)], all[rng.IntN(32)]}}}}}}); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Minute)
	}
	if differ < 10 {
		t.Errorf("only %d of 80 answers differ from the one before: the requests do not exercise the placement", differ)
	}
}
