package datasets

import (
	"math"
	"testing"
)

// checkInvariants fails t unless w satisfies what every decoder promises.
func checkInvariants(t testing.TB, w *Workload) {
	t.Helper()
	if w == nil || len(w.Jobs) == 0 {
		t.Fatal("empty workload")
	}
	names := map[string]bool{}
	for i, j := range w.Jobs {
		if i > 0 && j.Submit < w.Jobs[i-1].Submit {
			t.Fatalf("job %d (%s) submitted at %v before job %d at %v", i, j.Name, j.Submit, i-1, w.Jobs[i-1].Submit)
		}
		if j.GPUs < 1 {
			t.Fatalf("job %s has %d GPUs", j.Name, j.GPUs)
		}
		for _, v := range []float64{j.Submit, j.Duration} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxSeconds {
				t.Fatalf("job %s has submit %v duration %v", j.Name, j.Submit, j.Duration)
			}
		}
		if !IsModel(j.Model) {
			t.Fatalf("job %s has model %q", j.Name, j.Model)
		}
		if j.Arch != ArchRing && j.Arch != ArchPS || j.PSShards < 0 || j.Arch == ArchRing && j.PSShards != 0 {
			t.Fatalf("job %s: arch %q with %d PS shards", j.Name, j.Arch, j.PSShards)
		}
		if names[j.Name] {
			t.Fatalf("duplicate name %q", j.Name)
		}
		names[j.Name] = true
	}
}
