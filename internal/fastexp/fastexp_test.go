package fastexp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpAccuracy compares Exp with math.Exp over its whole range and at
// the points where the table index wraps.
func TestExpAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worst, at := 0.0, 0.0
	check := func(x float64) {
		got, want := Exp(x), math.Exp(x)
		if e := math.Abs(got-want) / want; e > worst {
			worst, at = e, x
		}
	}
	for range 1_000_000 {
		check((2*r.Float64() - 1) * Limit)
		check((2*r.Float64() - 1) * 2)
	}
	for k := -2000; k <= 2000; k++ {
		x := float64(k) * math.Ln2 / n
		check(x)
		check(math.Nextafter(x, 1))
		check(math.Nextafter(x, -1))
		check(x + math.Ln2/(2*n))
	}
	if worst > 4e-16 {
		t.Errorf("worst relative error %.3g at x = %v, want <= 4e-16", worst, at)
	}
	t.Logf("worst relative error %.3g at x = %v", worst, at)
}

// TestExpExact checks the values Exp must get exactly: e^0 = 1 and the
// powers of two at multiples of ln2 (to the ulp of the rounded ln2).
func TestExpExact(t *testing.T) {
	if got := Exp(0); got != 1 {
		t.Errorf("Exp(0) = %v, want 1", got)
	}
	for k := -1000; k <= 1000; k += 37 {
		x := float64(k) * math.Ln2
		if got, want := Exp(x), math.Exp(x); math.Abs(got-want) > 4e-16*want {
			t.Errorf("Exp(%d ln2) = %v, want %v", k, got, want)
		}
	}
}

// TestExpOutside checks the fallback to math.Exp beyond Limit and for NaN
// and infinities.
func TestExpOutside(t *testing.T) {
	for _, x := range []float64{701, -701, 709.7, -745, 1e308, math.Inf(1), math.Inf(-1)} {
		if got, want := Exp(x), math.Exp(x); got != want {
			t.Errorf("Exp(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(Exp(math.NaN())) {
		t.Error("Exp(NaN) is not NaN")
	}
}

var sink float64

func BenchmarkExp(b *testing.B) {
	xs := make([]float64, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = r.NormFloat64()
	}
	b.Run("fastexp", func(b *testing.B) {
		s := 0.0
		for i := 0; b.Loop(); i++ {
			s += Exp(xs[i&1023])
		}
		sink = s
	})
	b.Run("math", func(b *testing.B) {
		s := 0.0
		for i := 0; b.Loop(); i++ {
			s += math.Exp(xs[i&1023])
		}
		sink = s
	})
}
