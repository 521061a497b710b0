package nn

import (
	"math"
	"testing"
)

// TestMaskedArgmax: the largest valid output, the lowest index on ties,
// masked and missing outputs never taken, -1 without a valid action, and
// a NaN at the first valid action is kept (nothing compares larger).
func TestMaskedArgmax(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name string
		out  []float32
		mask []bool
		want int
	}{
		{"largest", []float32{1, 3, 2}, []bool{true, true, true}, 1},
		{"masked largest", []float32{1, 3, 2}, []bool{true, false, true}, 2},
		{"tie: lowest index", []float32{2, 5, 5}, []bool{true, true, true}, 1},
		{"all -Inf: the first valid", []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}, []bool{false, true}, 1},
		{"mask beyond the outputs", []float32{1}, []bool{true, true}, 0},
		{"none valid", []float32{1, 2}, []bool{false, false}, -1},
		{"NaN first stays", []float32{nan, 1}, []bool{true, true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaskedArgmax(tt.out, tt.mask); got != tt.want {
				t.Errorf("MaskedArgmax(%v, %v) = %d, want %d", tt.out, tt.mask, got, tt.want)
			}
		})
	}
}
