package sched

import (
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/google/go-cmp/cmp"
)

// TestCostRate: the running jobs count 1 each, the pending ones the wait
// weight, the others nothing.
func TestCostRate(t *testing.T) {
	jobs := func(states ...env.JobState) []*env.Job {
		var out []*env.Job
		for i, s := range states {
			out = append(out, &env.Job{ID: i, State: s})
		}
		return out
	}
	tests := []struct {
		name   string
		active []*env.Job
		weight float64
		want   float64
	}{
		{name: "none", want: 0},
		{name: "running only", active: jobs(env.Running, env.Running), weight: 0.5, want: 2},
		{name: "pending unweighted", active: jobs(env.Pending, env.Running, env.Pending), want: 1},
		{name: "pending weighted", active: jobs(env.Pending, env.Running, env.Pending), weight: 0.25, want: 1.5},
		{name: "done jobs free", active: jobs(env.Done, env.Running, env.Done), weight: 1, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CostRate(tt.active, tt.weight); got != tt.want {
				t.Errorf("CostRate = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestObserveJob: the encoder's observation for a job, n zeros without
// one (no encoder needed), and dst reused when it has room.
func TestObserveJob(t *testing.T) {
	c := cluster4()
	enc, err := NewEncoder(Config{}, c)
	if err != nil {
		t.Fatal(err)
	}
	j := job(0, 2)
	v := view(c, []int{4, 2, 4, 4}, []float64{0.9, 0, 0.1, 0.5}, j)
	enc.Begin(v)
	n := enc.ObsDim()

	want := enc.Observe(nil, v, j)
	buf := make([]float64, 3, n+5)
	got := ObserveJob(buf, n, enc, v, j)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with a job (-want,+got):\n%s", diff)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("with a job: dst not reused though it has room")
	}

	for i := range buf[:cap(buf)] {
		buf[:cap(buf)][i] = 7
	}
	got = ObserveJob(buf, n, nil, nil, nil)
	if diff := cmp.Diff(make([]float64, n), got); diff != "" {
		t.Errorf("without a job (-want,+got):\n%s", diff)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("without a job: dst not reused though it has room")
	}
	if got := ObserveJob(make([]float64, 0, n-1), n, nil, nil, nil); len(got) != n {
		t.Errorf("without a job, short dst: %d coordinates, want %d", len(got), n)
	}
}
