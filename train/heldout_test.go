package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Config.HeliosSeeds and PAISeeds: Helios and PAI get their own seed
// counts when set; otherwise Helios has EvalSeeds and PAI half of it (at
// least one). Seeds count from 1001 on every workload, so that the
// learned policy and the heuristic are paired episode by episode.
func TestHeldOutSeeds(t *testing.T) {
	tests := []struct {
		name               string
		seeds, helios, pai int
		want               map[string]int
	}{
		{name: "helios set", seeds: 3, helios: 20, want: map[string]int{"builtin": 3, "helios": 20, "pai": 1}},
		{name: "defaults", seeds: 4, want: map[string]int{"builtin": 4, "helios": 4, "pai": 2}},
		{name: "one seed, pai still one", seeds: 1, want: map[string]int{"builtin": 1, "helios": 1, "pai": 1}},
		{name: "both set", seeds: 4, helios: 20, pai: 10, want: map[string]int{"builtin": 4, "helios": 20, "pai": 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]int{}
			for _, w := range heldOut(tt.seeds, tt.helios, tt.pai) {
				got[w.name] = len(w.seeds)
				if w.seeds[0] != 1001 || w.seeds[len(w.seeds)-1] != 1000+uint64(len(w.seeds)) {
					t.Errorf("%s: seeds %v, want 1001 up", w.name, w.seeds)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("heldOut(%d, %d, %d) seeds (-want,+got):\n%s", tt.seeds, tt.helios, tt.pai, diff)
			}
		})
	}
}
