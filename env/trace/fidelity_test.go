package trace_test

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// tracesDir returns the shared traces directory (see internal/sharedtraces).
func tracesDir(tb testing.TB) string { return sharedtraces.Dir(tb) }

var (
	measuredOnce sync.Once
	measured     map[string]env.Profile
	measuredErr  error
)

func measuredProfiles(tb testing.TB) map[string]env.Profile {
	dir := filepath.Join(tracesDir(tb), "pollux_apps")
	measuredOnce.Do(func() { measured, _, measuredErr = trace.Profiles(dir, "") })
	if measuredErr != nil {
		tb.Fatal(measuredErr)
	}
	return measured
}

// polluxAvgJCT replays Pollux workload i under policy on the Pollux
// simulator's cluster (16 nodes x 4 GPUs, 60 s interval, 30 s restarts).
func polluxAvgJCT(tb testing.TB, i int, policy string) float64 {
	tb.Helper()
	path := filepath.Join(tracesDir(tb), "philly", "pollux_workloads", fmt.Sprintf("workload-%d.csv", i))
	w, err := datasets.ReadFile(path, datasets.FormatPollux, datasets.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := builtin.Registry().New(policy, policies.Config{Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := trace.Run(trace.Options{
		Workload: w, Model: trace.ModelPollux, Profiles: measuredProfiles(tb), Policy: p,
		Nodes: 16, GPUsPerNode: 4, Interval: 60, RestartDelay: 30,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if res.Summary.Finished != len(w.Jobs) {
		tb.Fatalf("workload-%d: %d of %d jobs finished", i, res.Summary.Finished, len(w.Jobs))
	}
	return res.Summary.AvgJCT
}

// The reference figures are the Pollux simulator's own published output
// (petuum/adaptdl osdi21-artifact, simulator/README.md, and its
// results-jobload/tiresias-1.0/summary.json for the mean over workloads).
func TestFidelityPollux(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 9 workloads")
	}
	within := func(name string, got, want, tol float64) {
		t.Helper()
		rel := math.Abs(got-want) / want
		t.Logf("%s: avg JCT %.2f s, Pollux simulator %.2f s (%+.2f%%)", name, got, want, 100*(got-want)/want)
		if rel > tol {
			t.Errorf("%s: avg JCT %.2f s is %.2f%% from the Pollux simulator's %.2f s (tolerance %.0f%%)", name, got, 100*rel, want, 100*tol)
		}
	}
	sum := 0.0
	for i := 1; i <= 8; i++ {
		jct := polluxAvgJCT(t, i, "tiresias")
		if i == 6 {
			within("tiresias workload-6", jct, 3469.69, 0.02)
		}
		sum += jct
	}
	within("tiresias mean of workloads 1-8", sum/8, 4038.18, 0.02)
	within("optimus workload-6", polluxAvgJCT(t, 6, "optimus"), 5301.88, 0.05)
}
