package dqn

import (
	"testing"

	"github.com/drover-sched/drover/env/cartpole"
)

// A short run is reproducible and learns: with learning from step 1,000
// and a 7.5k-step epsilon decay, 15k steps of DQN on CartPole-v1 lift the
// last episodes' mean return well above random play (about 22).
func TestTrainSmoke(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TotalSteps, cfg.LearningStarts, cfg.ExplorationFraction, cfg.TrainEvery = 15000, 1000, 0.5, 4
	run := func(cfg Config) []float64 {
		var rets []float64
		if _, err := Train(cfg, cartpole.New(), func(u Update) { rets = append(rets, u.Return) }); err != nil {
			t.Fatal(err)
		}
		return rets
	}
	short := cfg
	short.TotalSteps = 3000
	a, b := run(short), run(short)
	if len(a) != len(b) {
		t.Fatalf("same seed, %d vs %d episodes", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, episode %d: %v vs %v", i, a[i], b[i])
		}
	}
	a = run(cfg)
	n := min(10, len(a))
	mean := 0.0
	for _, r := range a[len(a)-n:] {
		mean += r
	}
	mean /= float64(n)
	t.Logf("mean return of the last %d episodes: %.1f", n, mean)
	if mean < 60 {
		t.Errorf("mean return %.1f, want > 60", mean)
	}
}
