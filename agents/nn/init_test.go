package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gram returns WᵀW (cols x cols) when tall, else W Wᵀ (rows x rows), in float64.
func gram(w []float32, rows, cols int) [][]float64 {
	n, k := rows, cols
	at := func(i, j int) float64 { return float64(w[i*cols+j]) }
	if rows >= cols {
		n, k = cols, rows
		at = func(i, j int) float64 { return float64(w[j*cols+i]) }
	}
	g := make([][]float64, n)
	for i := range g {
		g[i] = make([]float64, n)
		for j := range g[i] {
			for l := 0; l < k; l++ {
				g[i][j] += at(i, l) * at(j, l)
			}
		}
	}
	return g
}

func TestOrthogonal(t *testing.T) {
	tests := []struct {
		rows, cols int
		gain       float64
	}{
		{64, 8, 1}, {8, 64, 1}, {64, 64, 1}, {64, 64, math.Sqrt2}, {4, 64, 0.01}, {1, 64, 1}, {128, 256, 1},
	}
	for _, tt := range tests {
		p := NewParam("w", tt.rows, tt.cols)
		Orthogonal(p, tt.gain, rand.NewPCG(1, 2))
		g := gram(p.Value, tt.rows, tt.cols)
		for i := range g {
			for j := range g[i] {
				want := 0.0
				if i == j {
					want = tt.gain * tt.gain
				}
				if math.Abs(g[i][j]-want) > 1e-5*math.Max(1, tt.gain*tt.gain) {
					t.Fatalf("%dx%d gain %v: gram[%d][%d] = %v, want %v", tt.rows, tt.cols, tt.gain, i, j, g[i][j], want)
				}
			}
		}
	}
}

// TestOrthogonalSign checks torch's sign convention: Q = A R⁻¹ with diag(R) > 0,
// so column j of Q has a positive dot product with column j of the (tall)
// Gaussian matrix A it came from.
func TestOrthogonalSign(t *testing.T) {
	const rows, cols = 16, 5
	p := NewParam("w", rows, cols)
	Orthogonal(p, 1, rand.NewPCG(5, 6))
	rng := rand.New(rand.NewPCG(5, 6))
	a := make([]float64, rows*cols)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for j := 0; j < cols; j++ {
		var d float64
		for i := 0; i < rows; i++ {
			d += a[i*cols+j] * float64(p.Value[i*cols+j])
		}
		if d <= 0 {
			t.Errorf("column %d: <q, a> = %v, want > 0", j, d)
		}
	}
}

func TestInitDeterminism(t *testing.T) {
	build := func(seed uint64) []*Param {
		return NewOrthogonalMLP([]int{8, 64, 64, 5}, NewTanh, math.Sqrt2, 0.01, rand.NewPCG(seed, 0)).Params()
	}
	a, b, c := build(1), build(1), build(2)
	same := func(x, y []*Param) bool {
		for i := range x {
			for j := range x[i].Value {
				if math.Float32bits(x[i].Value[j]) != math.Float32bits(y[i].Value[j]) {
					return false
				}
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("same seed gave different weights")
	}
	if same(a, c) {
		t.Error("different seeds gave the same weights")
	}
	for _, p := range a {
		if p.Name[len(p.Name)-4:] == "bias" {
			for _, v := range p.Value {
				if v != 0 {
					t.Fatalf("%s not zero", p.Name)
				}
			}
		}
	}
	// The head has gain 0.01: its rows are orthogonal with norm 0.01.
	head := a[4]
	g := gram(head.Value, 5, 64)
	if math.Abs(g[0][0]-1e-4) > 1e-9 {
		t.Errorf("head row norm² = %v, want 1e-4", g[0][0])
	}
}

func TestTorchDefaultInit(t *testing.T) {
	l := NewLinear(16, 4)
	TorchDefaultInit(l, rand.NewPCG(1, 1))
	for _, p := range l.Params() {
		for _, v := range p.Value {
			if math.Abs(float64(v)) > 0.25 { // 1/√16
				t.Fatalf("%s value %v outside ±0.25", p.Name, v)
			}
		}
	}
	Constant(l.B, 3)
	if l.B.Value[3] != 3 {
		t.Error("Constant did not set the bias")
	}
}
