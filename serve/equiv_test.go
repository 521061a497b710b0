package serve_test

// The answers of Core.Place must not change when its hot path is made
// cheaper. This file keeps the straightforward implementation Place had
// before (validation with fmt-built field names, a fresh env.Cluster,
// env.View and policy per request, the policy's Schedule) as a reference,
// and compares Core.Place against it on seeded random requests: valid
// ones of every shape, and invalid ones.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// refMode is how the reference is asked: which heuristic, whether the
// request counts as overloaded, and the bypassed learned version's name.
type refMode struct {
	heurName  string
	heuristic policies.Factory
	overload  bool
	version   string
	fallback  string // when not overloaded: why the heuristic answered
}

// refPlace is the reference Place: what Core.Place answered and recorded
// before its hot path was optimised (heuristic answers only).
func refPlace(req *pb.PlaceRequest, l serve.Limits, m refMode) (*pb.PlaceResponse, *serve.DecisionRecord, error) {
	if err := refValidatePlace(req, l); err != nil {
		return nil, nil, err
	}
	s := refNewSnapshot(req)
	// decide
	policy, fallback, note := "heuristic:"+m.heurName, m.fallback, ""
	var alloc []int
	var sy env.Sync
	if free := s.freeGPUs(); s.job.GPUs > free {
		fallback = serve.FallbackNoRoom
		note = fmt.Sprintf("no room: %d free GPUs for %d workers", free, s.job.GPUs)
	} else {
		f := m.heuristic
		if m.overload {
			fallback = serve.FallbackOverload
			f, policy = firstfit.New, "heuristic:"+firstfit.Name
		}
		var err error
		alloc, sy, err = refRunHeuristic(f, s)
		if err != nil && !m.overload {
			note = fmt.Sprintf("%s failed: %v", m.heurName, err)
			policy = "heuristic:" + firstfit.Name
			alloc, sy, err = refRunHeuristic(firstfit.New, s)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("serve: heuristic: %w", err)
		}
	}
	// respond
	resp := &pb.PlaceResponse{Placed: alloc != nil, Sync: refSyncProto(sy), Policy: policy, Source: pb.Source_SOURCE_HEURISTIC,
		ModelVersion: m.version}
	if fallback == serve.FallbackNoRoom {
		resp.Reason = note
	} else {
		resp.Reason = "fallback: " + fallback
		if note != "" {
			resp.Reason += "; " + note
		}
	}
	rec := &serve.DecisionRecord{JobID: s.jobID, Model: s.job.Model, Workers: s.job.GPUs, PSShards: s.job.PSShards,
		Arch: s.job.Arch.String(), BatchSize: s.job.BatchSize, ExpectedSeconds: s.job.Duration,
		Nodes: len(s.ids), FreeGPUs: s.freeGPUs(), Placed: resp.Placed, Sync: sy.String(), Source: "heuristic", Policy: policy,
		ModelVersion: m.version, Fallback: fallback, Action: -1}
	if alloc != nil {
		rec.WorkerNodes = make([]string, len(alloc))
		for i, n := range alloc {
			resp.Assignments = append(resp.Assignments, &pb.Assignment{Role: pb.Role_ROLE_WORKER, Index: int32(i), NodeId: s.ids[n]})
			rec.WorkerNodes[i] = s.ids[n]
		}
		if s.job.Arch == env.PS {
			for i, n := range refPSNodes(alloc, s.job.PSShards) {
				resp.Assignments = append(resp.Assignments, &pb.Assignment{Role: pb.Role_ROLE_PS, Index: int32(i), NodeId: s.ids[n]})
				rec.PSNodes = append(rec.PSNodes, s.ids[n])
			}
		}
	} else {
		resp.Sync = nil
		rec.Sync = ""
	}
	return resp, rec, nil
}

type refSnapshot struct {
	cluster env.Cluster
	ids     []string
	free    []int
	load    []env.Usage
	job     env.JobSpec
	jobID   string
}

func refNewSnapshot(req *pb.PlaceRequest) *refSnapshot {
	c := req.GetCluster()
	nodes := c.GetNodes()
	s := &refSnapshot{
		cluster: env.Cluster{Nodes: make([]env.Node, len(nodes)), IntraRackGbps: c.GetIntraRackGbps(), CrossRackGbps: c.GetCrossRackGbps()},
		ids:     make([]string, len(nodes)),
		free:    make([]int, len(nodes)),
		load:    make([]env.Usage, len(nodes)),
	}
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		s.cluster.Nodes[i] = env.Node{Name: n.GetId(), GPUs: int(n.GetGpus()), GPUType: n.GetGpuType(), Speed: n.GetSpeed(),
			CPUs: int(n.GetCpus()), MemoryGiB: n.GetMemoryGib(), NICGbps: n.GetNicGbps(), Rack: int(n.GetRack())}
		s.ids[i] = n.GetId()
		index[n.GetId()] = i
		s.free[i] = int(n.GetFreeGpus())
		s.load[i] = env.Usage{CPU: n.GetCpuUtil(), MemBW: n.GetMemBwUtil(), Net: n.GetNetUtil()}
	}
	for _, id := range req.GetJob().GetExcludeNodes() {
		s.free[index[id]] = 0
	}
	j := req.GetJob()
	s.jobID = j.GetId()
	s.job = env.JobSpec{Name: j.GetId(), GPUs: int(j.GetWorkers()), Duration: j.GetExpectedDurationS(), Model: j.GetModel(),
		BatchSize: int(j.GetBatchSize()), PSShards: int(j.GetPsShards())}
	if j.GetArch() == pb.Arch_ARCH_PS {
		s.job.Arch = env.PS
		s.job.PSShards = max(1, s.job.PSShards)
	}
	return s
}

func (s *refSnapshot) freeGPUs() int {
	t := 0
	for _, f := range s.free {
		t += f
	}
	return t
}

type refTelemetry struct{ load []env.Usage }

func (refTelemetry) Name() string                              { return "request" }
func (refTelemetry) Admit(*env.Job, *env.Meta) error           { return nil }
func (refTelemetry) Place(*env.Job, *env.Cluster)              {}
func (refTelemetry) Advance(*env.Job, float64) (float64, bool) { return 0, false }
func (refTelemetry) Remaining(*env.Job) float64                { return math.Inf(1) }
func (t refTelemetry) NodeLoad(n int, _ float64) env.Usage     { return t.load[n] }

func refRunHeuristic(f policies.Factory, s *refSnapshot) ([]int, env.Sync, error) {
	p, err := f(policies.Config{Seed: 1})
	if err != nil {
		return nil, env.Sync{}, err
	}
	job := &env.Job{ID: 0, Spec: s.job, State: env.Pending, FirstStart: math.NaN(), Finish: math.NaN()}
	v := &env.View{Cluster: &s.cluster, Free: append([]int(nil), s.free...), Active: []*env.Job{job}, Model: refTelemetry{s.load}}
	ds, err := p.Schedule(v)
	if err != nil {
		return nil, env.Sync{}, err
	}
	for _, d := range ds {
		if d.Job == 0 && len(d.Nodes) > 0 {
			if err := s.checkAlloc(d.Nodes); err != nil {
				return nil, env.Sync{}, err
			}
			return d.Nodes, d.Sync, nil
		}
	}
	return nil, env.Sync{}, nil
}

func (s *refSnapshot) checkAlloc(alloc []int) error {
	if len(alloc) != s.job.GPUs {
		return fmt.Errorf("allocation of %d workers for a job of %d", len(alloc), s.job.GPUs)
	}
	used := make(map[int]int, 4)
	for _, n := range alloc {
		if n < 0 || n >= len(s.free) {
			return fmt.Errorf("allocation names node %d of %d", n, len(s.free))
		}
		used[n]++
		if used[n] > s.free[n] {
			return fmt.Errorf("allocation puts %d workers on node %s with %d free GPUs", used[n], s.ids[n], s.free[n])
		}
	}
	return nil
}

func refPSNodes(alloc []int, shards int) []int {
	var distinct []int
	for _, n := range alloc {
		if !slices.Contains(distinct, n) {
			distinct = append(distinct, n)
		}
	}
	out := make([]int, shards)
	for i := range out {
		out[i] = distinct[i%len(distinct)]
	}
	return out
}

func refSyncProto(s env.Sync) *pb.Sync {
	out := &pb.Sync{}
	switch s.Kind {
	case env.BSP:
		out.Kind = pb.SyncKind_SYNC_BSP
	case env.ASP:
		out.Kind = pb.SyncKind_SYNC_ASP
	case env.SSP:
		out.Kind, out.Staleness = pb.SyncKind_SYNC_SSP, int32(s.Staleness)
	case env.LocalSGD:
		out.Kind, out.Period = pb.SyncKind_SYNC_LOCAL_SGD, int32(s.Period)
	}
	return out
}

func refFieldErr(field, format string, args ...any) error {
	return &serve.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

func refCheckFloat(field string, v float64) error {
	switch {
	case math.IsNaN(v):
		return refFieldErr(field, "not a number (NaN)")
	case math.IsInf(v, 0):
		return refFieldErr(field, "infinite (%v)", v)
	case v < 0:
		return refFieldErr(field, "negative (%v)", v)
	}
	return nil
}

func refCheckID(field, id string, l serve.Limits, required bool) error {
	switch {
	case id == "" && required:
		return refFieldErr(field, "empty")
	case len(id) > l.MaxIDLen:
		return refFieldErr(field, "too long (%d > %d bytes)", len(id), l.MaxIDLen)
	}
	return nil
}

// refValidatePlace is ValidatePlace as it was.
func refValidatePlace(req *pb.PlaceRequest, l serve.Limits) error {
	if req == nil {
		return refFieldErr("request", "missing")
	}
	c := req.GetCluster()
	if c == nil {
		return refFieldErr("cluster", "missing")
	}
	switch n := len(c.GetNodes()); {
	case n == 0:
		return refFieldErr("cluster.nodes", "empty")
	case n > l.MaxNodes:
		return refFieldErr("cluster.nodes", "too many (%d > %d)", n, l.MaxNodes)
	}
	ids := make(map[string]int, len(c.GetNodes()))
	for i, nd := range c.GetNodes() {
		f := func(name string) string { return fmt.Sprintf("cluster.nodes[%d]%s", i, name) }
		if nd == nil {
			return refFieldErr(f(""), "missing")
		}
		switch id := nd.GetId(); {
		case id == "":
			return refFieldErr(f(".id"), "empty")
		case len(id) > l.MaxIDLen:
			return refFieldErr(f(".id"), "too long (%d > %d bytes)", len(id), l.MaxIDLen)
		}
		if j, ok := ids[nd.GetId()]; ok {
			return refFieldErr(f(".id"), "duplicate of cluster.nodes[%d] (%q)", j, nd.GetId())
		}
		ids[nd.GetId()] = i
		if len(nd.GetGpuType()) > l.MaxIDLen {
			return refFieldErr(f(".gpu_type"), "too long (%d > %d bytes)", len(nd.GetGpuType()), l.MaxIDLen)
		}
		switch g := nd.GetGpus(); {
		case g <= 0:
			return refFieldErr(f(".gpus"), "want > 0 (got %d)", g)
		case int(g) > l.MaxGPUsPerNode:
			return refFieldErr(f(".gpus"), "too many (%d > %d)", g, l.MaxGPUsPerNode)
		}
		switch fr := nd.GetFreeGpus(); {
		case fr < 0:
			return refFieldErr(f(".free_gpus"), "negative (%d)", fr)
		case fr > nd.GetGpus():
			return refFieldErr(f(".free_gpus"), "more than the node's gpus (%d > %d)", fr, nd.GetGpus())
		}
		if nd.GetCpus() < 0 {
			return refFieldErr(f(".cpus"), "negative (%d)", nd.GetCpus())
		}
		if nd.GetRack() < 0 {
			return refFieldErr(f(".rack"), "negative (%d)", nd.GetRack())
		}
		for k, v := range [...]float64{nd.GetSpeed(), nd.GetMemoryGib(), nd.GetNicGbps(), nd.GetCpuUtil(), nd.GetMemBwUtil(), nd.GetNetUtil()} {
			name := [...]string{".speed", ".memory_gib", ".nic_gbps", ".cpu_util", ".mem_bw_util", ".net_util"}[k]
			if !(v >= 0) || math.IsInf(v, 0) {
				return refCheckFloat(f(name), v)
			}
			if k >= 3 && v > l.MaxUtil {
				return refFieldErr(f(name), "too high (%v > %v)", v, l.MaxUtil)
			}
		}
	}
	if err := refCheckFloat("cluster.intra_rack_gbps", c.GetIntraRackGbps()); err != nil {
		return err
	}
	if err := refCheckFloat("cluster.cross_rack_gbps", c.GetCrossRackGbps()); err != nil {
		return err
	}
	if c.GetPendingJobs() < 0 {
		return refFieldErr("cluster.pending_jobs", "negative (%d)", c.GetPendingJobs())
	}
	if c.GetRunningJobs() < 0 {
		return refFieldErr("cluster.running_jobs", "negative (%d)", c.GetRunningJobs())
	}
	j := req.GetJob()
	if j == nil {
		return refFieldErr("job", "missing")
	}
	if err := refCheckID("job.id", j.GetId(), l, true); err != nil {
		return err
	}
	if err := refCheckID("job.model", j.GetModel(), l, false); err != nil {
		return err
	}
	switch w := j.GetWorkers(); {
	case w <= 0:
		return refFieldErr("job.workers", "want > 0 (got %d)", w)
	case int(w) > l.MaxWorkers:
		return refFieldErr("job.workers", "too many (%d > %d)", w, l.MaxWorkers)
	}
	if _, ok := pb.Arch_name[int32(j.GetArch())]; !ok {
		return refFieldErr("job.arch", "unknown (%d)", j.GetArch())
	}
	switch ps := j.GetPsShards(); {
	case ps < 0:
		return refFieldErr("job.ps_shards", "negative (%d)", ps)
	case int(ps) > l.MaxPSShards:
		return refFieldErr("job.ps_shards", "too many (%d > %d)", ps, l.MaxPSShards)
	case ps > 0 && j.GetArch() == pb.Arch_ARCH_RING:
		return refFieldErr("job.ps_shards", "%d for a ring job, want 0", ps)
	}
	if j.GetBatchSize() < 0 {
		return refFieldErr("job.batch_size", "negative (%d)", j.GetBatchSize())
	}
	if err := refCheckFloat("job.expected_duration_s", j.GetExpectedDurationS()); err != nil {
		return err
	}
	if n := len(j.GetExcludeNodes()); n > len(c.GetNodes()) {
		return refFieldErr("job.exclude_nodes", "too many (%d > %d nodes)", n, len(c.GetNodes()))
	}
	seen := make(map[string]int, len(j.GetExcludeNodes()))
	for i, id := range j.GetExcludeNodes() {
		f := fmt.Sprintf("job.exclude_nodes[%d]", i)
		if _, ok := ids[id]; !ok {
			if len(id) > l.MaxIDLen {
				return refFieldErr(f, "unknown node id (%d bytes)", len(id))
			}
			return refFieldErr(f, "unknown node id %q", id)
		}
		if k, ok := seen[id]; ok {
			return refFieldErr(f, "duplicate of job.exclude_nodes[%d] (%q)", k, id)
		}
		seen[id] = i
	}
	return nil
}

// randomRequest builds a seeded random Place request: clusters of 1 to 96
// nodes of mixed sizes, racks, speeds and loads (some overloaded), jobs of
// either architecture, excluded nodes, and now and then one invalid field.
func randomRequest(rng *rand.Rand) *pb.PlaceRequest {
	nodes := 1 + rng.IntN(96)
	rackSize := 1 + rng.IntN(12)
	sizes := [...]int32{1, 2, 4, 8}
	c := &pb.Cluster{IntraRackGbps: float64(rng.IntN(200)), CrossRackGbps: float64(rng.IntN(100)),
		PendingJobs: int32(rng.IntN(5)), RunningJobs: int32(rng.IntN(50))}
	uniform := rng.IntN(3) == 0 // many equal scores: ties must break the same way
	for i := range nodes {
		g := sizes[rng.IntN(len(sizes))]
		if uniform {
			g = 4
		}
		util := func() float64 {
			if uniform {
				return 0.3
			}
			switch rng.IntN(4) {
			case 0:
				return 0
			case 1:
				return 0.7 + rng.Float64()*0.6 // around and above the overload threshold
			}
			return rng.Float64()
		}
		speed := [...]float64{1, 1, 1, 0.5, 0.8, 1.5, 0}[rng.IntN(7)]
		if uniform {
			speed = 1
		}
		c.Nodes = append(c.Nodes, &pb.Node{Id: "n" + strconv.Itoa(i) + "-" + strconv.Itoa(rng.IntN(1000)), Gpus: g,
			FreeGpus: int32(rng.IntN(int(g) + 1)), GpuType: [...]string{"", "v100", "a100"}[rng.IntN(3)], Speed: speed,
			Cpus: int32(rng.IntN(128)), MemoryGib: float64(rng.IntN(1024)), NicGbps: float64(rng.IntN(200)),
			Rack: int32(i / rackSize), CpuUtil: util(), MemBwUtil: util(), NetUtil: util()})
	}
	if rng.IntN(4) == 0 { // racks out of order
		rng.Shuffle(len(c.Nodes), func(a, b int) { c.Nodes[a].Rack, c.Nodes[b].Rack = c.Nodes[b].Rack, c.Nodes[a].Rack })
	}
	j := &pb.Job{Id: "job-" + strconv.Itoa(rng.IntN(1e6)), Model: [...]string{"", "imagenet", "cifar10", "bert"}[rng.IntN(4)],
		Workers: int32(1 + rng.IntN(24)), ExpectedDurationS: float64(rng.IntN(10000)), BatchSize: int32(rng.IntN(512))}
	if rng.IntN(3) == 0 {
		j.Arch, j.PsShards = pb.Arch_ARCH_PS, int32(rng.IntN(5))
	}
	for _, n := range c.Nodes {
		if rng.IntN(10) == 0 {
			j.ExcludeNodes = append(j.ExcludeNodes, n.Id)
		}
	}
	req := &pb.PlaceRequest{Cluster: c, Job: j}
	if rng.IntN(6) == 0 {
		corrupt := []func(){
			func() { c.Nodes[rng.IntN(nodes)].FreeGpus = -1 },
			func() { c.Nodes[rng.IntN(nodes)].CpuUtil = math.NaN() },
			func() { c.Nodes[rng.IntN(nodes)].NetUtil = 11 },
			func() { c.Nodes[rng.IntN(nodes)].MemoryGib = math.Inf(1) },
			func() { c.Nodes[rng.IntN(nodes)].Id = c.Nodes[0].Id },
			func() { c.Nodes[rng.IntN(nodes)].Id = "" },
			func() { c.Nodes[rng.IntN(nodes)].Gpus = 0 },
			func() { c.Nodes[rng.IntN(nodes)].Rack = -2 },
			func() { c.Nodes[rng.IntN(nodes)] = nil },
			func() { c.CrossRackGbps = math.NaN() },
			func() { c.PendingJobs = -1 },
			func() { c.Nodes = nil },
			func() { j.Workers = 0 },
			func() { j.Id = "" },
			func() { j.Arch, j.PsShards = pb.Arch_ARCH_RING, 2 },
			func() { j.ExcludeNodes = append(j.ExcludeNodes, "nope") },
			func() { j.ExcludeNodes = append(j.ExcludeNodes, c.Nodes[0].Id, c.Nodes[0].Id) },
			func() { j.ExpectedDurationS = -1 },
			func() { req.Job = nil },
		}
		corrupt[rng.IntN(len(corrupt))]()
	}
	return req
}

// comparePlace asks core and the reference, and reports any difference
// in the answer (all but the decision id) or the decision record (all but
// the id, time and latency).
func comparePlace(t *testing.T, i int, core *serve.Core, sink *serve.MemorySink, req *pb.PlaceRequest, m refMode, seen map[string]int) {
	t.Helper()
	before := len(sink.Decisions())
	got, gotErr := core.Place(context.Background(), req)
	want, wantRec, wantErr := refPlace(req, serve.DefaultLimits, m)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("request %d: error %v, reference %v", i, gotErr, wantErr)
	}
	switch {
	case wantErr != nil:
		seen["invalid"]++
	case !want.Placed:
		seen["not placed"]++
	case len(slices.Compact(slices.Sorted(slices.Values(wantRec.WorkerNodes)))) > 1:
		seen["several nodes"]++
	default:
		seen["one node"]++
	}
	if wantRec != nil && wantRec.PSNodes != nil {
		seen["ps"]++
	}
	if wantErr != nil {
		if got != nil || len(sink.Decisions()) != before {
			t.Fatalf("request %d: an answer or a record for an invalid request", i)
		}
		return
	}
	if got.GetDecisionId() == "" {
		t.Fatalf("request %d: no decision id", i)
	}
	got = proto.Clone(got).(*pb.PlaceResponse)
	got.DecisionId = ""
	if !proto.Equal(got, want) {
		t.Fatalf("request %d:\n got  %v\n want %v", i, got, want)
	}
	ds := sink.Decisions()
	if len(ds) != before+1 {
		t.Fatalf("request %d: %d records, want %d", i, len(ds), before+1)
	}
	rec := *ds[before]
	if rec.ID != got.GetDecisionId() && rec.ID == "" || rec.At.IsZero() || rec.Latency < 0 {
		t.Fatalf("request %d: record id %q, at %v, latency %v", i, rec.ID, rec.At, rec.Latency)
	}
	rec.ID, rec.At, rec.Latency = "", time.Time{}, 0
	if fmt.Sprintf("%#v", rec) != fmt.Sprintf("%#v", *wantRec) {
		t.Fatalf("request %d: record\n got  %#v\n want %#v", i, rec, *wantRec)
	}
}

// TestPlaceMatchesReference checks 200 seeded random requests (plus 3000
// more in make test-long) against the reference implementation: with
// STRN, with first-fit as the configured heuristic, and overloaded (the
// cheap heuristic answering, while a slow learned call holds a slot).
func TestPlaceMatchesReference(t *testing.T) {
	n := 200
	if longtest.Enabled() {
		n = 3200
	}
	// every kind of answer must occur in each run
	checkSeen := func(t *testing.T, seen map[string]int) {
		t.Logf("%v", seen)
		for _, k := range []string{"invalid", "not placed", "several nodes", "one node", "ps"} {
			if seen[k] == 0 {
				t.Errorf("no %s answer among the requests", k)
			}
		}
	}
	t.Run("strn", func(t *testing.T) {
		sink := &serve.MemorySink{}
		core, err := serve.NewCore(serve.WithSink(sink))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		rng := rand.New(rand.NewPCG(5, 1))
		m := refMode{heurName: strn.Name, heuristic: strn.New, fallback: serve.FallbackNoModel}
		for i := range n {
			comparePlace(t, i, core, sink, randomRequest(rng), m, seen)
		}
		checkSeen(t, seen)
	})
	t.Run("first-fit", func(t *testing.T) {
		sink := &serve.MemorySink{}
		core, err := serve.NewCore(serve.WithSink(sink), serve.WithHeuristic(firstfit.Name))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		rng := rand.New(rand.NewPCG(6, 1))
		m := refMode{heurName: firstfit.Name, heuristic: firstfit.New, fallback: serve.FallbackNoModel}
		for i := range 200 {
			comparePlace(t, i, core, sink, randomRequest(rng), m, seen)
		}
		checkSeen(t, seen)
	})
	t.Run("overload", func(t *testing.T) {
		sink := &serve.MemorySink{}
		core, err := serve.NewCore(serve.WithSink(sink), serve.WithLoadShedding(1, 0), serve.WithModelTimeout(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		block := make(chan struct{})
		enter := make(chan struct{}, 1)
		v := fakeVersion(1, &fakeModel{action: 0, enter: enter, block: block}, true)
		core.Swap(v)
		held := make(chan error, 1)
		go func() { // holds one request in flight until the end
			_, err := core.Place(context.Background(), makeRequest(64, 4, 2))
			held <- err
		}()
		<-enter
		seen := map[string]int{}
		rng := rand.New(rand.NewPCG(7, 1))
		m := refMode{heurName: strn.Name, heuristic: strn.New, overload: true, version: v.Name}
		for i := range 200 {
			comparePlace(t, i, core, sink, randomRequest(rng), m, seen)
		}
		checkSeen(t, seen)
		close(block)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	})
}
