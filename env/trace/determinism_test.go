package trace_test

import (
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// replayLog runs the built-in workload and returns the event log as text.
func replayLog(t *testing.T, model, policy string, seed uint64, interval float64) string {
	return replayLogWith(t, model, policy, seed, interval, nil)
}

// replayLogWith is replayLog with the per-worker model when st is set.
func replayLogWith(t *testing.T, model, policy string, seed uint64, interval float64, st *trace.Stragglers) string {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := builtin.Registry().New(policy, policies.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	res, err := trace.Run(trace.Options{
		Workload: datasets.Builtin(), Model: model, Profiles: profiles, Policy: p,
		Nodes: 16, GPUsPerNode: 4, Interval: interval, RestartDelay: -1, Log: true, Stragglers: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Finished != res.Summary.Jobs {
		t.Fatalf("%d of %d jobs finished", res.Summary.Finished, res.Summary.Jobs)
	}
	return env.LogString(res.Events, res.Sim.Jobs())
}

func TestSameSeedSameLog(t *testing.T) {
	for _, tt := range []struct {
		model, policy string
		interval      float64
	}{
		{trace.ModelDrover, "random", 0},
		{trace.ModelDrover, "tiresias", 60},
		{trace.ModelPollux, "optimus", 60},
		{trace.ModelPollux, "gandiva", 0},
	} {
		t.Run(tt.model+"/"+tt.policy, func(t *testing.T) {
			a := replayLog(t, tt.model, tt.policy, 7, tt.interval)
			b := replayLog(t, tt.model, tt.policy, 7, tt.interval)
			if a != b {
				t.Fatalf("two runs with seed 7 differ")
			}
			if len(a) == 0 {
				t.Fatal("empty log")
			}
		})
	}
}

func TestSeedsDifferWhereRandomnessIsUsed(t *testing.T) {
	a := replayLog(t, trace.ModelDrover, "random", 1, 0)
	b := replayLog(t, trace.ModelDrover, "random", 2, 0)
	if a == b {
		t.Error("random policy: seeds 1 and 2 gave the same event log")
	}
	// A policy without randomness ignores the seed.
	c := replayLog(t, trace.ModelDrover, "first-fit", 1, 0)
	d := replayLog(t, trace.ModelDrover, "first-fit", 2, 0)
	if c != d {
		t.Error("first-fit: the seed changed the event log")
	}
}

func TestPerWorkerDeterminism(t *testing.T) {
	// The per-worker model draws background load and jitter from the seed:
	// one seed gives one event log, another seed another.
	st := func(seed uint64) *trace.Stragglers { return &trace.Stragglers{Background: "builtin", Seed: seed} }
	a := replayLogWith(t, trace.ModelDrover, "first-fit", 1, 0, st(1))
	b := replayLogWith(t, trace.ModelDrover, "first-fit", 1, 0, st(1))
	c := replayLogWith(t, trace.ModelDrover, "first-fit", 1, 0, st(2))
	if a != b {
		t.Error("per-worker model: two runs with seed 1 differ")
	}
	if a == c {
		t.Error("per-worker model: seeds 1 and 2 gave the same event log")
	}
	// The same interval-driven run, for the tick path.
	if replayLogWith(t, trace.ModelDrover, "tiresias", 1, 60, st(1)) != replayLogWith(t, trace.ModelDrover, "tiresias", 1, 60, st(1)) {
		t.Error("per-worker model, 60 s ticks: two runs with seed 1 differ")
	}
}
