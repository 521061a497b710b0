package datasets

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestQuantileNearestRank checks Inspect's quantile against values worked
// by hand (the smallest value with at least qn values at or below it) and
// against gonum's stat.Quantile with stat.Empirical, which defines the
// same quantile, on random samples with ties.
func TestQuantileNearestRank(t *testing.T) {
	xs := []float64{10, 20, 30, 40}
	for _, c := range []struct{ q, want float64 }{{0, 10}, {0.25, 10}, {0.26, 20}, {0.5, 20}, {0.9, 40}, {0.99, 40}, {1, 40}} {
		if got := quantile(xs, c.q); got != c.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", xs, c.q, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		x := make([]float64, 1+r.IntN(50))
		for i := range x {
			x[i] = float64(r.IntN(20))
		}
		slices.Sort(x)
		for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1, r.Float64()} {
			if got, want := quantile(x, q), stat.Quantile(q, stat.Empirical, x, nil); got != want {
				t.Fatalf("quantile(%v, %v) = %v, gonum %v", x, q, got, want)
			}
		}
	}
}
