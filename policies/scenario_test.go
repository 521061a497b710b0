package policies_test

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

func run(t *testing.T, policy string, c env.Cluster, interval float64, jobs ...env.JobSpec) *env.Sim {
	t.Helper()
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	s, err := env.New(env.Config{Cluster: c, Model: m, Interval: interval, Log: true}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := builtin.Registry().New(policy, policies.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(p, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTiresiasDemotes(t *testing.T) {
	// One 4-GPU node, 60 s ticks, no restart delay. a (4 GPUs, 100000 s)
	// starts at the first tick, 60. b (4 GPUs, 1000 s) arrives at 100 and
	// waits behind a in queue 0 until a has executed 16 GPU-hours:
	// executed x 4 >= 57600 s at executed = 14400 s, i.e. at the tick
	// 60 + 14400 = 14460. a is demoted and preempted, b starts at 14460 and
	// finishes at 15460; a restarts at the next tick, 15480, and finishes
	// 100000 - 14400 s of work later, at 101080.
	s := run(t, "tiresias", env.Homogeneous(1, 4), 60,
		envtest.MakeJob("a").GPUs(4).Duration(100000).Obj(),
		envtest.MakeJob("b").GPUs(4).Submit(100).Duration(1000).Obj())
	a, b := s.Jobs()[0], s.Jobs()[1]
	if a.FirstStart != 60 || b.FirstStart != 14460 || b.Finish != 15460 {
		t.Errorf("a start %v, b start %v finish %v; want 60, 14460, 15460", a.FirstStart, b.FirstStart, b.Finish)
	}
	if a.Preemptions != 1 || a.Restarts() != 1 || a.Finish != 101080 {
		t.Errorf("a: %d preemptions, %d restarts, finish %v; want 1, 1, 101080", a.Preemptions, a.Restarts(), a.Finish)
	}
}

func TestFIFOBlocksFirstFitBackfills(t *testing.T) {
	// Two 2-GPU nodes, event-driven. a takes 3 GPUs (node 0 whole, one of
	// node 1) until 100; b wants 2 and does not fit; c wants 1 and does.
	// FIFO holds c behind b; first-fit starts c at once.
	jobs := []env.JobSpec{
		envtest.MakeJob("a").GPUs(3).Duration(100).Obj(),
		envtest.MakeJob("b").GPUs(2).Submit(1).Duration(100).Obj(),
		envtest.MakeJob("c").GPUs(1).Submit(2).Duration(10).Obj(),
	}
	for _, tt := range []struct {
		policy string
		cStart float64
	}{{"fifo", 100}, {"first-fit", 2}} {
		t.Run(tt.policy, func(t *testing.T) {
			s := run(t, tt.policy, env.Homogeneous(2, 2), 0, jobs...)
			if got := s.Jobs()[2].FirstStart; got != tt.cStart {
				t.Errorf("c starts at %v, want %v", got, tt.cStart)
			}
		})
	}
}

func TestGandivaPacksBySize(t *testing.T) {
	// Three 4-GPU nodes. a (2 GPUs) lands on node 0 (best fit, all equal);
	// b (3 GPUs) cannot share node 0 (2 free), takes the fullest node that
	// fits: node 1; c (2 GPUs) has affinity to node 0 (a 2-GPU job there)
	// and goes there, leaving node 2 whole.
	s := run(t, "gandiva", env.Homogeneous(3, 4), 0,
		envtest.MakeJob("a").GPUs(2).Duration(100).Obj(),
		envtest.MakeJob("b").GPUs(3).Submit(1).Duration(100).Obj(),
		envtest.MakeJob("c").GPUs(2).Submit(2).Duration(100).Obj())
	want := map[string]int{"a": 0, "b": 1, "c": 0}
	for _, e := range s.Events() {
		if e.Kind == env.Start {
			name := s.Jobs()[e.Job].Spec.Name
			if e.Nodes[0] != want[name] {
				t.Errorf("%s placed on node %d, want %d", name, e.Nodes[0], want[name])
			}
		}
	}
}

func TestRandomSeeds(t *testing.T) {
	// Ten 1-GPU jobs at once on ten 1-GPU nodes: the random policy's
	// placement is a permutation that depends on the seed and only on it.
	var jobs []env.JobSpec
	for i := range 10 {
		jobs = append(jobs, envtest.MakeJob(string(rune('a'+i))).Duration(10).Obj())
	}
	place := func(seed uint64) []int {
		m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
		s, _ := env.New(env.Config{Cluster: env.Homogeneous(10, 1), Model: m, Log: true}, jobs)
		p, _ := builtin.Registry().New("random", policies.Config{Seed: seed})
		if err := s.Run(p, nil); err != nil {
			t.Fatal(err)
		}
		nodes := make([]int, 10)
		for _, e := range s.Events() {
			if e.Kind == env.Start {
				nodes[e.Job] = e.Nodes[0]
			}
		}
		return nodes
	}
	a, b, c := place(1), place(1), place(2)
	if !equal(a, b) {
		t.Errorf("seed 1 twice: %v vs %v", a, b)
	}
	if equal(a, c) {
		t.Errorf("seeds 1 and 2 placed alike: %v", a)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOptimusNeedsOracle(t *testing.T) {
	// Optimus on the Drover model (which has an oracle) runs every job.
	s := run(t, "optimus", env.Homogeneous(2, 2), 60,
		envtest.MakeJob("a").GPUs(2).Batch(64).Duration(100).Obj(),
		envtest.MakeJob("b").GPUs(2).Batch(64).Submit(10).Duration(100).Obj())
	for _, j := range s.Jobs() {
		if math.IsNaN(j.Finish) {
			t.Errorf("%s did not finish", j.Spec.Name)
		}
	}
}
