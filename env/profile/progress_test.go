package profile

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
)

// TestProgressTable checks the tabulated Progress against the curves it is
// taken from, bit for bit, at every epoch and past both ends, where both
// panic alike.
func TestProgressTable(t *testing.T) {
	ms := loadAll(t)
	for _, name := range slices.Sorted(maps.Keys(ms)) {
		m := ms[name]
		longest := 0
		for _, rows := range m.val {
			longest = max(longest, len(rows))
		}
		for e := -2; e <= longest+2; e++ {
			got, gotPanic := tryFloat(func() float64 { return m.Progress(e) })
			want, wantPanic := tryFloat(func() float64 { return m.curvesProgress(e) })
			if math.Float64bits(got) != math.Float64bits(want) || gotPanic != wantPanic {
				t.Fatalf("%s: Progress(%d) = %v (panic %q), from the curves %v (panic %q)", name, e, got, gotPanic, want, wantPanic)
			}
		}
	}
}

// tryFloat calls f, returning its panic message instead of panicking.
func tryFloat(f func() float64) (v float64, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprint(r)
		}
	}()
	return f(), ""
}
