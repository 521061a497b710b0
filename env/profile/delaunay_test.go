package profile

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDelaunayFilterExact checks that the floating-point filters and the
// integer fast paths change nothing: on every model's real point set the
// triangulation equals the one computed with exact math/big predicates
// only, simplex for simplex. The exact-only construction takes about 50
// CPU-seconds over the six models, and five to ten times that under the
// race detector (single-goroutine arithmetic, which the detector has
// nothing to check in), so a race build checks the two smallest point
// sets and a plain build all six.
func TestDelaunayFilterExact(t *testing.T) {
	if testing.Short() {
		t.Skip("exact-only triangulation is slow")
	}
	ms := loadAll(t)
	names := slices.Sorted(maps.Keys(ms))
	if raceEnabled {
		size := map[string]int{}
		for _, name := range names {
			pts, _ := ms[name].ndPoints()
			size[name] = len(pts)
		}
		slices.SortStableFunc(names, func(a, b string) int { return size[a] - size[b] })
		names = names[:2]
	}
	for _, name := range names {
		pts, _ := ms[name].ndPoints()
		t.Run(name, func(t *testing.T) {
			t.Parallel() // the exact-only construction takes seconds
			got := delaunay3(pts)
			want := delaunay3Mode(pts, true)
			if !slices.Equal(got, want) {
				t.Errorf("filtered triangulation (%d simplices) differs from the exact-only one (%d)", len(got), len(want))
			}
		})
	}
}

// TestPredicatesMatchExact compares each predicate stage with the exact
// math/big evaluation on random points, many of them nearly or exactly
// degenerate, with integer and non-integer coordinates: a filter that
// answers must answer the exact sign.
func TestPredicatesMatchExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	coord := func(kind int) float64 {
		switch kind {
		case 0:
			return float64(rng.IntN(7))
		case 1:
			return float64(rng.IntN(1 << 20))
		default:
			return float64(rng.IntN(8)) + rng.Float64()*1e-14
		}
	}
	filtered, answered := 0, 0
	for range 20000 {
		kind := rng.IntN(3)
		var p [5][3]float64
		for i := range p {
			for k := range 3 {
				p[i][k] = coord(kind)
			}
		}
		if rng.IntN(2) == 0 { // a coplanar / cospherical-prone copy
			p[4] = p[rng.IntN(4)]
			p[4][rng.IntN(3)] += float64(rng.IntN(3) - 1)
		}
		want := orientBig(p[0], p[1], p[2], p[3])
		if s, ok := orientFilter(p[0], p[1], p[2], p[3]); ok && s != want {
			t.Fatalf("orientFilter(%v) = %d, exact %d", p[:4], s, want)
		}
		if s, ok := orientInt(p[0], p[1], p[2], p[3]); ok && s != want {
			t.Fatalf("orientInt(%v) = %d, exact %d", p[:4], s, want)
		}
		d := &triangulator{pts: p[:], n: 5, exactOnly: true}
		if want == 0 {
			continue
		}
		a, b := int32(0), int32(1)
		if want < 0 {
			a, b = 1, 0
		}
		exact := d.inSphere(a, b, 2, 3, 4)
		q := p
		q[0], q[1] = p[a], p[b]
		filtered++
		if s, ok := inSphereFilter(q); ok {
			answered++
			if s != 0 && (s > 0) != exact {
				t.Fatalf("inSphereFilter(%v) = %d, exact inside=%v", q, s, exact)
			}
		}
		if s, ok := inSphereInt(q, nil); ok && s != 0 && (s > 0) != exact {
			t.Fatalf("inSphereInt(%v) = %d, exact inside=%v", q, s, exact)
		}
		d.exactOnly = false
		if got := d.inSphere(a, b, 2, 3, 4); got != exact {
			t.Fatalf("inSphere(%v) = %v, exact %v", q, got, exact)
		}
	}
	t.Logf("insphere filter answered %d of %d", answered, filtered)
}
