package dqn

import (
	"testing"

	"github.com/drover-sched/drover/env/cartpole"
	"github.com/drover-sched/drover/internal/longtest"
)

// A short run is reproducible: two 3,000-step runs of DQN on CartPole-v1
// with one seed give the same episode returns.
func TestTrainSmoke(t *testing.T) {
	short := smokeConfig()
	short.TotalSteps = 3000
	a, b := smokeRun(t, short), smokeRun(t, short)
	if len(a) != len(b) {
		t.Fatalf("same seed, %d vs %d episodes", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, episode %d: %v vs %v", i, a[i], b[i])
		}
	}
}

// A short run learns: with learning from step 1,000 and a 7.5k-step
// epsilon decay, 15k steps of DQN on CartPole-v1 lift the last episodes'
// mean return well above random play (about 22). It is a long test (make
// test-long; with TestTrainSmoke it took 132 s of the race run, issue 31).
func TestTrainLearns(t *testing.T) {
	longtest.Skip(t, "15k steps of training")
	a := smokeRun(t, smokeConfig())
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

// smokeConfig is the smoke tests' configuration: 15k steps, learning from
// step 1,000, epsilon decayed over half the run, an update every 4 steps.
func smokeConfig() Config {
	cfg := DefaultConfig()
	cfg.TotalSteps, cfg.LearningStarts, cfg.ExplorationFraction, cfg.TrainEvery = 15000, 1000, 0.5, 4
	return cfg
}

// smokeRun trains DQN on CartPole with cfg and returns every episode's
// return.
func smokeRun(t *testing.T, cfg Config) []float64 {
	t.Helper()
	var rets []float64
	if _, err := Train(cfg, cartpole.New(), func(u Update) { rets = append(rets, u.Return) }); err != nil {
		t.Fatal(err)
	}
	return rets
}
