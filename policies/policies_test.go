package policies_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

func TestRegistry(t *testing.T) {
	r := builtin.Registry()
	want := []string{"fifo", "first-fit", "gandiva", "optimus", "random", "sas", "sas-even-ps", "strn", "themis", "tiresias"}
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
