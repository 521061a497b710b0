package train

import (
	"testing"

	"github.com/drover-sched/drover/env"
)

// TestModelNodeSizeFollowsCluster: the per-worker model of strn-rl's and
// sas-rl's training environment, built-in or trace workload, takes the
// training cluster's node size as its packed reference
// (env.Drover.GPUsPerNode), as drover sim does (trace.Run). It was left at
// its default of 4, so on 8-GPU nodes an 8-GPU job's measured duration was
// counted as two nodes' and the job trained faster on one node than
// measured.
func TestModelNodeSizeFollowsCluster(t *testing.T) {
	newProp, err := Proposer(variantHeuristic["strn-rl"])
	if err != nil {
		t.Fatal(err)
	}
	for _, gpn := range []int{4, 8} {
		r := NewRun(Config{Env: "strn-rl", Algo: "bandit", Seed: 1, Steps: 10, Nodes: 6, GPUsPerNode: gpn})
		pcfg, _, _, _, err := variantConfig(r, newProp)
		if err != nil {
			t.Fatal(err)
		}
		if got := pcfg.NewModel(1).(*env.Drover).GPUsPerNode; got != gpn {
			t.Errorf("built-in workload on 6 x %d GPUs: the model's node size is %d, want %d", gpn, got, gpn)
		}
	}
	tw, err := traceWorkload(tinyTrace, 0.5, 0, env.Homogeneous(2, 8), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tw.newModel(1).(*env.Drover).GPUsPerNode; got != 8 {
		t.Errorf("trace workload on 2 x 8 GPUs: the model's node size is %d, want 8", got)
	}
}
