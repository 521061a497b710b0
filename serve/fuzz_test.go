package serve_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// FuzzValidatePlace unmarshals arbitrary bytes as a PlaceRequest; whatever
// ValidatePlace accepts, the core must answer without panicking, with an
// allocation inside the cluster's free GPUs.
func FuzzValidatePlace(f *testing.F) {
	for _, r := range []*pb.PlaceRequest{makeRequest(4, 4, 2), makeRequest(16, 8, 12), {}} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ps := makeRequest(8, 4, 3)
	ps.Job.Arch, ps.Job.PsShards, ps.Job.ExcludeNodes = pb.Arch_ARCH_PS, 2, []string{"node-1"}
	b, _ := proto.Marshal(ps)
	f.Add(b)
	// node-0 is the least loaded: excluded, it must stay unused whatever
	// the nodes' order.
	ex := makeRequest(8, 4, 4)
	ex.Job.ExcludeNodes = []string{"node-0"}
	b, _ = proto.Marshal(ex)
	f.Add(b)
	limits := serve.Limits{MaxNodes: 64, MaxGPUsPerNode: 16, MaxWorkers: 256, MaxPSShards: 8,
		MaxIDLen: 64, MaxOutcomes: 16, MaxSamples: 16, MaxUtil: 10}
	core, err := serve.NewCore(serve.WithLimits(limits))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req := &pb.PlaceRequest{}
		if err := proto.Unmarshal(data, req); err != nil {
			return
		}
		// Each request, then the same with its nodes in reverse order: the
		// same ids as the last request, which the core's id index must
		// not take for the same cluster.
		rev := proto.Clone(req).(*pb.PlaceRequest)
		if c := rev.GetCluster(); c != nil {
			slices.Reverse(c.Nodes)
		}
		for _, req := range []*pb.PlaceRequest{req, rev} {
			checkPlace(t, core, limits, req)
		}
	})
}

// checkPlace asks core to place req and checks the answer against req:
// a valid request is not refused as invalid, an invalid one is refused,
// and the placement respects free GPUs and excluded nodes.
func checkPlace(t *testing.T, core *serve.Core, limits serve.Limits, req *pb.PlaceRequest) {
	resp, err := core.Place(context.Background(), req)
	if err != nil {
		if serve.ValidatePlace(req, serve.DefaultLimits) == nil && !errorsIsInvalid(err) {
			t.Fatalf("valid request failed: %v", err)
		}
		return
	}
	// The core reuses the last request's id index when the ids are
	// the same: it must accept only what a fresh validation does.
	if err := serve.ValidatePlace(req, limits); err != nil {
		t.Fatalf("Place answered a request ValidatePlace refuses (%v): %v", err, resp)
	}
	free := map[string]int{}
	for _, n := range req.Cluster.Nodes {
		free[n.Id] = int(n.FreeGpus)
	}
	for _, id := range req.Job.ExcludeNodes {
		free[id] = 0
	}
	workers := 0
	for _, a := range resp.Assignments {
		if a.Role != pb.Role_ROLE_WORKER {
			continue
		}
		workers++
		free[a.NodeId]--
		if free[a.NodeId] < 0 {
			t.Fatalf("node %s over-allocated: %v", a.NodeId, resp)
		}
	}
	if resp.Placed && workers != int(req.Job.Workers) {
		t.Fatalf("%d workers placed for %d", workers, req.Job.Workers)
	}
}

// FuzzValidateReport: arbitrary bytes as a ReportRequest never panic the
// validation or the core.
func FuzzValidateReport(f *testing.F) {
	b, _ := proto.Marshal(&pb.ReportRequest{Outcomes: []*pb.Outcome{{JobId: "j", Event: &pb.Outcome_Iterations{Iterations: &pb.Iterations{Seconds: []float64{1}}}}}})
	f.Add(b)
	core, err := serve.NewCore(serve.WithSink(&serve.MemorySink{}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req := &pb.ReportRequest{}
		if proto.Unmarshal(data, req) != nil {
			return
		}
		resp, err := core.Report(context.Background(), req)
		if err == nil && int(resp.Accepted) != len(req.Outcomes) {
			t.Fatalf("accepted %d of %d", resp.Accepted, len(req.Outcomes))
		}
	})
}

// FuzzLoadVersion feeds arbitrary checkpoint files to the serving loader,
// through checkpoints.Decode: it must refuse or load, never panic.
func FuzzLoadVersion(f *testing.F) {
	dir := f.TempDir()
	writeCheckpoint(f, dir, true, 8, 1)
	meta, weights := readCheckpoint(f, dir)
	f.Add(meta, weights)
	f.Add([]byte("{}"), []byte{})
	f.Fuzz(func(t *testing.T, meta, weights []byte) {
		d := t.TempDir()
		writeFiles(t, d, meta, weights)
		if v, err := serve.LoadVersion(d, 1); err == nil && v.Policy == nil {
			t.Fatal("loaded a version without a policy")
		}
	})
}

func errorsIsInvalid(err error) bool { return errors.Is(err, serve.ErrInvalid) }
