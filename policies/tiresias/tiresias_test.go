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
				want[id] = policies.PackMostFree(free, alive[id].Spec.GPUs)
			}
		}
	}
	return policies.Diff(v, want), nil
}

// TestMatchesReference replays random workloads on random clusters (a
// low threshold, so that jobs are demoted) under the reference and under
// Schedule, with and without the View's free GPUs, all in the same chaos,
// and wants the same event log and summary.
func TestMatchesReference(t *testing.T) {
	profiles := envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.2, Epochs: 10, PerEpoch: 0.1})
	for seed := range uint64(60) {
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
			err = s.Run(&envtest.Chaos{P: p, R: rand.New(rand.NewPCG(seed, 1)), Drop: 0.1, Preempt: 0.05, HideFree: hideFree}, nil)
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
