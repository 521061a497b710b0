package serve_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

func TestValidatePlace(t *testing.T) {
	tests := []struct {
		name   string
		modify func(r *pb.PlaceRequest)
		want   string // "" = valid
	}{
		{"valid", func(*pb.PlaceRequest) {}, ""},
		{"no cluster", func(r *pb.PlaceRequest) { r.Cluster = nil }, "cluster: missing"},
		{"no job", func(r *pb.PlaceRequest) { r.Job = nil }, "job: missing"},
		{"empty cluster", func(r *pb.PlaceRequest) { r.Cluster.Nodes = nil }, "cluster.nodes: empty"},
		{"too many nodes", func(r *pb.PlaceRequest) {
			for len(r.Cluster.Nodes) <= serve.DefaultLimits.MaxNodes {
				r.Cluster.Nodes = append(r.Cluster.Nodes, r.Cluster.Nodes...)
			}
		}, "cluster.nodes: too many (8192 > 4096)"},
		{"negative free", func(r *pb.PlaceRequest) { r.Cluster.Nodes[3].FreeGpus = -1 }, "cluster.nodes[3].free_gpus: negative (-1)"},
		{"free above gpus", func(r *pb.PlaceRequest) { r.Cluster.Nodes[3].FreeGpus = 5 }, "cluster.nodes[3].free_gpus: more than the node's gpus (5 > 4)"},
		{"zero gpus", func(r *pb.PlaceRequest) { r.Cluster.Nodes[0].Gpus = 0 }, "cluster.nodes[0].gpus: want > 0 (got 0)"},
		{"NaN speed", func(r *pb.PlaceRequest) { r.Cluster.Nodes[2].Speed = math.NaN() }, "cluster.nodes[2].speed: not a number (NaN)"},
		{"inf memory", func(r *pb.PlaceRequest) { r.Cluster.Nodes[2].MemoryGib = math.Inf(1) }, "cluster.nodes[2].memory_gib: infinite (+Inf)"},
		{"negative NIC", func(r *pb.PlaceRequest) { r.Cluster.Nodes[1].NicGbps = -3 }, "cluster.nodes[1].nic_gbps: negative (-3)"},
		{"NaN util", func(r *pb.PlaceRequest) { r.Cluster.Nodes[5].NetUtil = math.NaN() }, "cluster.nodes[5].net_util: not a number (NaN)"},
		{"huge util", func(r *pb.PlaceRequest) { r.Cluster.Nodes[5].CpuUtil = 11 }, "cluster.nodes[5].cpu_util: too high (11 > 10)"},
		{"empty node id", func(r *pb.PlaceRequest) { r.Cluster.Nodes[4].Id = "" }, "cluster.nodes[4].id: empty"},
		{"duplicate node id", func(r *pb.PlaceRequest) { r.Cluster.Nodes[7].Id = "node-2" }, `cluster.nodes[7].id: duplicate of cluster.nodes[2] ("node-2")`},
		{"long node id", func(r *pb.PlaceRequest) { r.Cluster.Nodes[1].Id = strings.Repeat("x", 300) }, "cluster.nodes[1].id: too long (300 > 253 bytes)"},
		{"negative rack", func(r *pb.PlaceRequest) { r.Cluster.Nodes[1].Rack = -1 }, "cluster.nodes[1].rack: negative (-1)"},
		{"NaN bandwidth", func(r *pb.PlaceRequest) { r.Cluster.CrossRackGbps = math.NaN() }, "cluster.cross_rack_gbps: not a number (NaN)"},
		{"negative pending", func(r *pb.PlaceRequest) { r.Cluster.PendingJobs = -2 }, "cluster.pending_jobs: negative (-2)"},
		{"empty job id", func(r *pb.PlaceRequest) { r.Job.Id = "" }, "job.id: empty"},
		{"zero workers", func(r *pb.PlaceRequest) { r.Job.Workers = 0 }, "job.workers: want > 0 (got 0)"},
		{"too many workers", func(r *pb.PlaceRequest) { r.Job.Workers = 5000 }, "job.workers: too many (5000 > 4096)"},
		{"unknown arch", func(r *pb.PlaceRequest) { r.Job.Arch = 7 }, "job.arch: unknown (7)"},
		{"ps on ring", func(r *pb.PlaceRequest) { r.Job.PsShards = 2 }, "job.ps_shards: 2 for a ring job, want 0"},
		{"negative ps", func(r *pb.PlaceRequest) { r.Job.Arch, r.Job.PsShards = pb.Arch_ARCH_PS, -1 }, "job.ps_shards: negative (-1)"},
		{"NaN duration", func(r *pb.PlaceRequest) { r.Job.ExpectedDurationS = math.NaN() }, "job.expected_duration_s: not a number (NaN)"},
		{"negative batch", func(r *pb.PlaceRequest) { r.Job.BatchSize = -8 }, "job.batch_size: negative (-8)"},
		{"unknown exclude", func(r *pb.PlaceRequest) { r.Job.ExcludeNodes = []string{"node-1", "nope"} }, `job.exclude_nodes[1]: unknown node id "nope"`},
		{"duplicate exclude", func(r *pb.PlaceRequest) { r.Job.ExcludeNodes = []string{"node-1", "node-1"} }, `job.exclude_nodes[1]: duplicate of job.exclude_nodes[0] ("node-1")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := makeRequest(8, 4, 2)
			tt.modify(r)
			err := serve.ValidatePlace(r, serve.DefaultLimits)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, serve.ErrInvalid) {
					t.Errorf("error %v does not wrap ErrInvalid", err)
				}
			}
			if got != tt.want {
				t.Errorf("ValidatePlace: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidateReport(t *testing.T) {
	ok := func() *pb.ReportRequest {
		return &pb.ReportRequest{Outcomes: []*pb.Outcome{
			{JobId: "j", Event: &pb.Outcome_Started{Started: &pb.Started{NodeIds: []string{"node-1"}}}},
			{JobId: "j", Event: &pb.Outcome_Iterations{Iterations: &pb.Iterations{Seconds: []float64{0.5, 0.6}, Worker: -1}}},
			{JobId: "j", Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: 3600}}},
		}}
	}
	tests := []struct {
		name   string
		modify func(r *pb.ReportRequest)
		want   string
	}{
		{"valid", func(*pb.ReportRequest) {}, ""},
		{"empty", func(r *pb.ReportRequest) { r.Outcomes = nil }, "outcomes: empty"},
		{"no job", func(r *pb.ReportRequest) { r.Outcomes[1].JobId = "" }, "outcomes[1].job_id: empty"},
		{"no event", func(r *pb.ReportRequest) { r.Outcomes[0].Event = nil }, "outcomes[0].event: missing (want started, iterations or finished)"},
		{"NaN sample", func(r *pb.ReportRequest) {
			r.Outcomes[1].GetIterations().Seconds[1] = math.NaN()
		}, "outcomes[1].iterations.seconds[1]: not a number (NaN)"},
		{"negative jct", func(r *pb.ReportRequest) { r.Outcomes[2].GetFinished().JctS = -1 }, "outcomes[2].finished.jct_s: negative (-1)"},
		{"no nodes", func(r *pb.ReportRequest) { r.Outcomes[0].GetStarted().NodeIds = nil }, "outcomes[0].started.node_ids: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok()
			tt.modify(r)
			got := ""
			if err := serve.ValidateReport(r, serve.DefaultLimits); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("ValidateReport: got %q, want %q", got, tt.want)
			}
		})
	}
}

// newCore returns a core with opts, whose learned policy has testDeadline
// to answer unless opts say otherwise; it is closed when t ends.
func newCore(t testing.TB, opts ...serve.Option) *serve.Core {
	t.Helper()
	k, err := serve.NewCore(append([]serve.Option{serve.WithModelTimeout(testDeadline)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func TestPlaceHeuristic(t *testing.T) {
	sink := &serve.MemorySink{}
	k := newCore(t, serve.WithSink(sink))
	req := makeRequest(64, 4, 6)
	req.Job.Arch, req.Job.PsShards = pb.Arch_ARCH_PS, 2
	req.Job.ExcludeNodes = []string{"node-0"}
	resp, err := k.Place(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Placed || resp.Policy != "heuristic:strn" || resp.Reason != "fallback: no-model" || resp.Source != pb.Source_SOURCE_HEURISTIC {
		t.Fatalf("response %v", resp)
	}
	workers, ps := 0, 0
	for _, a := range resp.Assignments {
		if a.NodeId == "node-0" {
			t.Errorf("excluded node used: %v", a)
		}
		if a.Role == pb.Role_ROLE_PS {
			ps++
		} else {
			workers++
		}
	}
	if workers != 6 || ps != 2 {
		t.Errorf("%d workers and %d PS assigned, want 6 and 2", workers, ps)
	}
	ds := sink.Decisions()
	if len(ds) != 1 || ds[0].ID != resp.DecisionId || ds[0].Fallback != serve.FallbackNoModel || len(ds[0].WorkerNodes) != 6 {
		t.Errorf("decision records %+v", ds)
	}

	// No room: not placed, said so.
	big := makeRequest(4, 4, 100)
	resp, err = k.Place(context.Background(), big)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Placed || !strings.Contains(resp.Reason, "no room") {
		t.Errorf("oversized job: %v", resp)
	}
	if _, err := k.Place(context.Background(), &pb.PlaceRequest{}); !errors.Is(err, serve.ErrInvalid) {
		t.Errorf("empty request: %v, want ErrInvalid", err)
	}
}

func TestPlaceLearned(t *testing.T) {
	dir := t.TempDir()
	writeCheckpoint(t, dir, true, 8, 1) // prefers spreading
	v, err := serve.LoadVersion(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	k := newCore(t)
	k.Swap(v)
	resp, err := k.Place(context.Background(), makeRequest(64, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Policy != "learned@v3" || resp.Source != pb.Source_SOURCE_LEARNED || resp.ModelVersion != "v3" || len(resp.Assignments) != 2 {
		t.Fatalf("response %v", resp)
	}
	// A cluster with another number of racks is not the trained shape.
	resp, err = k.Place(context.Background(), makeRequest(16, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Reason != "fallback: shape-mismatch" {
		t.Errorf("16-node cluster: %v", resp)
	}
	// Unconverged: the heuristic answers.
	dir2 := t.TempDir()
	writeCheckpoint(t, dir2, false, 8, 2)
	v2, err := serve.LoadVersion(dir2, 4)
	if err != nil {
		t.Fatal(err)
	}
	k.Swap(v2)
	resp, _ = k.Place(context.Background(), makeRequest(64, 4, 2))
	if resp.Policy != "heuristic:strn" || resp.Reason != "fallback: not-converged" || resp.ModelVersion != "v4" {
		t.Errorf("unconverged: %v", resp)
	}
	if st := k.Status(); st.ActivePolicy != "heuristic:strn" || st.ModelVersion != "v4" || st.Converged {
		t.Errorf("status %v", st)
	}
}

// TestPlaceFallbacks: the heuristic answers when the learned policy misses
// its time limit (the request's deadline less the margin, or the model
// timeout), fails or proposes an infeasible placement. A model that misses
// its limit blocks until the test ends, so an answer at all shows that the
// fallback does not wait for it; no limit in the other cases can pass on
// a loaded machine (testDeadline).
func TestPlaceFallbacks(t *testing.T) {
	tests := []struct {
		name    string
		model   *fakeModel
		timeout time.Duration // request deadline (0: none)
		opts    []serve.Option
		want    string
	}{
		{"deadline", &fakeModel{block: make(chan struct{})}, 100 * time.Millisecond, nil, "fallback: deadline"},
		{"model timeout without deadline", &fakeModel{block: make(chan struct{})}, 0, []serve.Option{serve.WithModelTimeout(30 * time.Millisecond)}, "fallback: deadline"},
		{"deadline inside the margin", &fakeModel{}, 5 * time.Millisecond, []serve.Option{serve.WithDeadlineMargin(time.Second)}, "fallback: deadline"},
		{"error", &fakeModel{err: errors.New("boom")}, 0, nil, "fallback: error"},
		{"infeasible", &fakeModel{action: 42}, 0, nil, "fallback: infeasible"},
		{"fast enough", &fakeModel{sleep: time.Millisecond, action: 8}, testDeadline, nil, "converged checkpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newCore(t, tt.opts...)
			if tt.model.block != nil {
				t.Cleanup(func() { close(tt.model.block) }) // before k.Close, which waits for the model
			}
			k.Swap(fakeVersion(1, tt.model, true))
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			resp, err := k.Place(ctx, makeRequest(64, 4, 2))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Reason != tt.want || !resp.Placed {
				t.Errorf("got %q (%v), want %q", resp.Reason, resp, tt.want)
			}
		})
	}
}

func TestLoadShedding(t *testing.T) {
	m := &fakeModel{action: 8, enter: make(chan struct{}, 1), block: make(chan struct{})}
	k := newCore(t, serve.WithLoadShedding(1, 2))
	k.Swap(fakeVersion(1, m, true))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := k.Place(context.Background(), makeRequest(64, 4, 2)); err != nil {
			t.Error(err)
		}
	}()
	<-m.enter // the first request is inside the model
	resp, err := k.Place(context.Background(), makeRequest(64, 4, 2))
	if err != nil || resp.Policy != "heuristic:first-fit" || resp.Reason != "fallback: overload" {
		t.Errorf("second request: %v, %v; want first-fit under overload", resp, err)
	}
	close(m.block)
	wg.Wait()

	m2 := &fakeModel{action: 8, enter: make(chan struct{}, 1), block: make(chan struct{})}
	k2 := newCore(t, serve.WithLoadShedding(0, 1))
	k2.Swap(fakeVersion(1, m2, true))
	wg.Add(1)
	go func() {
		defer wg.Done()
		k2.Place(context.Background(), makeRequest(64, 4, 2))
	}()
	<-m2.enter
	if _, err := k2.Place(context.Background(), makeRequest(64, 4, 2)); !errors.Is(err, serve.ErrOverloaded) {
		t.Errorf("over the limit: %v, want ErrOverloaded", err)
	}
	close(m2.block)
	wg.Wait()
	if st := k2.Status(); st.Shed != 1 {
		t.Errorf("shed %d, want 1", st.Shed)
	}
}

func TestCanaryRouting(t *testing.T) {
	k := newCore(t, serve.WithCanary(0.25, 0))
	k.Swap(fakeVersion(1, &fakeModel{action: 8}, true))
	k.SetCandidate(fakeVersion(2, &fakeModel{action: 8}, true))
	const n = 2000
	canary := 0
	for i := range n {
		req := makeRequest(64, 4, 2)
		req.Job.Id = fmt.Sprintf("job-%d", i)
		r1, err := k.Place(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		r2, _ := k.Place(context.Background(), req)
		if r1.Policy != r2.Policy {
			t.Fatalf("job %s routed to %s then %s", req.Job.Id, r1.Policy, r2.Policy)
		}
		if r1.Policy == "learned@v2" {
			canary++
		}
	}
	if share := float64(canary) / n; share < 0.2 || share > 0.3 {
		t.Errorf("canary share %.3f, want about 0.25", share)
	}
}

func TestCanaryPromotion(t *testing.T) {
	k := newCore(t, serve.WithCanary(0.5, 3))
	k.Swap(fakeVersion(1, &fakeModel{action: 8}, true))
	k.SetCandidate(fakeVersion(2, &fakeModel{action: 8}, true))
	for i := 0; i < 200 && k.Candidate() != nil; i++ {
		req := makeRequest(64, 4, 2)
		req.Job.Id = strings.Repeat("j", i+1)
		if _, err := k.Place(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if k.Candidate() != nil || k.Active().Name != "v2" {
		t.Errorf("after the canary's answers: active %v, candidate %v; want v2 promoted", k.Active().Name, k.Candidate())
	}
}

func TestReportAndClose(t *testing.T) {
	sink := &serve.MemorySink{}
	k, err := serve.NewCore(serve.WithSink(sink))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := k.Report(context.Background(), &pb.ReportRequest{Outcomes: []*pb.Outcome{
		{JobId: "j", DecisionId: "d-1", Event: &pb.Outcome_Started{Started: &pb.Started{NodeIds: []string{"node-1"}}}},
		{JobId: "j", UnixNanos: 1e18, Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: 60}}},
	}})
	if err != nil || resp.Accepted != 2 {
		t.Fatalf("Report: %v, %v", resp, err)
	}
	out := sink.Outcomes()
	if len(out) != 2 || out[0].Kind != serve.OutcomeStarted || out[1].JCTSeconds != 60 || out[1].At.UnixNano() != 1e18 {
		t.Errorf("outcomes %+v", out)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if closed, flushes := sink.Closed(); !closed || flushes != 1 {
		t.Errorf("sink closed %v, flushed %d times; want closed after one flush", closed, flushes)
	}
	if _, err := k.Place(context.Background(), makeRequest(4, 4, 1)); !errors.Is(err, serve.ErrClosed) {
		t.Errorf("Place after Close: %v", err)
	}
}

// The embedded default loads as a version and, being unconverged, leaves
// the heuristic answering.
func TestDefaultVersion(t *testing.T) {
	v, err := serve.DefaultVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Dir != serve.DefaultDir || v.Meta.Converged || v.Meta.Env != "placement" {
		t.Errorf("default version %+v", v)
	}
}

// TestPlaceSameNodesAgain: a request about the nodes of the last one
// reuses its id index (validatePlace); the index must follow the ids'
// order, validation must still check every other field, duplicates must
// still be found when the ids differ, and an error must leave nothing
// stale. The job's excluded node is where a stale index shows: it zeroes
// the free GPUs of the index's node.
func TestPlaceSameNodesAgain(t *testing.T) {
	k := newCore(t)
	ctx := context.Background()
	req := func(ids []string, free []int32, exclude ...string) *pb.PlaceRequest {
		r := &pb.PlaceRequest{Cluster: &pb.Cluster{}, Job: &pb.Job{Id: "j", Workers: 4, ExcludeNodes: exclude}}
		for i, id := range ids {
			r.Cluster.Nodes = append(r.Cluster.Nodes, &pb.Node{Id: id, Gpus: 4, FreeGpus: free[i]})
		}
		return r
	}
	fwd, rev := []string{"n0", "n1", "n2", "n3"}, []string{"n3", "n2", "n1", "n0"}
	steps := []struct {
		req  *pb.PlaceRequest
		want string // the node placed on, or the error
	}{
		{req(fwd, []int32{4, 4, 4, 4}), "n0"},
		{req(rev, []int32{4, 0, 0, 4}, "n0"), "n3"}, // a stale index would exclude n3
		{req(rev, []int32{4, 9, 0, 4}, "n0"), "cluster.nodes[1].free_gpus: more than the node's gpus (9 > 4)"},
		{req([]string{"n3", "n2", "n2", "n0"}, []int32{4, 0, 0, 4}), `cluster.nodes[2].id: duplicate of cluster.nodes[1] ("n2")`},
		{req(rev, []int32{4, 0, 0, 4}, "n0"), "n3"},
		{req(rev, []int32{4, 0, 0, 4}, "n3"), "n0"},
		{req(rev, []int32{4, 0, 0, 4}, "n3"), "n0"},
		{req(fwd, []int32{4, 0, 0, 4}, "n0"), "n3"},
		// An error halfway through new ids leaves as many as the last
		// request had.
		{req(fwd[:2], []int32{4, 4}), "n0"},
		{req([]string{"n2", "n3", "n3"}, []int32{4, 4, 4}), `cluster.nodes[2].id: duplicate of cluster.nodes[1] ("n3")`},
		{req(fwd[:2], []int32{4, 4}, "n0"), "n1"},
	}
	for i, st := range steps {
		got := ""
		resp, err := k.Place(ctx, st.req)
		switch {
		case err != nil:
			got = err.Error()
		case !resp.GetPlaced():
			got = "not placed: " + resp.GetReason()
		default:
			got = resp.GetAssignments()[0].GetNodeId()
			for _, a := range resp.GetAssignments() {
				if a.GetNodeId() != got {
					got = fmt.Sprint(nodesOf(resp))
				}
			}
		}
		if got != st.want {
			t.Errorf("step %d: got %s, want %s", i, got, st.want)
		}
	}
}
