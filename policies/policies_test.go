package policies_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
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
			got := policies.PackMostFree(tt.free, tt.n)
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
			if got := policies.PackFirstFit(tt.free, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	r := builtin.Registry()
	want := []string{"fifo", "first-fit", "gandiva", "optimus", "random", "sas", "sas-even-ps", "strn", "tiresias"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
	if _, err := r.New("nope", policies.Config{}); !errors.Is(err, policies.ErrUnknownPolicy) {
		t.Errorf("New(nope) = %v, want ErrUnknownPolicy", err)
	}
	if err := r.Register("fifo", nil); err == nil {
		t.Error("registering fifo twice succeeded")
	}
}

func TestNodeShares(t *testing.T) {
	tests := []struct {
		name           string
		alloc          []int
		nodes, workers []int
	}{
		{"empty", nil, nil, nil},
		{"one node", []int{3, 3, 3}, []int{3}, []int{3}},
		{"runs", []int{2, 2, 0, 5}, []int{2, 0, 5}, []int{2, 1, 1}},
		{"interleaved", []int{1, 4, 1, 4, 1}, []int{1, 4}, []int{3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, workers := policies.NodeShares(tt.alloc)
			if !slices.Equal(nodes, tt.nodes) || !slices.Equal(workers, tt.workers) {
				t.Errorf("NodeShares(%v) = %v, %v; want %v, %v", tt.alloc, nodes, workers, tt.nodes, tt.workers)
			}
		})
	}
}
