package direct_test

import (
	"testing"

	"github.com/drover-sched/drover/policies/direct"
)

// fixed is a Network whose outputs do not depend on the observation.
type fixed []float32

func (f fixed) Forward([]float64) []float32 { return f }

// TestGreedyNet: the Actor over a Network is the argmax of its outputs
// among the valid actions, the lowest index on ties, -1 with none valid;
// actions past the network's outputs are never chosen.
func TestGreedyNet(t *testing.T) {
	tests := []struct {
		name string
		out  fixed
		mask []bool
		want int
	}{
		{"largest", fixed{0.1, 0.7, -2}, []bool{true, true, true}, 1},
		{"largest valid", fixed{0.1, 0.7, -2}, []bool{true, false, true}, 0},
		{"negative outputs", fixed{-3, -1, -2}, []bool{true, true, true}, 1},
		{"tie: lowest index", fixed{0.5, 0.5, 0.5}, []bool{false, true, true}, 1},
		{"none valid", fixed{1, 2}, []bool{false, false}, -1},
		{"mask longer than the outputs", fixed{1, 2}, []bool{false, false, true}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := direct.GreedyNet(tt.out)(make([]float64, 3), tt.mask); got != tt.want {
				t.Errorf("GreedyNet(%v)(mask %v) = %d, want %d", tt.out, tt.mask, got, tt.want)
			}
		})
	}
}
