package env_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// startAll starts every pending job that fits, first fit, never preempting.
type startAll struct{}

func (startAll) Schedule(v *env.View) ([]env.Decision, error) {
	free := append([]int(nil), v.Free...)
	var ds []env.Decision
	for _, j := range v.Active {
		if j.State != env.Pending {
			continue
		}
		var nodes []int
		for n := range free {
			for free[n] > 0 && len(nodes) < j.Spec.GPUs {
				free[n]--
				nodes = append(nodes, n)
			}
		}
		if len(nodes) < j.Spec.GPUs {
			for _, n := range nodes {
				free[n]++
			}
			continue
		}
		ds = append(ds, env.Decision{Job: j.ID, Nodes: nodes})
	}
	return ds, nil
}

func TestPolluxHandWorked(t *testing.T) {
	// One job on one 4-GPU node, submitted at t=10, interval 60 s: it is
	// seen at the first tick (60), pays the 30 s restart delay, then runs
	// 3 epochs of 100 progress units at goodput 1/step = 1 unit/s.
	// Finish = 60 + 30 + 300 = 390; JCT = 380.
	m := &env.Pollux{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 100, Epochs: 3})}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: 60, RestartDelay: 30},
		[]env.JobSpec{{Name: "a", Submit: 10, GPUs: 1, Model: "flat", BatchSize: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(startAll{}, nil); err != nil {
		t.Fatal(err)
	}
	j := s.Jobs()[0]
	if j.FirstStart != 60 || j.Finish != 390 || j.JCT() != 380 {
		t.Errorf("start %v finish %v JCT %v, want 60 390 380", j.FirstStart, j.Finish, j.JCT())
	}
	// Attained service counts the restart delay: 330 s x 1 GPU.
	if j.Attained != 330 || j.Held != 330 {
		t.Errorf("attained %v GPU-s, held %v s, want 330 and 330", j.Attained, j.Held)
	}
	// Time to accuracy: the 300 s of training, without the restart delay.
	if r := s.Results()[0]; r.TTA != 300 || s.Summary().AvgTTA != 300 {
		t.Errorf("TTA %v, avg %v, want 300", r.TTA, s.Summary().AvgTTA)
	}
}

func TestPolluxEpochRoundsHalfToEven(t *testing.T) {
	// Goodput 1/2.5 unit/s and 1 unit per epoch: each epoch takes 2.5 s,
	// which the reference rounds half to even: 2, then (from 2.0 s in, the
	// progress is exactly 1 so the next epoch needs 2.5 s again) 2: 4 s
	// for 2 epochs, with no restart delay. Event-driven, so the finish is
	// not held to a tick.
	m := &env.Pollux{Profiles: envtest.Profiles(envtest.Flat{Step: 2.5, PerEpoch: 1, Epochs: 2})}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 1), Model: m},
		[]env.JobSpec{{Name: "a", GPUs: 1, Model: "flat", BatchSize: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(startAll{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Jobs()[0].Finish; got != 4 {
		t.Errorf("finish = %v, want 4", got)
	}
}

func TestDroverQueueing(t *testing.T) {
	// Two 1-GPU jobs of 100 s on a 1-GPU cluster, event-driven, no restart
	// delay: b waits for a. JCTs 100 and 195 (b arrives at 5).
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 100, Epochs: 3})}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{
		{Name: "a", Submit: 0, GPUs: 1, Duration: 100, Model: "flat"},
		{Name: "b", Submit: 5, GPUs: 1, Duration: 100, Model: "flat"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(startAll{}, nil); err != nil {
		t.Fatal(err)
	}
	got := []float64{s.Jobs()[0].JCT(), s.Jobs()[1].JCT()}
	if got[0] != 100 || got[1] != 195 {
		t.Errorf("JCTs = %v, want [100 195]", got)
	}
	sum := s.Summary()
	if sum.AvgJCT != 147.5 || sum.Makespan != 200 || sum.GPUUtil != 1 {
		t.Errorf("summary = %+v, want avg 147.5, makespan 200, util 1", sum)
	}
}

func TestDroverSpreadIsSlower(t *testing.T) {
	// A 2-GPU job packed on one node runs at its measured duration; spread
	// over two nodes its iteration costs one extra sync (flatProfile):
	// step 1 + 0.5 = 1.5 s instead of 1 s, so 100 s of work takes 150 s.
	p := envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 100, Epochs: 3}
	for _, tt := range []struct {
		name    string
		cluster env.Cluster
		want    float64
	}{
		{"packed", env.Homogeneous(1, 2), 100},
		{"spread", env.Homogeneous(2, 1), 150},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &env.Drover{Profiles: envtest.Profiles(p), GPUsPerNode: 2}
			s, err := env.New(env.Config{Cluster: tt.cluster, Model: m},
				[]env.JobSpec{{Name: "a", GPUs: 2, Duration: 100, Model: "flat"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(startAll{}, nil); err != nil {
				t.Fatal(err)
			}
			if got := s.Jobs()[0].JCT(); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("JCT = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	ok := env.JobSpec{Name: "a", GPUs: 1, Duration: 1, Model: "flat"}
	tests := []struct {
		name string
		cfg  env.Config
		jobs []env.JobSpec
		want error
	}{
		{"no nodes", env.Config{Model: m}, []env.JobSpec{ok}, env.ErrBadCluster},
		{"zero GPUs", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{{Name: "a", GPUs: 0, Model: "flat"}}, env.ErrBadJob},
		{"negative duration", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{{Name: "a", GPUs: 1, Duration: -1, Model: "flat"}}, env.ErrBadJob},
		{"NaN submit", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{{Name: "a", GPUs: 1, Submit: math.NaN(), Model: "flat"}}, env.ErrBadJob},
		{"unknown model", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{{Name: "a", GPUs: 1, Model: "gpt"}}, env.ErrBadJob},
		{"too big", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{{Name: "a", GPUs: 2, Model: "flat"}}, env.ErrBadJob},
		{"duplicate", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, []env.JobSpec{ok, ok}, env.ErrBadJob},
		{"empty", env.Config{Cluster: env.Homogeneous(1, 1), Model: m}, nil, env.ErrBadJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.New(tt.cfg, tt.jobs)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBadDecisions(t *testing.T) {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m},
		[]env.JobSpec{{Name: "a", GPUs: 1, Duration: 10, Model: "flat"}, {Name: "b", GPUs: 1, Duration: 10, Model: "flat"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	for _, ds := range [][]env.Decision{
		{{Job: 7, Nodes: []int{0}}},
		{{Job: 0, Nodes: []int{5}}},
		{{Job: 0, Nodes: []int{0}}, {Job: 1, Nodes: []int{0}}},
		{{Job: 0, Nodes: []int{0}}, {Job: 0, Nodes: []int{1}}},
	} {
		if err := s.Apply(ds); !errors.Is(err, env.ErrBadDecision) {
			t.Errorf("Apply(%v) = %v, want ErrBadDecision", ds, err)
		}
	}
	// Nothing was applied: both GPUs are still free.
	v, _ := s.Next()
	if v != nil && (v.Free[0] != 1 || v.Free[1] != 1) {
		t.Errorf("free = %v after rejected decisions, want [1 1]", v.Free)
	}
}

// nobody never places anything.
type nobody struct{}

func (nobody) Schedule(*env.View) ([]env.Decision, error) { return nil, nil }

func TestStall(t *testing.T) {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	for _, iv := range []float64{0, 60} {
		s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 1), Model: m, Interval: iv},
			[]env.JobSpec{{Name: "a", GPUs: 1, Duration: 10, Model: "flat"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(nobody{}, nil); !errors.Is(err, env.ErrStalled) {
			t.Errorf("interval %v: Run = %v, want ErrStalled", iv, err)
		}
	}
}

// TestActiveList checks View.Active at every decision point against its
// definition, recomputed from the jobs' states: the submitted, unfinished
// jobs in arrival order. Eight 1-GPU jobs on a 3-GPU cluster finish in
// twos and threes at the same instant (durations 100 or 200 s, arrivals
// at 0, 0, 0, 1, 1, 2, 2, 3), so finished jobs leave the list from its
// middle and its ends at once.
func TestActiveList(t *testing.T) {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 100, Epochs: 3})}
	var specs []env.JobSpec
	for i, sub := range []float64{0, 0, 0, 1, 1, 2, 2, 3} {
		d := 100.0
		if i%3 == 1 {
			d = 200
		}
		specs = append(specs, env.JobSpec{Name: fmt.Sprint("j", i), Submit: sub, GPUs: 1, Duration: d, Model: "flat"})
	}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 3), Model: m}, specs)
	if err != nil {
		t.Fatal(err)
	}
	points := 0
	for {
		v, err := s.Next()
		if errors.Is(err, env.ErrDone) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		points++
		var want []int
		for i, j := range s.Jobs() {
			if j.Spec.Submit <= v.Now && j.State != env.Done {
				want = append(want, i)
			}
		}
		var got []int
		for _, j := range v.Active {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("t=%v: active %v, want %v", v.Now, got, want)
		}
		ds, _ := startAll{}.Schedule(v)
		if err := s.Apply(ds); err != nil {
			t.Fatal(err)
		}
	}
	if s.Finished() != len(specs) || points < 5 {
		t.Errorf("finished %d of %d after %d decision points", s.Finished(), len(specs), points)
	}
}

// TestMaxNodeGPUs: the largest node's GPUs, 0 for no nodes.
func TestMaxNodeGPUs(t *testing.T) {
	c := env.Cluster{Nodes: []env.Node{{GPUs: 4}, {GPUs: 8}, {GPUs: 2}}}
	if got := c.MaxNodeGPUs(); got != 8 {
		t.Errorf("nodes of 4, 8 and 2 GPUs: %d, want 8", got)
	}
	if got := (&env.Cluster{}).MaxNodeGPUs(); got != 0 {
		t.Errorf("no nodes: %d, want 0", got)
	}
}
