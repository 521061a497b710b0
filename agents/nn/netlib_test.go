//go:build netlib

package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// OpenBLAS gives the pure-Go products to float32 rounding.
func TestNetlibMatchesPureGo(t *testing.T) {
	if !strings.Contains(BLAS, "openblas") {
		t.Fatalf("BLAS %q", BLAS)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	l := NewLinear(64, 64)
	for i := range l.W.Value {
		l.W.Value[i] = float32(rng.NormFloat64())
	}
	x := NewMat(128, 64)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	got := l.Forward(x).Clone()
	SetBLAS(nil)
	defer func() { SetBLAS(openblas()) }()
	want := l.Forward(x)
	for i := range want.Data {
		if d := math.Abs(float64(got.Data[i] - want.Data[i])); d > 1e-4*(1+math.Abs(float64(want.Data[i]))) {
			t.Fatalf("element %d: openblas %v, pure Go %v", i, got.Data[i], want.Data[i])
		}
	}
}
