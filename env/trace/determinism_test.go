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
		Nodes: 16, GPUsPerNode: 4, Interval: interval, RestartDelay: -1, Log: true,
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
