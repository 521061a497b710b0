package state

import (
	"math"
	randv1 "math/rand"
	"math/rand/v2"
	"testing"
	"testing/quick"
)

func TestNNLS2(t *testing.T) {
	tests := []struct {
		name      string
		y, x1, x2 []float64
		a, b      float64
		okA, okB  bool
		tol       float64
	}{{
		// Orthogonal regressors: y = 0.3 x1 + 0.5 x2 exactly.
		name: "both positive",
		y:    []float64{0.3, 0.5, 0.8}, x1: []float64{1, 0, 1}, x2: []float64{0, 1, 1},
		a: 0.3, b: 0.5, okA: true, okB: true, tol: 1e-12,
	}, {
		// Unconstrained: s11 = 2, s22 = 2, s12 = 1, s1y = 1, s2y = 0,
		// det = 3, a = (2*1 - 1*0)/3 = 2/3, b = (2*0 - 1*1)/3 = -1/3 < 0.
		// One-variable fits: x1 alone, a = 1/2, sse = 0.25 + 0 + 0.25 =
		// 0.5; x2 alone, b = max(0, 0/2) = 0, sse = 1. x1 wins.
		name: "negative falls back to one variable",
		y:    []float64{1, 0, 0}, x1: []float64{1, 0, 1}, x2: []float64{0, 1, 1},
		a: 0.5, b: 0, okA: true, okB: true, tol: 0,
	}, {
		// Mirror image: the negative one is a; x2 alone gives b = 1/2.
		name: "negative a",
		y:    []float64{0, 1, 0}, x1: []float64{1, 0, 1}, x2: []float64{0, 1, 1},
		a: 0, b: 0.5, okA: true, okB: true, tol: 0,
	}, {
		// x2 = 2 x1 (collinear, det = 0): x1 alone, a = sum xy/sum xx =
		// (1*1 + 2*2)/(1 + 4) = 1, sse 0; x2 alone gives b = 0.5, sse 0
		// too; ties go to x1.
		name: "collinear",
		y:    []float64{1, 2}, x1: []float64{1, 2}, x2: []float64{2, 4},
		a: 1, b: 0, okA: true, okB: true, tol: 1e-12,
	}, {
		// x2 constant: only a is identified; a = (1*2 + 2*4)/(1 + 4) = 2.
		name: "only x1 varies",
		y:    []float64{2, 4}, x1: []float64{1, 2}, x2: []float64{1, 1},
		a: 2, b: 0, okA: true, okB: false, tol: 1e-12,
	}, {
		// A negative slope alone is clamped to 0.
		name: "x1 negative slope",
		y:    []float64{1, 0}, x1: []float64{0, 1}, x2: []float64{0, 0},
		a: 0, b: 0, okA: true, okB: false, tol: 0,
	}, {
		name: "only x2 varies",
		y:    []float64{0, 0.3}, x1: []float64{0.5, 0.5}, x2: []float64{0, 1},
		a: 0, b: 0.3, okA: false, okB: true, tol: 1e-12,
	}, {
		name: "one point",
		y:    []float64{1}, x1: []float64{1}, x2: []float64{1},
	}, {
		name: "no points",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, okA, okB := nnls2(tt.y, tt.x1, tt.x2)
			if okA != tt.okA || okB != tt.okB || math.Abs(a-tt.a) > tt.tol || math.Abs(b-tt.b) > tt.tol {
				t.Errorf("nnls2 = %v, %v, %v, %v; want %v, %v, %v, %v", a, b, okA, okB, tt.a, tt.b, tt.okA, tt.okB)
			}
		})
	}
}

// naiveNNLS2 minimises sum (y - a x1 - b x2)^2 over a, b >= 0 by cyclic
// coordinate descent, each step the exact one-variable minimiser clamped
// at 0: slow, but obviously converging to the constrained optimum.
func naiveNNLS2(y, x1, x2 []float64) (a, b float64) {
	var s11, s12, s22, s1y, s2y float64
	for i := range y {
		s11 += x1[i] * x1[i]
		s12 += x1[i] * x2[i]
		s22 += x2[i] * x2[i]
		s1y += x1[i] * y[i]
		s2y += x2[i] * y[i]
	}
	for range 20000 {
		if s11 > 0 {
			a = max(0, (s1y-s12*b)/s11)
		}
		if s22 > 0 {
			b = max(0, (s2y-s12*a)/s22)
		}
	}
	return a, b
}

func sse2(y, x1, x2 []float64, a, b float64) float64 {
	s := 0.0
	for i := range y {
		d := y[i] - a*x1[i] - b*x2[i]
		s += d * d
	}
	return s
}

// TestNNLS2Quick checks nnls2 against naiveNNLS2 on random fits where
// both regressors vary (overloads in [0, 1], slowdowns in [-0.2, 1]): its
// coefficients are non-negative and its squared error is no worse.
func TestNNLS2Quick(t *testing.T) {
	f := func(seed uint64) bool {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 3 + r.IntN(6)
		y, x1, x2 := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			x1[i], x2[i], y[i] = r.Float64(), r.Float64(), r.Float64()*1.2-0.2
		}
		a, b, okA, okB := nnls2(y, x1, x2)
		na, nb := naiveNNLS2(y, x1, x2)
		got, want := sse2(y, x1, x2, a, b), sse2(y, x1, x2, na, nb)
		if !okA || !okB || a < 0 || b < 0 || got > want+1e-9*(1+want) {
			t.Logf("seed %d: nnls2 %v, %v (sse %v); naive %v, %v (sse %v)", seed, a, b, got, na, nb, want)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500, Rand: randv1.New(randv1.NewSource(1))}); err != nil {
		t.Error(err)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		x    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{2, 1}, 1.5},
		{[]float64{5, 1, 3}, 3},
		{[]float64{8, 1, 7, 2, 6, 3, 5, 4}, 4.5},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.x...)
		if got := median(tt.x); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.x, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.x[i] {
				t.Errorf("median sorted its argument: %v", tt.x)
				break
			}
		}
	}
}
