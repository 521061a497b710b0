package profile

import (
	"cmp"
	"maps"
	"slices"
	"testing"
)

// TestByPlacementNaive checks Measured's per-placement rows against the
// obvious construction: each placement's rows appended in file order,
// then stably sorted by local_bsz.
func TestByPlacementNaive(t *testing.T) {
	ms := loadAll(t)
	for _, name := range slices.Sorted(maps.Keys(ms)) {
		m := ms[name]
		want := map[string][]PlacementRow{}
		for _, r := range m.placements {
			want[r.Placement] = append(want[r.Placement], r)
		}
		for _, rows := range want {
			slices.SortStableFunc(rows, func(a, b PlacementRow) int { return cmp.Compare(a.LocalBsz, b.LocalBsz) })
		}
		if !maps.EqualFunc(m.byPlacement, want, slices.Equal) {
			t.Errorf("%s: rows by placement differ from the naive construction", name)
		}
	}
}
