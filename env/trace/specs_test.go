package trace

import (
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
)

// TestSpecsArch checks that a workload's architectures reach the
// simulator: PS jobs with their shard counts, ring jobs as env's zero Arch.
func TestSpecsArch(t *testing.T) {
	w := &datasets.Workload{Jobs: []datasets.Job{
		{Name: "r", GPUs: 4, Model: "ncf"},
		{Name: "p", GPUs: 8, Model: "bert", Arch: datasets.ArchPS, PSShards: 8},
	}}
	tests := []struct {
		name   string
		arch   env.Arch
		shards int
	}{
		{"r", env.Ring, 0},
		{"p", env.PS, 8},
	}
	specs := Specs(w)
	for i, tt := range tests {
		if s := specs[i]; s.Name != tt.name || s.Arch != tt.arch || s.PSShards != tt.shards {
			t.Errorf("spec %d = %s %s/%d, want %s %s/%d", i, s.Name, s.Arch, s.PSShards, tt.name, tt.arch, tt.shards)
		}
	}
}
