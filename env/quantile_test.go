package env_test

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
)

// TestQuantile checks the type-7 quantile against values worked by hand
// from its definition, h = (n-1)q, x[floor h] + (h - floor h)(x[floor h
// + 1] - x[floor h]), which are numpy.percentile's default answers.
func TestQuantile(t *testing.T) {
	tests := []struct {
		name    string
		xs      []float64
		q, want float64
	}{
		{"p10 of 1..4: h=0.3", []float64{1, 2, 3, 4}, 0.1, 1.3},
		{"median of 1..4: h=1.5", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"p90 of 1..4: h=2.7", []float64{1, 2, 3, 4}, 0.9, 3.7},
		{"min", []float64{1, 2, 3, 4}, 0, 1},
		{"max", []float64{1, 2, 3, 4}, 1, 4},
		{"clamped above", []float64{1, 2, 3, 4}, 2, 4},
		{"clamped below", []float64{1, 2, 3, 4}, -1, 1},
		{"p10 of 1..5: h=0.4", []float64{1, 2, 3, 4, 5}, 0.1, 1.4},
		{"p90 of 1..5: h=3.6", []float64{1, 2, 3, 4, 5}, 0.9, 4.6},
		// numpy.percentile([15, 20, 35, 40, 50], 40) = 29: h=1.6, 20 + 0.6 x 15.
		{"p40, uneven gaps", []float64{15, 20, 35, 40, 50}, 0.4, 29},
		// p99 of 0..99: h=98.01, 98 + 0.01.
		{"p99 of 0..99", seq(100), 0.99, 98.01},
		{"one sample", []float64{7}, 0.3, 7},
		{"ties", []float64{2, 2, 2, 5}, 0.5, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := env.Quantile(tt.xs, tt.q); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name string
		xs   []float64
		q    float64
	}{{"no samples", nil, 0.5}, {"NaN q", []float64{1, 2}, math.NaN()}} {
		if got := env.Quantile(tt.xs, tt.q); !math.IsNaN(got) {
			t.Errorf("%s: Quantile = %v, want NaN", tt.name, got)
		}
	}
}

// TestQuantileOrderStatistics checks the interpolation against its
// definition at the order statistics (q = i/(n-1) gives x[i]) and
// monotonicity in q.
func TestQuantileOrderStatistics(t *testing.T) {
	xs := []float64{0.02, 0.05, 0.05, 0.3, 0.31, 0.6, 0.92, 0.99}
	n := len(xs)
	for i := range n {
		if got := env.Quantile(xs, float64(i)/float64(n-1)); math.Abs(got-xs[i]) > 1e-12 {
			t.Errorf("quantile at %d/%d = %v, want x[%d] = %v", i, n-1, got, i, xs[i])
		}
	}
	prev := math.Inf(-1)
	for q := 0.0; q <= 1; q += 0.01 {
		got := env.Quantile(xs, q)
		if got < prev {
			t.Errorf("quantile not monotone at q=%v: %v < %v", q, got, prev)
		}
		prev = got
	}
}

// seq returns 0, 1, ..., n-1.
func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	return xs
}
