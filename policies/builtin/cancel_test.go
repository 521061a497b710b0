package builtin_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// TestScheduleStopsWhenDone: every heuristic drover serve accepts
// (-heuristic, the registry's names) polls its View's Done: with Done
// closed before it starts it decides nothing and returns
// env.ErrCancelled, and with Done open it decides what it decides without
// one (a signal, not a clock). The view's pending jobs (12, 9, 6 and 2
// GPUs on 16 nodes of 4) need several nodes, so every policy has work to
// stop.
func TestScheduleStopsWhenDone(t *testing.T) {
	view := func(t *testing.T) *env.View {
		t.Helper()
		var jobs []env.JobSpec
		for i, g := range []int{12, 9, 6, 2} {
			jobs = append(jobs, envtest.MakeJob(string(rune('a'+i))).GPUs(g).Duration(1000).Obj())
		}
		m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 100, Epochs: 2}), GPUsPerNode: 4, Workers: &env.Workers{}}
		sim, err := env.New(env.Config{Cluster: env.Homogeneous(16, 4), Model: m}, jobs)
		if err != nil {
			t.Fatal(err)
		}
		v, err := sim.Next()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	r := builtin.Registry()
	names := r.Names()
	if len(names) < 10 {
		t.Fatalf("registry names %v: want the 10 heuristics or more", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			policy := func() policies.Policy {
				p, err := r.New(name, policies.Config{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			want, err := policy().Schedule(view(t))
			if err != nil || len(want) == 0 {
				t.Fatalf("without Done: %v, %v; want decisions", want, err)
			}
			v := view(t)
			v.Done = make(chan struct{})
			if got, err := policy().Schedule(v); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("with an open Done: %v, %v; want %v", got, err, want)
			}
			v = view(t)
			done := make(chan struct{})
			close(done)
			v.Done = done
			if got, err := policy().Schedule(v); !errors.Is(err, env.ErrCancelled) || got != nil {
				t.Errorf("with Done closed: %v, %v; want nothing and env.ErrCancelled", got, err)
			}
		})
	}
}
