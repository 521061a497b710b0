package dqn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLinearSchedule(t *testing.T) {
	// CleanRL: start 1, end 0.05 over 250k steps (half of 500k).
	tests := []struct{ t, want float64 }{
		{0, 1}, {125000, 0.525}, {250000, 0.05}, {400000, 0.05},
	}
	for _, tt := range tests {
		if got := LinearSchedule(1, 0.05, 250000, tt.t); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("t=%v: %v, want %v", tt.t, got, tt.want)
		}
	}
}

func TestTargetsHandWorked(t *testing.T) {
	// Two actions, gamma 0.5. Sample 0: r 1, next Q_target (2, 4), online
	// (3, 1): DQN takes max 4 -> 1 + 0.5*4 = 3; double takes the online
	// argmax (action 0), rated 2 by the target -> 1 + 0.5*2 = 2.
	// Sample 1 is terminal: y = r = -1 in both.
	r := []float32{1, -1}
	term := []bool{false, true}
	qt := []float32{2, 4, 9, 9}
	qo := []float32{3, 1, 0, 0}
	for _, tt := range []struct {
		double bool
		want   []float32
	}{{false, []float32{3, -1}}, {true, []float32{2, -1}}} {
		y := make([]float32, 2)
		Targets(r, term, qt, qo, 2, 0.5, tt.double, y)
		if y[0] != tt.want[0] || y[1] != tt.want[1] {
			t.Errorf("double=%v: %v, want %v", tt.double, y, tt.want)
		}
	}
}

func TestReplay(t *testing.T) {
	r := NewReplay(3, 2, rand.NewPCG(1, 2))
	for i := range 5 { // 5 adds into 3 slots: transitions 2, 3, 4 remain
		f := float32(i)
		r.Add([]float32{f, f}, i, f, []float32{f + 1, f + 1}, i == 4)
	}
	if r.Len() != 3 {
		t.Fatalf("len %d, want 3", r.Len())
	}
	seen := map[int]bool{}
	b := r.Sample(200)
	for k, a := range b.Action {
		seen[a] = true
		if b.Obs[2*k] != float32(a) || b.NextObs[2*k] != float32(a+1) || b.Reward[k] != float32(a) || b.Terminated[k] != (a == 4) {
			t.Fatalf("sample %d: action %d with obs %v next %v reward %v term %v", k, a, b.Obs[2*k], b.NextObs[2*k], b.Reward[k], b.Terminated[k])
		}
	}
	if len(seen) != 3 || seen[0] || seen[1] {
		t.Errorf("sampled actions %v, want exactly {2, 3, 4}", seen)
	}
	// The same seed draws the same batch.
	r2 := NewReplay(3, 2, rand.NewPCG(1, 2))
	for i := range 5 {
		f := float32(i)
		r2.Add([]float32{f, f}, i, f, []float32{f + 1, f + 1}, i == 4)
	}
	b2 := r2.Sample(200)
	for k := range b.Action {
		if b.Action[k] != b2.Action[k] {
			t.Fatal("same seed, different batches")
		}
	}
}
