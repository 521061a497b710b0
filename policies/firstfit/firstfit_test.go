package firstfit

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// TestIncrementalMatchesScan replays random workloads on random clusters
// under the incremental first-fit and the direct scan, both wrapped in the
// same chaos, and wants the same event log and summary.
func TestIncrementalMatchesScan(t *testing.T) {
	profiles := envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.2, Epochs: 10, PerEpoch: 0.1})
	for seed := range uint64(60) {
		c, specs := envtest.RandomScenario(rand.New(rand.NewPCG(seed, 9)))
		interval := 0.0
		if seed%3 == 2 {
			interval = 60
		}
		// A chaos that drops the last runnable job's start may stall the
		// run: the two runs must stall alike.
		run := func(naive bool) (string, env.Summary) {
			s, err := env.New(env.Config{Cluster: c, Model: &env.Drover{Profiles: profiles, GPUsPerNode: 8}, Interval: interval,
				RestartDelay: 30, Log: true}, specs)
			if err != nil {
				t.Fatal(err)
			}
			p := &envtest.Chaos{P: &FirstFit{naive: naive}, R: rand.New(rand.NewPCG(seed, 1)), Skip: 0.1, Drop: 0.15, Preempt: 0.1}
			err = s.Run(p, nil)
			return fmt.Sprint(err, "\n", env.LogString(s.Events(), s.Jobs())), s.Summary()
		}
		logA, sumA := run(true)
		logB, sumB := run(false)
		if logA != logB || fmt.Sprint(sumA) != fmt.Sprint(sumB) {
			t.Fatalf("seed %d: the incremental first-fit decided differently from the scan", seed)
		}
	}
}

// TestFreeTreeFirst checks the tree's first-fit query against a scan
// through random updates.
func TestFreeTreeFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		free := make([]int, 1+r.IntN(40))
		for i := range free {
			free[i] = r.IntN(9)
		}
		var tr freeTree
		tr.build(free)
		for range 100 {
			i := r.IntN(len(free))
			free[i] = r.IntN(9)
			tr.set(i, free[i])
			n := 1 + r.IntN(9)
			want, total := -1, 0
			for k, f := range free {
				total += f
				if want < 0 && f >= n {
					want = k
				}
			}
			if got := tr.first(n); got != want || tr.total != total {
				t.Fatalf("first(%d) = %d, total %d; want %d, %d (free %v)", n, got, tr.total, want, total, free)
			}
		}
	}
}
