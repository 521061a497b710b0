package profile

import (
	"math"
	"testing"
)

// TestValidationCurve checks cifar10's curve against its validation CSVs:
// 100 epochs (MaxEpochs), the rows of validation-128.csv at batch size 128
// (first 390 iterations and 0.4455, last 39062 and 0.9448), the mean of
// the 128 and 256 rows at 192 (first: (390 + 300) / 2 and
// (0.4455 + 0.4229) / 2), and the 128 rows below 128 (clamped).
func TestValidationCurve(t *testing.T) {
	m := loadAll(t)["cifar10"]
	tests := []struct {
		bsz                        int
		it0, met0, itLast, metLast float64
	}{
		{128, 390, 0.4455, 39062, 0.9448},
		{192, (390 + 300) / 2.0, (0.4455 + 0.4229) / 2, (39062 + 20377) / 2.0, (0.9448 + 0.9433) / 2},
		{64, 390, 0.4455, 39062, 0.9448},
	}
	for _, tt := range tests {
		its, met := m.ValidationCurve(tt.bsz)
		if len(its) != 100 || len(met) != 100 {
			t.Fatalf("batch %d: %d and %d points, want 100", tt.bsz, len(its), len(met))
		}
		got := []float64{its[0], met[0], its[99], met[99]}
		want := []float64{tt.it0, tt.met0, tt.itLast, tt.metLast}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("batch %d: first and last points %v, want %v", tt.bsz, got, want)
				break
			}
		}
		if f := m.FinalMetric(tt.bsz); math.Abs(met[99]-f) > 1e-12 {
			t.Errorf("batch %d: last metric %v, FinalMetric %v", tt.bsz, met[99], f)
		}
	}
}
