package env

import (
	"math"
	"testing"
)

func TestWithhold(t *testing.T) {
	tests := []struct {
		name     string
		row      []float64
		wantLost float64
		wantRow  []float64
	}{
		// Median 1, worker 3 at 5 is a straggler. Waiting: 5 s for a whole
		// batch; withholding: 1 s for 3/4 of one (1.33 s per batch). Withhold.
		{"slow straggler is withheld", []float64{1, 1, 1, 5}, 0.25, []float64{1, 1, 1, 1}},
		// At 1.3 s waiting costs 1.3 s per batch, less than 1.33: wait.
		{"mild straggler is waited for", []float64{1, 1, 1, 1.3}, 0, []float64{1, 1, 1, 1.3}},
		{"no straggler", []float64{1, 1.1, 1, 1}, 0, []float64{1, 1.1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := append([]float64(nil), tt.row...)
			times := append([]float64(nil), tt.row...)                     // no communication
			lost := withhold(row, times, 1.2*median(times, nil), len(row)) // median 1 in every case
			if math.Abs(lost-tt.wantLost) > 1e-12 {
				t.Errorf("lost %v, want %v", lost, tt.wantLost)
			}
			for i := range row {
				if row[i] != tt.wantRow[i] {
					t.Errorf("row %v, want %v", row, tt.wantRow)
					break
				}
			}
		})
	}
}
