package profile

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
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
		data, err := os.ReadFile(filepath.Join(tracesDir(t), name, "placements.csv"))
		if err != nil {
			t.Fatal(err)
		}
		file, err := ParsePlacements(data)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Collect(m.filePlacements()); !slices.Equal(got, file) {
			t.Errorf("%s: rows in file order differ from placements.csv", name)
		}
		want := map[string][]PlacementRow{}
		for _, r := range file {
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

// TestLoadModels checks that loading some models gives exactly those that
// have a directory, each as LoadAll loads it.
func TestLoadModels(t *testing.T) {
	all := loadAll(t)
	some, err := LoadModels(tracesDir(t), []string{"ncf", "no-such-model", "bert"})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(some)); !slices.Equal(got, []string{"bert", "ncf"}) {
		t.Fatalf("loaded %v, want [bert ncf]", got)
	}
	for name, m := range some {
		a := all[name]
		if !slices.Equal(m.placements, a.placements) || !slices.Equal(m.fileOrder, a.fileOrder) ||
			!slices.Equal(m.scalability, a.scalability) || !slices.Equal(m.valBsz, a.valBsz) ||
			!slices.EqualFunc(m.val, a.val, slices.Equal) || !slices.Equal(m.progress, a.progress) {
			t.Errorf("%s: LoadModels and LoadAll differ", name)
		}
	}
	if none, err := LoadModels(tracesDir(t), []string{}); err != nil || len(none) != 0 {
		t.Errorf("no names: got %d models, %v; want none", len(none), err)
	}
}
