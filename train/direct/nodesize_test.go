package direct

import (
	"testing"

	"github.com/drover-sched/drover/env"
)

// TestSettingModelNodeSize: each default training setting's per-worker
// model takes the setting's node size as its packed reference
// (env.Drover.GPUsPerNode), as drover sim does for the same cluster; it
// was left at 4 on the 22 x 8 GPU setting and the PAI-type nodes.
func TestSettingModelNodeSize(t *testing.T) {
	settings, err := DefaultSettings()
	if err != nil {
		t.Fatal(err)
	}
	for i := range settings {
		s := &settings[i]
		if err := s.prepare(); err != nil {
			t.Fatal(err)
		}
		want := s.Cluster.MaxNodeGPUs()
		if got := s.NewModel(1).(*env.Drover).GPUsPerNode; got != want {
			t.Errorf("%s: the model's node size is %d, want the cluster's %d", s.Name, got, want)
		}
	}
}
