package trace_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// TestProfilesFor replays Pollux workload 6 cut to two of its models with
// only those models' profiles loaded (what drover sim loads) and with all
// six, measured and fitted, and wants the same summary: a run never needs
// the profile of a model its jobs do not use.
func TestProfilesFor(t *testing.T) {
	path := filepath.Join(tracesDir(t), "philly", "pollux_workloads", "workload-6.csv")
	w, err := datasets.ReadFile(path, datasets.FormatPollux, datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Jobs = slices.DeleteFunc(w.Jobs, func(j datasets.Job) bool { return j.Model != "cifar10" && j.Model != "ncf" })
	models := trace.Models(w)
	if !slices.Equal(models, []string{"cifar10", "ncf"}) {
		t.Fatalf("Models = %v, want [cifar10 ncf]", models)
	}
	for _, dir := range []string{filepath.Join(tracesDir(t), "pollux_apps"), "builtin"} {
		some, _, err := trace.ProfilesFor(dir, "", models)
		if err != nil {
			t.Fatal(err)
		}
		if len(some) != 2 {
			t.Fatalf("%s: loaded %d profiles, want 2", dir, len(some))
		}
		all, _, err := trace.Profiles(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		var sums []env.Summary
		for _, ps := range []map[string]env.Profile{some, all} {
			p, err := builtin.Registry().New("tiresias", policies.Config{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			res, err := trace.Run(trace.Options{
				Workload: w, Model: trace.ModelPollux, Profiles: ps, Policy: p,
				Nodes: 16, GPUsPerNode: 4, Interval: 60, RestartDelay: 30,
			})
			if err != nil {
				t.Fatal(err)
			}
			sums = append(sums, res.Summary)
		}
		if sums[0] != sums[1] {
			t.Errorf("%s: two models' profiles give %+v, all six %+v", dir, sums[0], sums[1])
		}
	}
}
