package ppo

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestInitAndWarmup checks that training starts from Init's weights and
// that during the critic warm-up the actor does not move, bit for bit,
// while the critic does.
func TestInitAndWarmup(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TotalSteps, cfg.NumSteps, cfg.Hidden = 4*128*3, 128, []int{16}
	init := NewAgent(4, 2, cfg.Hidden, rand.NewPCG(9, 9))
	cfg.Init, cfg.CriticWarmup = init, 3
	a, err := Train(cfg, cartpoleEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Actor.Params() {
		if !slices.Equal(p.Value, init.Actor.Params()[i].Value) {
			t.Fatalf("actor %s moved during the warm-up", p.Name)
		}
	}
	moved := false
	for i, p := range a.Critic.Params() {
		moved = moved || !slices.Equal(p.Value, init.Critic.Params()[i].Value)
	}
	if !moved {
		t.Error("critic did not learn during the warm-up")
	}
	// One update more than the warm-up: the actor learns.
	cfg.TotalSteps = 4 * 128 * 4
	a, err = Train(cfg, cartpoleEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Actor.Params()[0].Value, init.Actor.Params()[0].Value) {
		t.Error("actor did not learn after the warm-up")
	}
	// Init's shapes must match.
	cfg.Init = NewAgent(4, 2, []int{8}, rand.NewPCG(1, 1))
	if _, err := Train(cfg, cartpoleEnv, nil); err == nil {
		t.Error("Init of other hidden widths: no error")
	}
}
