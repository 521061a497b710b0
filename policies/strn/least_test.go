package strn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// leastFirst's front is a stable sort's front: the m least scores, the
// earlier first among equals; with a NaN score it is the stable sort.
func TestLeastFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var top []int
	for n := range 5000 {
		cands := make([]placed, r.IntN(40))
		for i := range cands {
			cands[i] = placed{nodes: []int{i}}
			switch r.IntN(8) {
			case 0:
				cands[i].score = math.Inf(1)
			case 1:
				cands[i].score = math.Inf(-1)
			case 2:
				if n%5 == 0 {
					cands[i].score = math.NaN()
				}
			default:
				cands[i].score = float64(r.IntN(6)) // ties
			}
		}
		want := slices.Clone(cands)
		slices.SortStableFunc(want, byScore)
		var got []placed
		got, top = leastFirst(slices.Clone(cands), MaxPlacements, top)
		k := min(len(want), MaxPlacements)
		if len(got) < k {
			t.Fatalf("%d candidates: %d kept, want at least %d", len(cands), len(got), k)
		}
		for i := range k {
			if got[i].nodes[0] != want[i].nodes[0] {
				t.Fatalf("candidate %d: node %d (score %v), a stable sort gives %d (score %v)",
					i, got[i].nodes[0], got[i].score, want[i].nodes[0], want[i].score)
			}
		}
	}
}
