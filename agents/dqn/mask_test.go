package dqn

import (
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/env/gym"
)

// TestMaskedTargets works two samples by hand: the max runs over valid
// next actions only, and a state with none bootstraps nothing.
func TestMaskedTargets(t *testing.T) {
	q := []float32{5, 1, 2 /**/, 3, 4, 9}
	mask := []bool{false, true, true /**/, false, false, false}
	y := make([]float32, 2)
	MaskedTargets([]float32{1, 2}, []bool{false, false}, q, nil, mask, 3, 0.5, false, y)
	if y[0] != 1+0.5*2 || y[1] != 2 {
		t.Errorf("targets %v, want [2 2]", y)
	}
	// Double: the online net picks (action 1 among 1, 2), the target rates.
	online := []float32{0, 7, 6, 0, 0, 0}
	MaskedTargets([]float32{1, 2}, []bool{false, false}, q, online, mask, 3, 0.5, true, y)
	if y[0] != 1+0.5*1 {
		t.Errorf("double target %v, want 1.5", y[0])
	}
	// Without a mask, Targets's plain max.
	Targets([]float32{1, 2}, []bool{false, true}, q, nil, 3, 0.5, false, y)
	if y[0] != 1+0.5*5 || y[1] != 2 {
		t.Errorf("unmasked targets %v, want [3.5 2]", y)
	}
}

// maskedEnv is a one-step-per-episode bandit with 4 actions of which only
// 1 and 3 are valid; action 3 pays 1, action 1 pays 0, and an invalid one
// would pay 10, so a learner that ever takes one is caught.
type maskedEnv struct{ invalid int }

func (e *maskedEnv) ObservationSpace() gym.Box {
	return gym.Box{Low: []float64{0}, High: []float64{1}}
}
func (e *maskedEnv) ActionSpace() gym.Discrete          { return gym.Discrete{N: 4} }
func (e *maskedEnv) Reset(uint64) ([]float64, gym.Info) { return []float64{1}, nil }
func (e *maskedEnv) ActionMask(dst []bool) []bool {
	return append(dst[:0], false, true, false, true)
}
func (e *maskedEnv) Step(a int) ([]float64, float64, bool, bool, gym.Info) {
	switch a {
	case 3:
		return []float64{1}, 1, true, false, nil
	case 1:
		return []float64{1}, 0, true, false, nil
	}
	e.invalid++
	return []float64{1}, 10, true, false, nil
}

func TestTrainMasked(t *testing.T) {
	e := &maskedEnv{}
	cfg := DefaultConfig()
	cfg.TotalSteps, cfg.LearningStarts, cfg.TrainEvery, cfg.BatchSize, cfg.Hidden, cfg.LR = 3000, 200, 1, 32, []int{8}, 1e-2
	q, err := Train(cfg, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.invalid > 0 {
		t.Fatalf("took %d invalid actions", e.invalid)
	}
	out := q.Forward(nn.MatFrom(1, 1, []float32{1})).Data
	if argmaxMasked(out, []bool{false, true, false, true}) != 3 {
		t.Errorf("greedy valid action of Q %v, want 3 (pays 1 against 0)", out)
	}
	// Exploration draws uniformly among the valid actions only.
	rng := rand.New(rand.NewPCG(1, 2))
	n := [4]int{}
	for range 4000 {
		n[randomValid(rng, 4, []bool{false, true, false, true})]++
	}
	if n[0]+n[2] != 0 || n[1] < 1800 || n[3] < 1800 {
		t.Errorf("random valid draws %v, want about 2000 each of 1 and 3", n)
	}
}
