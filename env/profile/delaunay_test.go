package profile

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/internal/longtest"
)

// TestDelaunayFilterExact checks that the floating-point filters and the
// integer fast paths change nothing: on every model's real point set the
// triangulation equals the one computed with exact math/big predicates
// only, simplex for simplex. The exact-only construction takes about 50
// CPU-seconds over the six models, and five to ten times that under the
// race detector (single-goroutine arithmetic, which the detector has
// nothing to check in), so a race build checks the two smallest point
// sets and a plain build all six. It is a long test (make test-long; the
// two smallest took 107 s of the race run, issue 31): make test checks
// the predicates themselves against math/big (TestPredicatesMatchExact,
// TestInSphereSmall, TestOrientSmall).
func TestDelaunayFilterExact(t *testing.T) {
	longtest.Skip(t, "exact-only triangulations")
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
// answers must answer the exact sign. make test draws 2,000 cases (the
// 20,000 of make test-long took 94 s under -race).
func TestPredicatesMatchExact(t *testing.T) {
	cases := 2000
	if longtest.Enabled() {
		cases = 20000
	}
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
	for range cases {
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

// inSphereSmall's 128-bit determinant equals the big-integer one: on
// random points, on lattice points (where the determinant is often 0, as
// on the profiles' grids), and at the largest magnitudes it accepts, where
// an overflow would show; beyond them it declines.
func TestInSphereSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const top = smallInt - 1
	zero := 0
	for n := range 30000 {
		var dif [4][3]int64
		for i := range 4 {
			for k := range 3 {
				switch n % 3 {
				case 0:
					dif[i][k] = r.Int64N(2*top+1) - top
				case 1:
					dif[i][k] = r.Int64N(7) - 3
				default:
					dif[i][k] = [3]int64{-top, top, r.Int64N(2*top+1) - top}[r.IntN(3)]
				}
			}
		}
		got, ok := inSphereSmall(&dif)
		if !ok {
			t.Fatalf("inSphereSmall(%v) declined", dif)
		}
		want := inSphereBig(&dif, nil)
		if got != want {
			t.Fatalf("inSphereSmall(%v) = %d, big integers %d", dif, got, want)
		}
		if want == 0 {
			zero++
		}
	}
	if zero < 100 {
		t.Errorf("only %d degenerate cases: the lattice draws do not test zero", zero)
	}
	big := [4][3]int64{{smallInt, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}}
	if _, ok := inSphereSmall(&big); ok {
		t.Errorf("inSphereSmall took a difference of %d", smallInt)
	}
}

// orientSmall's 128-bit determinant equals the big-integer one on random,
// lattice and extreme differences, and it declines larger ones.
func TestOrientSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const top = smallOrient - 1
	zero := 0
	for n := range 30000 {
		var m [3][3]int64
		for i := range 3 {
			for k := range 3 {
				switch n % 3 {
				case 0:
					m[i][k] = r.Int64N(2*top+1) - top
				case 1:
					m[i][k] = r.Int64N(5) - 2
				default:
					m[i][k] = [3]int64{-top, top, r.Int64N(2*top+1) - top}[r.IntN(3)]
				}
			}
		}
		got, ok := orientSmall(&m)
		if !ok {
			t.Fatalf("orientSmall(%v) declined", m)
		}
		if want := orientBigInt(&m); got != want {
			t.Fatalf("orientSmall(%v) = %d, big integers %d", m, got, want)
		}
		if got == 0 {
			zero++
		}
	}
	if zero < 100 {
		t.Errorf("only %d degenerate cases", zero)
	}
	big := [3][3]int64{{smallOrient, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	if _, ok := orientSmall(&big); ok {
		t.Errorf("orientSmall took a difference of %d", int64(smallOrient))
	}
}
