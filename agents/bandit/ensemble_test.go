package bandit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// constHeads returns an ensemble whose head h values action a at q[h][a]
// whatever the context: the output layer's weights zeroed, its biases q.
func constHeads(t *testing.T, q [][]float32) *Ensemble {
	t.Helper()
	e := NewEnsemble(DefaultConfig(), 2, len(q[0]), len(q))
	for h, l := range e.Heads {
		ls := l.Q.Linears()
		out := ls[len(ls)-1]
		for i := range out.W.Value {
			out.W.Value[i] = 0
		}
		copy(out.B.Value, q[h])
	}
	return e
}

func TestActLower(t *testing.T) {
	// Deltas over action 0, per head: action 1 {1, 1, 1} (mean 1, sd 0);
	// action 2 {3, -1, 1} (mean 1, sd 2).
	e := constHeads(t, [][]float32{{0, 1, 3}, {0, 1, -1}, {0, 1, 1}})
	obs := []float64{0.3, -0.2}
	for _, tt := range []struct {
		name      string
		mask      []bool
		margin, z float64
		want      int
	}{
		{"agreed gain", nil, 0.5, 1, 1},                                       // action 1: 1 - 0 > 0.5; action 2: 1 - 2 < 0.5
		{"margin too high", nil, 1, 1, 0},                                     // nothing clears 1
		{"disagreement ignored at z=0", []bool{true, false, true}, 0.5, 0, 2}, // action 2 alone: mean 1 > 0.5
		{"disagreement at z=0.1", []bool{true, false, true}, 0.5, 0.1, 2},     // 1 - 0.2 = 0.8 > 0.5
		{"disagreement at z=1", []bool{true, false, true}, 0.5, 1, 0},         // 1 - 2 < 0.5
		{"default invalid", []bool{false, true, true}, 5, 1, 1},               // best mean among 1 and 2: tie, lowest index
	} {
		if got := e.ActLower(obs, tt.mask, tt.margin, tt.z); got != tt.want {
			t.Errorf("%s: action %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPoisson1(t *testing.T) {
	// The online bootstrap's weights: mean 1, variance 1, P(0) = 1/e.
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	sum, sq, zeros := 0.0, 0.0, 0
	for range n {
		k := poisson1(r)
		sum += float64(k)
		sq += float64(k * k)
		if k == 0 {
			zeros++
		}
	}
	mean := sum / n
	v := sq/n - mean*mean
	// Standard errors: sqrt(1/n) = 0.0022 for the mean, about 0.005 for the
	// variance, 0.0011 for P(0).
	if math.Abs(mean-1) > 0.01 || math.Abs(v-1) > 0.03 || math.Abs(float64(zeros)/n-math.Exp(-1)) > 0.006 {
		t.Errorf("mean %.4f, variance %.4f, P(0) %.4f: want 1, 1, %.4f", mean, v, float64(zeros)/n, math.Exp(-1))
	}
}

func TestEnsembleOneHeadIsLearner(t *testing.T) {
	// One head gets every sample once and fits as a lone Learner would.
	cfg := DefaultConfig()
	e := NewEnsemble(cfg, 2, 3, 1)
	l := New(cfg, 2, 3)
	s := []Sample{{Obs: []float32{1, 0}, Action: 1, Reward: 2}, {Obs: []float32{0, 1}, Action: 2, Reward: -1}}
	e.Add(s...)
	l.Add(s...)
	if a, b := e.Fit(), l.Fit(); a != b {
		t.Errorf("loss %v, want %v", a, b)
	}
}
