package ppo

import (
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"testing"
	"testing/quick"
)

func TestGAEHandWorked(t *testing.T) {
	// Three steps, gamma 0.5, lambda 0.5 (gamma*lambda = 0.25).
	// values 1, 2, 3; the state after the rollout is worth 4.
	// No episode ends:
	//   delta_2 = 1 + 0.5*4 - 3 = 0        A_2 = 0
	//   delta_1 = 1 + 0.5*3 - 2 = 0.5      A_1 = 0.5 + 0.25*0   = 0.5
	//   delta_0 = 1 + 0.5*2 - 1 = 1        A_0 = 1   + 0.25*0.5 = 1.125
	r := []float32{1, 1, 1}
	v := []float32{1, 2, 3}
	nv := []float32{2, 3, 4}
	tests := []struct {
		name        string
		term, trunc []bool
		next        []float32
		wantAdv     []float32
	}{
		{"no boundary", []bool{false, false, false}, []bool{false, false, false}, nv, []float32{1.125, 0.5, 0}},
		// Step 1 terminates: delta_1 = 1 + 0 - 2 = -1, A_1 = -1 (no tail);
		// A_0 = 1 + 0.25*(-1) = 0.75.
		{"terminated", []bool{false, true, false}, []bool{false, false, false}, nv, []float32{0.75, -1, 0}},
		// Step 1 is truncated; its final observation is worth 10:
		// delta_1 = 1 + 0.5*10 - 2 = 4, A_1 = 4 (no tail across episodes);
		// A_0 = 1 + 0.25*4 = 2.
		{"truncated bootstraps", []bool{false, false, false}, []bool{false, true, false}, []float32{2, 10, 4}, []float32{2, 4, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adv, ret := make([]float32, 3), make([]float32, 3)
			GAE(r, v, tt.next, tt.term, tt.trunc, 0.5, 0.5, adv, ret)
			for i := range adv {
				if math.Abs(float64(adv[i]-tt.wantAdv[i])) > 1e-6 || math.Abs(float64(ret[i]-(tt.wantAdv[i]+v[i]))) > 1e-6 {
					t.Fatalf("adv %v ret %v, want adv %v", adv, ret, tt.wantAdv)
				}
			}
		})
	}
}

// naiveGAE sums the discounted TD errors forward to the episode's end, the
// definition, in O(T^2).
func naiveGAE(r, v, nv []float32, term, trunc []bool, gamma, lambda float64) []float64 {
	T := len(r)
	adv := make([]float64, T)
	for t := range T {
		w := 1.0
		for k := t; k < T; k++ {
			next := float64(nv[k])
			if term[k] {
				next = 0
			}
			delta := float64(r[k]) + gamma*next - float64(v[k])
			adv[t] += w * delta
			if term[k] || trunc[k] {
				break
			}
			w *= gamma * lambda
		}
	}
	return adv
}

func TestGAEMatchesNaive(t *testing.T) {
	f := func(seed uint64, n uint8) bool {
		rng := rand.New(rand.NewPCG(seed, 1))
		T := int(n%64) + 1
		r, v, nv := make([]float32, T), make([]float32, T), make([]float32, T)
		term, trunc := make([]bool, T), make([]bool, T)
		for i := range T {
			r[i] = float32(rng.NormFloat64())
			v[i] = float32(rng.NormFloat64())
			term[i] = rng.Float64() < 0.1
			trunc[i] = !term[i] && rng.Float64() < 0.05
		}
		for i := range T {
			if i+1 < T && !term[i] && !trunc[i] {
				nv[i] = v[i+1]
			} else {
				nv[i] = float32(rng.NormFloat64())
			}
		}
		adv, ret := make([]float32, T), make([]float32, T)
		GAE(r, v, nv, term, trunc, 0.99, 0.95, adv, ret)
		want := naiveGAE(r, v, nv, term, trunc, 0.99, 0.95)
		for i := range T {
			if math.Abs(float64(adv[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
				t.Logf("T=%d i=%d got %v want %v", T, i, adv[i], want[i])
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500, Rand: mrand.New(mrand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}
