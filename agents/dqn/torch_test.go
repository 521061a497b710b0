//go:build torch

package dqn

import (
	"testing"

	_ "github.com/drover-sched/drover/agents/nn/torch"
	"github.com/drover-sched/drover/env/cartpole"
)

// TestTrainTorch: the smoke run of TestTrainSmoke on the torch backend
// learns as well (the last episodes well above random play, about 22),
// so the weights trained on the device reach the Go network that acts.
func TestTrainTorch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TotalSteps, cfg.LearningStarts, cfg.ExplorationFraction, cfg.TrainEvery = 15000, 1000, 0.5, 4
	cfg.Backend = "torch"
	var rets []float64
	if _, err := Train(cfg, cartpole.New(), func(u Update) { rets = append(rets, u.Return) }); err != nil {
		t.Fatal(err)
	}
	n := min(10, len(rets))
	mean := 0.0
	for _, r := range rets[len(rets)-n:] {
		mean += r
	}
	mean /= float64(n)
	t.Logf("torch backend: mean return of the last %d episodes: %.1f", n, mean)
	if mean < 60 {
		t.Errorf("mean return %.1f, want > 60", mean)
	}
}
