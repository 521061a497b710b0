package env_test

import (
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
)

func TestPackMostFree(t *testing.T) {
	// Python: Counter({0: 2, 1: 4, 2: 3, 3: 4}).most_common(1) is (1, 4):
	// the first of the largest. 6 workers: 4 on node 1, then 2 of node 3's 4
	// (node 3 has 4 > node 2's 3).
	tests := []struct {
		name     string
		free     []int
		n        int
		want     []int
		wantFree []int
	}{
		{"ties go to the lowest index", []int{2, 4, 3, 4}, 6, []int{1, 1, 1, 1, 3, 3}, []int{2, 0, 3, 2}},
		{"fits one node", []int{4, 4}, 3, []int{0, 0, 0}, []int{1, 4}},
		{"spans fragments", []int{1, 2, 1}, 4, []int{1, 1, 0, 2}, []int{0, 0, 0}},
		{"too few", []int{1, 1}, 3, nil, []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := env.PackMostFree(tt.free, tt.n)
			if !slices.Equal(got, tt.want) || !slices.Equal(tt.free, tt.wantFree) {
				t.Errorf("got %v free %v, want %v free %v", got, tt.free, tt.want, tt.wantFree)
			}
		})
	}
}

func TestPackFirstFit(t *testing.T) {
	tests := []struct {
		name string
		free []int
		n    int
		want []int
	}{
		{"first node with room", []int{1, 3, 4}, 3, []int{1, 1, 1}},
		{"spread in index order", []int{1, 2, 2}, 4, []int{0, 1, 1, 2}},
		{"too few", []int{1}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := env.PackFirstFit(tt.free, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
