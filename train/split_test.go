package train

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
)

// tinyTrace is a 12-job table (docs/format/jobs.md) of multi-GPU jobs,
// with one 8-GPU job in its first half.
const tinyTrace = "testdata/tiny.csv"

// A trace as the training workload: episodes are windows of its first
// part, rebased to time 0; the rest is the held-out "late" workload.
func TestTraceWorkloadSplit(t *testing.T) {
	all, err := datasets.Load(tinyTrace, datasets.FormatAuto, datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(all.Jobs)
	tw, err := traceWorkload(tinyTrace, 0.5, 0, env.Homogeneous(4, 4), "")
	if err != nil {
		t.Fatal(err)
	}
	cut := (n + 1) / 2 // round(n/2)
	if got := len(tw.late.jobs.Jobs); got != n-cut {
		t.Fatalf("late part has %d jobs, want %d of %d", got, n-cut, n)
	}
	if tw.late.jobs.Jobs[0].Name != all.Jobs[cut].Name || tw.late.jobs.Jobs[0].Submit != 0 {
		t.Errorf("late part starts with %+v, want job %s at time 0", tw.late.jobs.Jobs[0], all.Jobs[cut].Name)
	}
	for seed := range uint64(20) {
		specs := tw.newJobs(seed)
		if len(specs) != cut { // fewer than datasets.DefaultJobs: all of them
			t.Fatalf("seed %d: %d jobs, want the first part's %d", seed, len(specs), cut)
		}
		if specs[0].Submit != 0 {
			t.Errorf("seed %d: first submit %v, want 0", seed, specs[0].Submit)
		}
	}
	// At an offered load the late part is rescaled to it, and jobs larger
	// than the cluster (c: 8 GPUs on 4) are left out of the windows.
	small, err := traceWorkload(tinyTrace, 0.5, 0.7, env.Homogeneous(2, 2), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := small.late.jobs.OfferedLoad(4); math.Abs(got-0.7) > 1e-9 {
		t.Errorf("late part's offered load on 4 GPUs = %v, want 0.7", got)
	}
	for seed := range uint64(5) {
		specs := small.newJobs(seed)
		if len(specs) != cut-1 {
			t.Fatalf("seed %d: %d jobs, want %d (all of the first part but the 8-GPU job)", seed, len(specs), cut-1)
		}
		for _, s := range specs {
			if s.GPUs > 4 {
				t.Errorf("seed %d: job %s wants %d GPUs on a 4-GPU cluster", seed, s.Name, s.GPUs)
			}
		}
	}
	// The late part judged is LateWorkload's, which drover trace convert
	// -late writes.
	_, late, err := LateWorkload(all, 0.5, 0.7, 4)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(late.Jobs, small.late.jobs.Jobs); diff != "" {
		t.Errorf("late part differs from LateWorkload's (-want,+got):\n%s", diff)
	}
	for _, bad := range []float64{0, 1, -0.5, math.NaN()} {
		if _, err := traceWorkload(tinyTrace, bad, 0, env.Homogeneous(4, 4), ""); err == nil {
			t.Errorf("split %v accepted", bad)
		}
	}
}
