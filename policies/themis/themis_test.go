package themis_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/themis"
)

// oracle is a model whose answers are set by hand: each job's remaining
// seconds at its demand (one iteration of one second per remaining
// second, whatever the GPUs).
type oracle struct{ remaining map[int]float64 }

func (oracle) Name() string                              { return "hand" }
func (oracle) Admit(*env.Job, *env.Meta) error           { return nil }
func (oracle) Place(*env.Job, *env.Cluster)              {}
func (oracle) Advance(*env.Job, float64) (float64, bool) { return 0, false }
func (o oracle) Remaining(j *env.Job) float64            { return o.remaining[j.ID] }
func (o oracle) RemainingIterations(j *env.Job) float64  { return o.remaining[j.ID] }
func (oracle) StepTime(*env.Job, int, int) float64       { return 1 }
func (oracle) MaxReplicas(j *env.Job) int                { return j.Spec.GPUs }

func TestRho(t *testing.T) {
	// A job that arrived at 0 and still needs 1000 s of its 2000 s on 4 of
	// 8 GPUs contended by 3 jobs: alone in a third of the cluster (8/3
	// GPUs) it would run 4/(8/3) = 1.5 times slower, T_id = 3000 s; at
	// now = 1000 T_sh = 1000 + 1000 = 2000 s, rho = 2/3.
	if got, want := themis.Rho(1000, 0, 1000, 2000, 4, 8, 3), 2.0/3; math.Abs(got-want) > 1e-12 {
		t.Errorf("Rho = %v, want %v", got, want)
	}
	// A job within its share (2 <= 8/3 GPUs) runs as fast as alone:
	// T_id = 400, T_sh = 500 + 400, rho = 2.25.
	if got, want := themis.Rho(1000, 500, 400, 400, 2, 8, 3), 2.25; math.Abs(got-want) > 1e-12 {
		t.Errorf("Rho = %v, want %v", got, want)
	}
}

// TestPicksLargestRho is the worked case: two 4-GPU nodes (C = 8), now =
// 1000 s, three pending jobs in arrival order, each seen for the first
// time (N = 3):
//
//	a: submitted 0,   4 GPUs, half done, 1000 s left: S = 2000, T_id = 2000 x 4/(8/3) = 3000, T_sh = 2000, rho = 0.667
//	c: submitted 500, 2 GPUs, 400 s left:                S = 400,  T_id = 400,                 T_sh = 900,  rho = 2.25
//	b: submitted 900, 4 GPUs, 100 s left:                S = 100,  T_id = 150,                 T_sh = 200,  rho = 1.333
//
// With f = 0 every job is in the offer, by rho: c (2 GPUs, 6 left), b (4,
// 2 left), and a (4) does not fit. With the default f = 0.8 only
// ceil(0.2 x 3) = 1 job, c, is offered first; the 6 GPUs left go in
// arrival order: a (2 left), and b does not fit.
func TestPicksLargestRho(t *testing.T) {
	jobs := []*env.Job{
		{ID: 0, Spec: env.JobSpec{Name: "a", GPUs: 4, Submit: 0}, State: env.Pending, Progress: 0.5},
		{ID: 1, Spec: env.JobSpec{Name: "c", GPUs: 2, Submit: 500}, State: env.Pending},
		{ID: 2, Spec: env.JobSpec{Name: "b", GPUs: 4, Submit: 900}, State: env.Pending},
	}
	model := oracle{remaining: map[int]float64{0: 1000, 1: 400, 2: 100}}
	tests := []struct {
		name   string
		filter float64
		want   []int // the jobs started, in decision order
	}{
		{"f=0", 0, []int{1, 2}},
		{"f=0.6", 0.6, []int{1, 2}}, // ceil(0.4 x 3) = 2 offered: c, b
		{"f=0.8", themis.DefaultFilter, []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := env.Homogeneous(2, 4)
			v := &env.View{Now: 1000, Cluster: &c, Free: []int{4, 4}, Active: jobs, Model: model}
			p := &themis.Themis{Filter: tt.filter, Lease: themis.DefaultLease}
			ds, err := p.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			gpus := 0
			for _, d := range ds {
				got = append(got, d.Job)
				gpus += len(d.Nodes)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("started (-want,+got):\n%s", diff)
			}
			if gpus > 8 {
				t.Errorf("%d GPUs placed on 8", gpus)
			}
		})
	}
}

// TestLease checks that a running job keeps its GPUs for its lease
// whatever its rho, and competes again once the lease is over: one 4-GPU
// node, job x running since the policy started it at 0 with a small rho,
// job y (4 GPUs) arriving with a larger one.
func TestLease(t *testing.T) {
	c := env.Homogeneous(1, 4)
	x := &env.Job{ID: 0, Spec: env.JobSpec{Name: "x", GPUs: 4}, State: env.Pending}
	model := oracle{remaining: map[int]float64{0: 10000, 1: 100}}
	p := &themis.Themis{Filter: 0, Lease: 600}
	ds, err := p.Schedule(&env.View{Now: 0, Cluster: &c, Free: []int{4}, Active: []*env.Job{x}, Model: model})
	if err != nil || len(ds) != 1 || len(ds[0].Nodes) != 4 {
		t.Fatalf("x not started: %v, %v", ds, err)
	}
	x.State, x.Alloc = env.Running, ds[0].Nodes
	y := &env.Job{ID: 1, Spec: env.JobSpec{Name: "y", GPUs: 4, Submit: 100}, State: env.Pending}
	active := []*env.Job{x, y}
	// At 500 x's lease (to 600) holds: nothing changes.
	if ds, err := p.Schedule(&env.View{Now: 500, Cluster: &c, Free: []int{0}, Active: active, Model: model}); err != nil || len(ds) != 0 {
		t.Errorf("within the lease: %v, %v; want no decisions", ds, err)
	}
	// At 700 x competes again. x: T_sh = 700 + 10000; 10000 s left at 7%
	// done is S = 10753, its contention (1 + 2 + 2)/3 = 5/3 jobs gives it
	// 2.4 GPUs alone, so T_id = S x 4/2.4 = 17921 and rho = 0.60. y: T_sh =
	// 600 + 100, N = 2, T_id = 100 x 4/2 = 200, rho = 3.5. x is preempted
	// and y placed.
	x.Progress = 0.07
	ds, err = p.Schedule(&env.View{Now: 700, Cluster: &c, Free: []int{0}, Active: active, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	want := []env.Decision{{Job: 0}, {Job: 1, Nodes: []int{0, 0, 0, 0}}}
	if diff := cmp.Diff(want, ds); diff != "" {
		t.Errorf("after the lease (-want,+got):\n%s", diff)
	}
}

// TestRuns replays a small workload under the registered name to its end.
func TestRuns(t *testing.T) {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	jobs := []env.JobSpec{
		envtest.MakeJob("a").GPUs(4).Duration(5000).Obj(),
		envtest.MakeJob("b").GPUs(4).Submit(10).Duration(100).Obj(),
		envtest.MakeJob("c").GPUs(2).Submit(20).Duration(300).Obj(),
	}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: 60, RestartDelay: 10}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := builtin.Registry().New(themis.Name, policies.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(p, nil); err != nil {
		t.Fatal(err)
	}
	for _, j := range s.Jobs() {
		if j.State != env.Done {
			t.Errorf("job %s ended %s", j.Spec.Name, j.State)
		}
	}
}
