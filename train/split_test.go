package train

import (
	"fmt"
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

// LateWorkload cuts after round(split x jobs), keeps at most lateJobs
// jobs after the cut, rebases them to time 0, and leaves its input alone.
func TestLateWorkload(t *testing.T) {
	// Jobs submitted every 10 s from t = 100: job i at 100 + 10i.
	jobs := func(n int) *datasets.Workload {
		w := &datasets.Workload{}
		for i := range n {
			w.Jobs = append(w.Jobs, datasets.Job{Name: fmt.Sprint(i), Submit: 100 + 10*float64(i), GPUs: 1, Duration: 60, Model: "cifar10"})
		}
		return w
	}
	tests := []struct {
		name     string
		n        int
		split    float64
		cut      int
		first    string // the late part's first job
		lateJobs int
		wantErr  bool
	}{
		{name: "half", n: 12, split: 0.5, cut: 6, first: "6", lateJobs: 6},
		{name: "rounds to nearest", n: 10, split: 0.25, cut: 3, first: "3", lateJobs: 7}, // 2.5 rounds away from zero
		{name: "capped after the cut", n: lateJobs + 1000, split: 0.1, cut: 300, first: "300", lateJobs: lateJobs},
		{name: "nothing after the cut", n: 3, split: 0.9, wantErr: true},
		{name: "nothing before the cut", n: 3, split: 0.1, wantErr: true},
		{name: "split 0", n: 12, split: 0, wantErr: true},
		{name: "split 1", n: 12, split: 1, wantErr: true},
		{name: "split NaN", n: 12, split: math.NaN(), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := jobs(tt.n)
			cut, late, err := LateWorkload(w, tt.split, 0, 4)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("cut %d accepted", cut)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cut != tt.cut || len(late.Jobs) != tt.lateJobs || late.Jobs[0].Name != tt.first || late.Jobs[0].Submit != 0 {
				t.Errorf("cut %d, late part of %d jobs from %+v; want cut %d, %d jobs from job %s at 0", cut, len(late.Jobs), late.Jobs[0], tt.cut, tt.lateJobs, tt.first)
			}
			if got := late.Jobs[1].Submit; got != 10 {
				t.Errorf("second late job at %v, want 10", got)
			}
			if w.Jobs[tt.cut].Submit != 100+10*float64(tt.cut) {
				t.Errorf("the input's job %d moved to %v", tt.cut, w.Jobs[tt.cut].Submit)
			}
		})
	}
}
