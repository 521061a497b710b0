package env_test

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// TestBoundsRejected checks the issue-18 reproductions that used to hang or
// grow without bound: each is now refused by New with the value named.
func TestBoundsRejected(t *testing.T) {
	m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1})}
	job := func(submit, dur float64) []env.JobSpec {
		return []env.JobSpec{envtest.MakeJob("a").GPUs(1).Submit(submit).Duration(dur).Obj()}
	}
	tests := []struct {
		name    string
		cfg     env.Config
		jobs    []env.JobSpec
		wantErr error  // nil: any error
		want    string // in the message
	}{
		{"duration 1e12", env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, job(0, 1e12), env.ErrBadJob, "duration = 1e+12"},
		{"duration past MaxTime", env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, job(0, env.MaxTime*1.001), env.ErrBadJob, "duration"},
		{"submit 1e300", env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, job(1e300, 10), env.ErrBadJob, "submit = 1e+300"},
		{"interval 1e-6", env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: 1e-6}, job(0, 10), nil, "interval = 1e-06"},
		{"interval NaN", env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: math.NaN()}, job(0, 10), nil, "interval = NaN"},
		{"interval +Inf", env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: math.Inf(1)}, job(0, 10), nil, "interval = +Inf"},
		{"GPUs per node", env.Config{Cluster: env.Homogeneous(1, env.MaxGPUsPerNode+1), Model: m}, job(0, 10), env.ErrBadCluster, "GPUs = 1025"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.New(tt.cfg, tt.jobs)
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error (%v) mentioning %q", err, tt.wantErr, tt.want)
			}
		})
	}
	// The bounds themselves are accepted.
	if _, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: env.MinInterval}, job(env.MaxTime, env.MaxTime)); err != nil {
		t.Errorf("New at the bounds: %v", err)
	}
}

// TestIdleRefreshesCostNothing replays, with the per-worker model at a 1 ms
// refresh period, a job at 0 and one at MaxTime. Stepping through the
// empty refreshes between them one by one would take 1e11 steps (it hung,
// issue 18); they are skipped, so the run costs its events. Without load
// or jitter each job runs its measured 10 s, wherever it arrives, in both
// event-driven and interval runs.
func TestIdleRefreshesCostNothing(t *testing.T) {
	for _, iv := range []float64{0, 60} {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
			Workers:  &env.Workers{Period: 1e-3, BurstNoise: -1},
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m, Interval: iv}, []env.JobSpec{
			envtest.MakeJob("a").GPUs(1).Duration(10).Obj(),
			envtest.MakeJob("b").GPUs(1).Submit(env.MaxTime).Duration(10).Obj(),
		})
		if err != nil {
			t.Fatal(err)
		}
		within(t, time.Minute, func() error { return s.Run(spreadWith{}, nil) }) // the 1e11 steps hung (issue 18); the skip takes a loaded machine under -race far less than a minute
		for _, j := range s.Jobs() {
			// Event-driven: 10 s; interval: 10 s from the tick after arrival.
			if got := j.Finish - j.FirstStart; math.Abs(got-10) > 1e-6 {
				t.Errorf("interval %v: job %s ran %v s, want 10", iv, j.Spec.Name, got)
			}
		}
	}
}

// within runs f and fails the test if it errs or has not returned after d
// (a regression then fails instead of hanging; the goroutine is left
// behind).
func within(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// TestSkipRefreshesMatchesStepping checks, against stepping one refresh at
// a time (the naive version), that an idle gap lands on the same refresh
// times: the run after the gap refreshes exactly where it used to.
func TestSkipRefreshesMatchesStepping(t *testing.T) {
	naive := func(next, period, until float64) float64 {
		for next <= until {
			next += period
		}
		return next
	}
	f := func(periodIdx uint8, gapSteps uint16, frac uint16) bool {
		period := []float64{1, 60, 300, 1800}[periodIdx%4]
		until := (float64(gapSteps) + float64(frac)/65536) * period
		return env.SkipRefreshes(period, period, until) == naive(period, period, until)
	}
	if err := quick.Check(f, &quick.Config{Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}
