package env_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// shadow keeps a copy of the free GPUs and of the pending set updated only
// from the views' change lists, and random decisions (starts, restarts,
// preemptions, some of them refused as a whole) drive the run.
type shadow struct {
	t       *testing.T
	r       *rand.Rand
	free    []int
	pending map[int]bool
	done    map[int]bool // finished by an earlier decision point
	seq     int
}

func (s *shadow) Schedule(v *env.View) ([]env.Decision, error) {
	if v.Seq != s.seq+1 {
		s.t.Fatalf("seq %d after %d", v.Seq, s.seq)
	}
	s.seq = v.Seq
	if s.free == nil {
		s.free = make([]int, len(v.Free))
		for i, n := range v.Cluster.Nodes {
			s.free[i] = n.GPUs
		}
	}
	for _, n := range v.Touched {
		s.free[n] = v.Free[n]
	}
	for _, j := range v.Changed {
		if s.done[j.ID] {
			s.t.Fatalf("decision point %d: job %d listed again after its finish was", v.Seq, j.ID)
		}
		if j.State == env.Pending {
			s.pending[j.ID] = true
		} else {
			delete(s.pending, j.ID)
		}
	}
	for _, j := range v.Changed {
		if j.State == env.Done {
			s.done[j.ID] = true
		}
	}
	if !slices.Equal(s.free, v.Free) {
		s.t.Fatalf("decision point %d: free %v from the change lists, %v in the view", v.Seq, s.free, v.Free)
	}
	want := map[int]bool{}
	for _, j := range v.Active {
		if j.State == env.Pending {
			want[j.ID] = true
		}
	}
	if fmt.Sprint(want) != fmt.Sprint(s.pending) {
		s.t.Fatalf("decision point %d: pending %v from the change lists, %v in the view", v.Seq, s.pending, want)
	}
	free := slices.Clone(v.Free)
	var ds []env.Decision
	for _, j := range v.Active {
		switch {
		case j.State == env.Running && s.r.IntN(8) == 0:
			ds = append(ds, env.Decision{Job: j.ID}) // preempt
		case j.State == env.Pending && s.r.IntN(2) == 0:
			var a []int
			for n := range free {
				for free[n] > 0 && len(a) < j.Spec.GPUs && s.r.IntN(3) > 0 {
					free[n]--
					a = append(a, n)
				}
			}
			if len(a) == j.Spec.GPUs {
				ds = append(ds, env.Decision{Job: j.ID, Nodes: a})
			} else {
				for _, n := range a {
					free[n]++
				}
			}
		}
	}
	if s.r.IntN(10) == 0 && len(ds) > 0 {
		// An over-committing decision: Apply refuses the whole list.
		ds = append(ds, env.Decision{Job: ds[0].Job, Nodes: []int{0}})
	}
	return ds, nil
}

// TestChangeLists checks View.Seq, Changed and Touched: a copy of the free
// GPUs and of the pending jobs kept only from them matches the view at
// every decision point, through starts, preemptions and finishes, event
// driven and ticked.
func TestChangeLists(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		c := env.Homogeneous(1+r.IntN(6), 1+r.IntN(4))
		var specs []env.JobSpec
		for i := range 1 + r.IntN(60) {
			specs = append(specs, env.JobSpec{Name: fmt.Sprint(i), Submit: float64(r.IntN(500)), GPUs: 1 + r.IntN(c.TotalGPUs()),
				Duration: float64(1 + r.IntN(400)), Model: envtest.FlatName})
		}
		for _, iv := range []float64{0, 30} {
			s, err := env.New(env.Config{Cluster: c, Interval: iv, RestartDelay: 5, LazyAdvance: seed%2 == 0,
				Model: &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.1, PerEpoch: 0.1, Epochs: 10})}}, specs)
			if err != nil {
				t.Fatal(err)
			}
			sh := &shadow{t: t, r: rand.New(rand.NewPCG(seed, 4)), pending: map[int]bool{}, done: map[int]bool{}}
			for {
				v, err := s.Next()
				if err != nil {
					break // done, or stalled by the random policy
				}
				ds, _ := sh.Schedule(v)
				_ = s.Apply(ds)
			}
		}
	}
}
