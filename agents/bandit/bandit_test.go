package bandit

import (
	"math/rand/v2"
	"testing"
)

// A linear contextual bandit with a known answer: the context is a point
// x in [0,1]^3 and action a pays x[a] plus noise, so the best action is
// the argmax of x. Logged from a uniformly random behaviour policy, the
// learner must pick the best action for nearly every new context, and
// respect the mask. Eight rounds of 1,000 samples, each refitting on all
// so far: 973 of 1,000 right (twenty rounds, six times the work: 978).
func TestLearnsKnownBandit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cfg := DefaultConfig()
	l := New(cfg, 3, 3)
	ctx := func() []float64 { return []float64{rng.Float64(), rng.Float64(), rng.Float64()} }
	for range 8 {
		var batch []Sample
		for range 1000 {
			x := ctx()
			a := rng.IntN(3)
			r := x[a] + 0.1*rng.NormFloat64()
			batch = append(batch, Sample{Obs: []float32{float32(x[0]), float32(x[1]), float32(x[2])}, Action: a, Reward: float32(r)})
		}
		l.Add(batch...)
		l.Fit()
	}
	right, masked := 0, 0
	const trials = 1000
	for range trials {
		x := ctx()
		best := 0
		for a := range x {
			if x[a] > x[best] {
				best = a
			}
		}
		if l.Act(x, nil) == best {
			right++
		}
		mask := []bool{true, true, true}
		mask[best] = false
		if l.Act(x, mask) != best {
			masked++
		}
	}
	// Near-ties (|x_a - x_b| small) are hard; 90% leaves room for them.
	if right < trials*9/10 || masked != trials {
		t.Errorf("best action %d/%d times, mask respected %d/%d", right, trials, masked, trials)
	}
}

// The same seed and samples give the same values, bit for bit.
func TestDeterministic(t *testing.T) {
	run := func() []float32 {
		l := New(DefaultConfig(), 2, 2)
		var s []Sample
		for i := range 600 {
			s = append(s, Sample{Obs: []float32{float32(i % 7), float32(i % 3)}, Action: i % 2, Reward: float32(i%5) - 2})
		}
		l.Add(s...)
		l.Fit()
		return l.Values([]float64{1, 2})
	}
	a, b := run(), run()
	if a[0] != b[0] || a[1] != b[1] {
		t.Errorf("%v then %v", a, b)
	}
}

func TestBufferDropsOldest(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Buffer = 3
	l := New(cfg, 1, 1)
	for i := range 5 {
		l.Add(Sample{Obs: []float32{float32(i)}, Reward: float32(i)})
	}
	if l.Len() != 3 || l.buf[0].Reward != 2 {
		t.Errorf("buffer %+v", l.buf)
	}
}

// With a margin, action 0 stands unless another beats it by more.
func TestActMargin(t *testing.T) {
	l := New(DefaultConfig(), 1, 2)
	q := l.Values([]float64{0.5})
	gap := q[1] - q[0]
	lo, hi := gap-0.01, gap+0.01
	if gap > 0 {
		if got := l.ActMargin([]float64{0.5}, nil, lo); got != 1 {
			t.Errorf("margin %v under the gap %v: action %d, want 1", lo, gap, got)
		}
		if got := l.ActMargin([]float64{0.5}, nil, hi); got != 0 {
			t.Errorf("margin %v over the gap %v: action %d, want 0", hi, gap, got)
		}
	} else if got := l.ActMargin([]float64{0.5}, nil, 0); got != 0 {
		t.Errorf("action 0 is best (gap %v): got %d", gap, got)
	}
	if got := l.ActMargin([]float64{0.5}, []bool{false, true}, 100); got != 1 {
		t.Errorf("action 0 masked: got %d, want 1", got)
	}
}
