package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestInferMatchesForward checks the single-input runner against the
// batch forward pass on random networks of both activations: equal to
// within float32 rounding of sums of up to 127 products.
func TestInferMatchesForward(t *testing.T) {
	src := rand.NewPCG(3, 4)
	r := rand.New(rand.NewPCG(5, 6))
	for _, act := range []func() Layer{NewTanh, NewReLU} {
		for _, sizes := range [][]int{{127, 64, 64, 37}, {4, 8, 2}, {9, 1}} {
			m := NewOrthogonalMLP(sizes, act, math.Sqrt2, 1, src)
			f, err := NewInfer(m)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				x := make([]float64, sizes[0])
				xm := NewMat(1, sizes[0])
				for i := range x {
					x[i] = r.NormFloat64()
					xm.Data[i] = float32(x[i])
				}
				want := m.Forward(xm).Data
				got := f.Forward(x)
				for i := range want {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("sizes %v output %d: Infer %v, Forward %v", sizes, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestInferRejects(t *testing.T) {
	if _, err := NewInfer(NewMLP(NewTanh())); err == nil {
		t.Error("an activation first: no error")
	}
	if _, err := NewInfer(NewMLP()); err == nil {
		t.Error("no layers: no error")
	}
	m := NewStack([]int{3, 2}, NewTanh)
	f, _ := NewInfer(m)
	defer func() {
		if recover() == nil {
			t.Error("short input: no panic")
		}
	}()
	f.Forward([]float64{1})
}
