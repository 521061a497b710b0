package gate

import (
	"math"
	"testing"
)

func TestJudge(t *testing.T) {
	tests := []struct {
		name              string
		learned, baseline []float64
		converged         bool
		mean              float64
	}{
		// Every episode 25% better: every resample's mean is 0.25, so the
		// lower bound is 0.25 > 0.02.
		{"consistently better", []float64{75, 150, 300}, []float64{100, 200, 400}, true, 0.25},
		// 1% better everywhere: below the 2% margin.
		{"better by less than the margin", []float64{99, 198}, []float64{100, 200}, false, 0.01},
		// +40% and -30%: mean 5%, but the resamples that draw the bad
		// episode twice have a mean of -30%, so the 5% lower bound is
		// negative (1/4 of resamples of two are that one).
		{"mixed", []float64{60, 130}, []float64{100, 100}, false, 0.05},
		{"worse", []float64{120, 240}, []float64{100, 200}, false, -0.2},
		{"one episode is not evidence", []float64{50}, []float64{100}, false, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.learned, tt.baseline, Config{Seed: 1})
			if v.Converged != tt.converged || math.Abs(v.MeanGain-tt.mean) > 1e-12 {
				t.Errorf("%v, want converged %v mean %v", v, tt.converged, tt.mean)
			}
		})
	}
	// Same seed, same verdict.
	a := Judge([]float64{60, 130, 80}, []float64{100, 100, 100}, Config{Seed: 7})
	b := Judge([]float64{60, 130, 80}, []float64{100, 100, 100}, Config{Seed: 7})
	if a != b {
		t.Errorf("same seed: %v vs %v", a, b)
	}
}
