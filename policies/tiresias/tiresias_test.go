package tiresias

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
)

// reference is Tiresias as first ported from the Pollux simulator's
// tiresias.py (maps keyed by job ID rebuilt at every decision, the free
// GPUs counted from the nodes): the specification the faster Schedule
// must match decision for decision.
type reference struct {
	threshold int64
	q0, q1    []int
	known     map[int]*refInfo
}

type refInfo struct {
	running                             bool
	lastCheck, executed, total, pending int64
}

func (t *reference) Schedule(v *env.View) ([]env.Decision, error) {
	if len(v.Active) == 0 {
		return nil, nil
	}
	now := int64(v.Now)
	alive := make(map[int]*env.Job, len(v.Active))
	for _, j := range v.Active {
		alive[j.ID] = j
	}
	keep := func(q []int) []int {
		k := 0
		for _, id := range q {
			if alive[id] != nil {
				q[k] = id
				k++
			}
		}
		return q[:k]
	}
	t.q0, t.q1 = keep(t.q0), keep(t.q1)
	for id := range t.known {
		if alive[id] == nil {
			delete(t.known, id)
		}
	}
	for _, j := range v.Active {
		if t.known[j.ID] == nil {
			t.known[j.ID] = &refInfo{}
			t.q0 = append(t.q0, j.ID)
		}
	}
	for _, j := range v.Active {
		in := t.known[j.ID]
		tmp := now - in.lastCheck
		in.lastCheck = now
		if in.running {
			in.total += tmp
			in.executed += tmp
			if in.executed*int64(j.Spec.GPUs) >= t.threshold {
				for i, id := range t.q0 {
					if id == j.ID {
						t.q0 = append(t.q0[:i], t.q0[i+1:]...)
						t.q1 = append(t.q1, j.ID)
						break
					}
				}
			}
		} else {
			in.pending += tmp
		}
	}
	gpus := v.Cluster.TotalGPUs()
	want := make(map[int][]int, len(v.Active))
	for _, q := range [2][]int{t.q0, t.q1} {
		for _, id := range q {
			j, in := alive[id], t.known[id]
			if j.Spec.GPUs <= gpus {
				in.running = true
				gpus -= j.Spec.GPUs
				want[id] = j.Alloc
			} else {
				in.running = false
			}
		}
	}
	free := make([]int, len(v.Cluster.Nodes))
	for i, n := range v.Cluster.Nodes {
		free[i] = n.GPUs
	}
	for _, a := range want {
		for _, n := range a {
			free[n]--
		}
	}
	for _, q := range [2][]int{t.q0, t.q1} {
		for _, id := range q {
			if t.known[id].running && len(want[id]) == 0 {
				want[id] = env.PackMostFree(free, alive[id].Spec.GPUs)
			}
		}
	}
	return policies.Diff(v, want), nil
}

// TestMatchesReference replays random workloads on random clusters (a
// low threshold, so that jobs are demoted) under the reference and under
// Schedule, with and without the View's free GPUs, all in the same chaos,
// and wants the same event log and summary. Every other seed drops a
// third of the decisions, so that jobs told to stop keep their GPUs into
// later decisions, also ones that fill the cluster before the walk
// reaches them.
func TestMatchesReference(t *testing.T) {
	profiles := envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.2, Epochs: 10, PerEpoch: 0.1})
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		c, specs := envtest.RandomScenario(r)
		interval := 0.0
		if seed%3 == 2 {
			interval = 60
		}
		threshold := int64(1 + r.IntN(4000))
		run := func(p env.Scheduler, hideFree bool) (string, env.Summary) {
			s, err := env.New(env.Config{Cluster: c, Model: &env.Drover{Profiles: profiles, GPUsPerNode: 8}, Interval: interval,
				RestartDelay: 30, Log: true}, specs)
			if err != nil {
				t.Fatal(err)
			}
			drop := 0.1
			if seed%2 == 1 {
				drop = 0.35
			}
			err = s.Run(&envtest.Chaos{P: p, R: rand.New(rand.NewPCG(seed, 1)), Drop: drop, Preempt: 0.05, HideFree: hideFree}, nil)
			return fmt.Sprint(err, "\n", env.LogString(s.Events(), s.Jobs())), s.Summary()
		}
		logRef, sumRef := run(&reference{threshold: threshold, known: map[int]*refInfo{}}, false)
		for _, hide := range []bool{false, true} {
			log, sum := run(&Tiresias{Threshold: threshold}, hide)
			if log != logRef || fmt.Sprint(sum) != fmt.Sprint(sumRef) {
				t.Fatalf("seed %d (free GPUs hidden: %v): Schedule decided differently from the reference", seed, hide)
			}
		}
	}
}

// TestMatchesReferenceViews drives Schedule and the reference with the
// same hand-made Views, decision point by decision point: jobs arrive and
// finish at random, and each decision the reference makes is applied only
// with probability 0.6 (and only if its nodes have the GPUs), so jobs keep
// GPUs they were told to give up, or wait for GPUs they were given, into
// decisions where the cluster fills before the walk reaches them. The View
// hides its free GPUs at every other seed. Both must decide alike.
func TestMatchesReferenceViews(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 21))
		c := &env.Cluster{}
		for i := range 1 + r.IntN(4) {
			c.Nodes = append(c.Nodes, env.Node{Name: fmt.Sprint(i), GPUs: 1 + r.IntN(4)})
		}
		total := c.TotalGPUs()
		threshold := int64(1 + r.IntN(400))
		ref := &reference{threshold: threshold, known: map[int]*refInfo{}}
		got := &Tiresias{Threshold: threshold}
		free := make([]int, len(c.Nodes))
		for i, n := range c.Nodes {
			free[i] = n.GPUs
		}
		var active []*env.Job
		next := 0
		for step := range 60 {
			for range r.IntN(3) {
				active = append(active, &env.Job{ID: next, Spec: env.JobSpec{GPUs: 1 + r.IntN(total)}})
				next++
			}
			if len(active) > 0 && r.IntN(3) == 0 { // a job finishes
				k := r.IntN(len(active))
				for _, n := range active[k].Alloc {
					free[n]++
				}
				active = append(active[:k], active[k+1:]...)
			}
			v := &env.View{Now: float64(step * 10), Cluster: c, Free: free, Active: active}
			if seed%2 == 1 {
				v.Free = nil
			}
			want, err := ref.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			have, err := got.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(have) != fmt.Sprint(want) {
				t.Fatalf("seed %d step %d: Schedule decided %v, the reference %v", seed, step, have, want)
			}
			byID := map[int]*env.Job{}
			for _, j := range active {
				byID[j.ID] = j
			}
			for _, d := range want {
				j := byID[d.Job]
				if r.Float64() >= 0.6 {
					continue
				}
				for _, n := range j.Alloc {
					free[n]++
				}
				fits := true
				for _, n := range d.Nodes {
					if free[n]--; free[n] < 0 {
						fits = false
					}
				}
				if !fits { // undo: the start does not happen
					for _, n := range d.Nodes {
						free[n]++
					}
					for _, n := range j.Alloc {
						free[n]--
					}
					continue
				}
				j.Alloc = d.Nodes
			}
		}
	}
}
