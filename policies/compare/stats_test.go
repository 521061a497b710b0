package compare

import (
	"math"
	"math/rand"
	"testing"
	"testing/quick"
)

// TestTQuantile checks Student-t quantiles against the printed table
// (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2, upper critical values).
func TestTQuantile(t *testing.T) {
	tests := []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.706},
		{0.975, 2, 4.303},
		{0.975, 4, 2.776},
		{0.975, 9, 2.262},
		{0.975, 30, 2.042},
		{0.95, 10, 1.812},
		{0.995, 4, 4.604},
	}
	for _, tt := range tests {
		if got := TQuantile(tt.p, tt.df); math.Abs(got-tt.want) > 5e-4 {
			t.Errorf("t(%g, %d) = %.5f, want %.3f", tt.p, tt.df, got, tt.want)
		}
	}
}

func TestMeanCI(t *testing.T) {
	// 1..5: mean 3, s = sqrt(2.5), half-width t(0.975,4) * s / sqrt(5)
	// = 2.7764451 * 0.7071068 = 1.9632432 (by hand).
	e := MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	if e.N != 5 || e.Mean != 3 || math.Abs(e.HalfWidth-1.9632432) > 1e-6 {
		t.Errorf("MeanCI(1..5) = %+v, want mean 3 ± 1.9632432", e)
	}
	if e.Lo() != 3-e.HalfWidth || e.Hi() != 3+e.HalfWidth {
		t.Errorf("Lo, Hi = %v, %v", e.Lo(), e.Hi())
	}
	// Two values 10, 20: s = 7.0710678, half-width 12.7062047 * 5 = 63.531.
	if e := MeanCI([]float64{10, 20}, 0.95); e.Mean != 15 || math.Abs(e.HalfWidth-63.5310235) > 1e-5 {
		t.Errorf("MeanCI(10, 20) = %+v, want 15 ± 63.531", e)
	}
	if e := MeanCI([]float64{7}, 0.95); e.Mean != 7 || !math.IsNaN(e.HalfWidth) {
		t.Errorf("MeanCI of one value = %+v, want 7 ± NaN", e)
	}
	if e := MeanCI(nil, 0.95); !math.IsNaN(e.Mean) || e.N != 0 {
		t.Errorf("MeanCI of nothing = %+v", e)
	}
	if e := MeanCI([]float64{4, 4, 4}, 0.95); e.HalfWidth != 0 {
		t.Errorf("MeanCI of equal values = %+v, want zero width", e)
	}
}

// TestMeanCINaive checks MeanCI against a two-pass textbook version
// (variance as E[x^2] - E[x]^2 scaled to n-1) on random data.
func TestMeanCINaive(t *testing.T) {
	f := func(raw []int16) bool {
		if len(raw) < 2 {
			return true
		}
		xs := make([]float64, len(raw))
		var s, s2 float64
		for i, r := range raw {
			xs[i] = float64(r) / 16
			s += xs[i]
			s2 += xs[i] * xs[i]
		}
		n := float64(len(xs))
		mean := s / n
		v := (s2 - n*mean*mean) / (n - 1)
		hw := TQuantile(0.975, len(xs)-1) * math.Sqrt(max(v, 0)/n)
		e := MeanCI(xs, 0.95)
		return math.Abs(e.Mean-mean) < 1e-9 && math.Abs(e.HalfWidth-hw) < 1e-6*(1+hw)
	}
	if err := quick.Check(f, &quick.Config{Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}
