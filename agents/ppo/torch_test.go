//go:build torch

package ppo

import (
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	_ "github.com/drover-sched/drover/agents/nn/torch"
)

// TestCartPoleTorch is the known answer on the torch backend: CleanRL's
// PPO (500k steps, its defaults) reaches the 475 target on CartPole-v1
// (mean return of the last 20 episodes), and the run is reproducible:
// libtorch on the CPU is deterministic for one thread count.
func TestCartPoleTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("500k steps")
	}
	cfg := DefaultConfig()
	cfg.Backend = "torch"
	var eps []float64
	agent, err := Train(cfg, cartpoleEnv, func(u Update) { eps = append(eps, u.Episodes...) })
	if err != nil {
		t.Fatal(err)
	}
	n := min(20, len(eps))
	mean := 0.0
	for _, r := range eps[len(eps)-n:] {
		mean += r
	}
	mean /= float64(n)
	t.Logf("torch backend: %d episodes, mean return of the last %d: %.1f", len(eps), n, mean)
	if mean < 475 {
		t.Errorf("mean return %.1f, want >= 475", mean)
	}
	// The Go networks hold the trained weights (Sync after every update):
	// greedy play on them balances the pole.
	env := cartpoleEnv(0)
	obs, _ := env.Reset(99)
	x := nn.NewMat(1, len(obs))
	steps := 0
	for ; steps < 500; steps++ {
		for j, v := range obs {
			x.Data[j] = float32(v)
		}
		a := nn.NewCategorical(agent.Actor.Forward(x), nil).Mode()[0]
		var term, trunc bool
		obs, _, term, trunc, _ = env.Step(a)
		if term || trunc {
			break
		}
	}
	if steps < 475 {
		t.Errorf("greedy play on the synced Go actor lasted %d steps, want >= 475", steps)
	}
}

// TestTorchShortRunReproducible: two short torch runs with one seed give
// the same episodes.
func TestTorchShortRunReproducible(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Backend = "torch"
	cfg.TotalSteps = 10 * cfg.NumEnvs * cfg.NumSteps
	run := func() (r []float64) {
		if _, err := Train(cfg, cartpoleEnv, func(u Update) { r = append(r, u.Episodes...) }); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	if len(a) != len(b) {
		t.Fatalf("%d vs %d episodes", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("episode %d: %v vs %v", i, a[i], b[i])
		}
	}
}
