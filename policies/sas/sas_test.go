package sas

import (
	"math"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
)

// opaque hides every optional interface of a model: no Telemetry, no
// Prober, as with the Pollux model. Schedule never calls it.
type opaque struct{ env.Model }

func pending(id, gpus int) *env.Job {
	return &env.Job{ID: id, Spec: env.JobSpec{Name: string(rune('a' + id)), GPUs: gpus}, State: env.Pending}
}

func newSAS(t *testing.T) *SAS {
	t.Helper()
	p, err := New(policies.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*SAS)
}

// TestPackingWithoutTelemetry: without telemetry every node looks idle and
// alike, so SAS is best-fit packing with backfilling: a job that fits one
// node goes to the fitting node with the fewest free GPUs (lowest index
// among equals); a larger one fills the most-free nodes first.
func TestPackingWithoutTelemetry(t *testing.T) {
	c := env.Homogeneous(4, 4)
	tests := []struct {
		name string
		free []int
		jobs []*env.Job
		want []env.Decision
	}{
		{
			// a (2) fits nodes 1, 2, 3; node 2 is tightest. b (4) fits 1
			// and 3; 1 is lower. c (1) fits 0 (1 free), tightest. d (6)
			// finds only node 3's 4 GPUs left and waits.
			name: "best fit with backfilling",
			free: []int{1, 4, 2, 4},
			jobs: []*env.Job{pending(0, 2), pending(1, 4), pending(2, 1), pending(3, 6)},
			want: []env.Decision{
				{Job: 0, Nodes: []int{2, 2}},
				{Job: 1, Nodes: []int{1, 1, 1, 1}},
				{Job: 2, Nodes: []int{0}},
			},
		},
		{
			// 6 GPUs fit no node: most free first, 4 from node 1, then 2
			// from node 3 (3 free beats node 0's 1).
			name: "spread over the most free nodes",
			free: []int{1, 4, 0, 3},
			jobs: []*env.Job{pending(0, 6)},
			want: []env.Decision{{Job: 0, Nodes: []int{1, 1, 1, 1, 3, 3}}},
		},
		{
			name: "running jobs are left alone",
			free: []int{0, 4, 4, 4},
			jobs: []*env.Job{{ID: 0, Spec: env.JobSpec{GPUs: 4}, State: env.Running, Alloc: []int{0, 0, 0, 0}}, pending(1, 3)},
			want: []env.Decision{{Job: 1, Nodes: []int{1, 1, 1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSAS(t)
			v := &env.View{Cluster: &c, Free: tt.free, Active: tt.jobs, Model: opaque{}}
			got, err := p.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Schedule = %v, want %v", got, tt.want)
			}
			if len(p.NodeGroups()) != 1 {
				t.Errorf("groups = %v, want one group of alike nodes", p.NodeGroups())
			}
		})
	}
}

// loadedSim builds 8 nodes x 4 GPUs whose nodes 0-3 carry a constant 75%
// CPU background load, under the per-worker model without jitter, with a
// Flat profile (step 1 s, sync 1 s per extra node) fully sensitive to
// every resource.
func loadedSim(t *testing.T, jobs ...env.JobSpec) *env.Sim {
	t.Helper()
	loads := map[int]env.Usage{}
	for n := range 4 {
		loads[n] = env.Usage{CPU: 0.75}
	}
	m := &env.Drover{
		Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 1, PerEpoch: 1, Epochs: 1}),
		Workers: &env.Workers{
			Background:    envtest.Background{Loads: loads},
			Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1, MemBW: 1, Net: 1}},
		},
	}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(8, 4), Model: m, Log: true}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAvoidsLoadedGroup: the loaded nodes 0-3 form one group and the idle
// nodes 4-7 another; a 4-GPU job would take a loaded node to 0.75 + 4/16 =
// 1.0 CPU (overloaded), so it goes to the idle group, node 4, and a 2-GPU
// job after it to node 5. First-fit would put them on nodes 0 and 1.
func TestAvoidsLoadedGroup(t *testing.T) {
	s := loadedSim(t, envtest.MakeJob("a").GPUs(4).Duration(100).Obj(), envtest.MakeJob("b").GPUs(2).Duration(100).Obj())
	p := newSAS(t)
	v, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	want := []env.Decision{{Job: 0, Nodes: []int{4, 4, 4, 4}}, {Job: 1, Nodes: []int{5, 5}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Schedule = %v, want %v", got, want)
	}
	if g, want := p.NodeGroups(), [][]int{{4, 5, 6, 7}, {0, 1, 2, 3}}; !reflect.DeepEqual(g, want) {
		t.Errorf("groups = %v, want %v", g, want)
	}
	if err := s.Apply(got); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(p, nil); err != nil {
		t.Fatal(err)
	}
	for _, j := range s.Jobs() {
		if math.Abs(j.Finish-100) > 1e-9 {
			t.Errorf("job %s finished at %v, want 100 (no slowdown on idle nodes)", j.Spec.Name, j.Finish)
		}
	}
}

// TestProbedWeights works the probed sensitivities of a 4-GPU Flat job by
// hand. CPU: the packed placement [4] at background 0.9 - 4/16 = 0.65
// totals 0.9 CPU, overload (0.9-0.8)/0.2 = 0.5, so compute (1 s) takes 1.5
// s: weight 0.5. Memory bandwidth likewise (0.9 - 4 x 0.08 background).
// Network: on [2, 2] an iteration is 1 s compute + 1 s sync; half the NIC
// taken doubles the sync (contention 1/(1-0.5), Net sensitivity 1): 3 s
// against 2 s, weight 0.5.
func TestProbedWeights(t *testing.T) {
	s := loadedSim(t, envtest.MakeJob("a").GPUs(4).Duration(100).Obj())
	v, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	p := newSAS(t)
	p.reset(v)
	in := p.info(v.Active[0], v.Model.(env.Prober))
	want := [numResources]float64{0.5, 0.5, 0.5}
	for r := range want {
		if math.Abs(in.weight[r]-want[r]) > 1e-9 {
			t.Errorf("weight %v = %v, want %v", Resource(r), in.weight[r], want[r])
		}
	}
}

// runBuiltin replays the builtin workload on 16 x 4 GPUs under the
// per-worker model (fitted background load, calibrated jitter, seed 1).
func runBuiltin(t *testing.T) *trace.Result {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	p := newSAS(t)
	res, err := trace.Run(trace.Options{
		Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: profiles, Policy: p,
		Nodes: 16, GPUsPerNode: 4, Interval: -1, RestartDelay: -1, Log: true,
		Stragglers: &trace.Stragglers{Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if k := len(p.NodeGroups()); k < 2 || k > GroupCount(16) {
		t.Errorf("%d groups on 16 loaded nodes, want 2..%d", k, GroupCount(16))
	}
	return res
}

func TestBuiltinRunDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a trace")
	}
	a := runBuiltin(t)
	if a.Summary.Finished != a.Summary.Jobs {
		t.Fatalf("%d of %d jobs finished", a.Summary.Finished, a.Summary.Jobs)
	}
	if a.Summary.Restarts != 0 {
		t.Errorf("%d restarts, want 0: SAS never preempts", a.Summary.Restarts)
	}
	for _, e := range a.Events {
		if e.Kind == env.Preempt {
			t.Fatalf("preemption at %v: SAS never preempts", e.Time)
		}
	}
	b := runBuiltin(t)
	if !reflect.DeepEqual(a.Events, b.Events) || a.Summary != b.Summary {
		t.Errorf("two runs differ: %+v vs %+v", a.Summary, b.Summary)
	}
}

// SAS asks for parameter-server rebalancing on PS jobs, and only on them.
func TestPSRebalanceOnPSJobs(t *testing.T) {
	ps := envtest.MakeJob("ps").GPUs(8).Duration(100).Obj()
	ps.Arch, ps.PSShards = env.PS, 2
	s := loadedSim(t, ps, envtest.MakeJob("ring").GPUs(8).Duration(100).Obj())
	v, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := newSAS(t).Schedule(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || !ds[0].PSRebalance || ds[1].PSRebalance {
		t.Errorf("decisions %+v: want rebalancing for the PS job only", ds)
	}
}
