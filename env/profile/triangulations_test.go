package profile

import (
	"bytes"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// TestTriangulationsFile checks the embedded triangulations.bin: it is
// what triangulating the six Pollux models' points in ../shared/traces
// gives, byte for byte (go generate, i.e. go test -run
// TestTriangulationsFile -update, rewrites it), the triangulations read
// from it equal delaunay3's simplex for simplex, and interpolators built
// on them predict bit for bit what interpolators built at run time do.
func TestTriangulationsFile(t *testing.T) {
	ms := loadAll(t)
	names := slices.Sorted(maps.Keys(ms))
	var pts [][][3]float64
	var simp [][][4]int32
	for _, name := range names {
		p, _ := ms[name].ndPoints()
		pts = append(pts, p)
		simp = append(simp, delaunay3(p))
	}
	b := encodeTriangulations(names, pts, simp)
	if *update {
		if err := os.WriteFile("triangulations.bin", b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(b, triangulationsBin) {
		t.Fatalf("triangulations.bin is stale (%d bytes, regenerated %d); run go generate ./env/profile", len(triangulationsBin), len(b))
	}
	if len(triIndex()) != len(names) {
		t.Fatalf("triangulations.bin indexes %d point sets, want %d", len(triIndex()), len(names))
	}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			e, ok := triIndex()[pointsKey(pts[i])]
			if !ok || e.name != name {
				t.Fatalf("no entry for %s's points (found %q)", name, e.name)
			}
			got := triangulate(pts[i])
			if !slices.Equal(got, simp[i]) {
				t.Fatalf("embedded triangulation (%d simplices) differs from delaunay3's (%d)", len(got), len(simp[i]))
			}
			_, vals := ms[name].ndPoints()
			pre := newLinearND(pts[i], vals, got)
			run := newLinearND(pts[i], vals, delaunay3(pts[i]))
			checkSamePredictions(t, pre, run)
		})
	}
}

// checkSamePredictions compares two interpolators bit for bit at every
// data point and at random queries over the hull's bounding box (integer
// node and replica counts, integer and fractional batch sizes, some
// outside the hull).
func checkSamePredictions(t *testing.T, a, b *linearND) {
	t.Helper()
	qs := slices.Clone(a.pts)
	rng := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		var x [3]float64
		for k := range 2 {
			x[k] = math.Floor(a.min[k] + rng.Float64()*(a.max[k]-a.min[k]+2))
		}
		x[2] = a.min[2] + rng.Float64()*(a.max[2]-a.min[2])*1.1
		if rng.IntN(2) == 0 {
			x[2] = math.Round(x[2])
		}
		qs = append(qs, x)
	}
	inside := 0
	for _, x := range qs {
		va, oka := a.at(x)
		vb, okb := b.at(x)
		if oka {
			inside++
		}
		if oka != okb || math.Float64bits(va[0]) != math.Float64bits(vb[0]) || math.Float64bits(va[1]) != math.Float64bits(vb[1]) {
			t.Fatalf("at %v: %v %v, run-time build %v %v", x, va, oka, vb, okb)
		}
	}
	if inside <= len(a.pts) {
		t.Fatalf("only %d of %d queries inside the hull", inside, len(qs))
	}
}

// TestTriangulateMiss checks that a point set the file does not hold is
// triangulated at run time.
func TestTriangulateMiss(t *testing.T) {
	pts := [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}}
	if _, ok := triIndex()[pointsKey(pts)]; ok {
		t.Fatal("unexpected entry for a made-up point set")
	}
	if got, want := triangulate(pts), delaunay3(pts); !slices.Equal(got, want) {
		t.Errorf("triangulate = %v, want delaunay3's %v", got, want)
	}
}

// TestTriangulationsRoundTrip encodes and decodes small triangulations.
func TestTriangulationsRoundTrip(t *testing.T) {
	pts := [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {2, 0, 1}}
	simp := delaunay3(pts)
	b := encodeTriangulations([]string{"a", "empty"}, [][][3]float64{pts, pts[:1]}, [][][4]int32{simp, nil})
	idx, err := decodeTriIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := idx[pointsKey(pts)]
	if !ok || e.name != "a" || e.npts != len(pts) || e.nsimp != len(simp) {
		t.Fatalf("entry %+v, ok %v", e, ok)
	}
	got, err := decodeSimplices(e.block, e.npts, e.nsimp)
	if err != nil || !slices.Equal(got, simp) {
		t.Fatalf("decoded %v, %v; want %v", got, err, simp)
	}
	// Every truncation is refused, never a panic.
	for i := range len(b) {
		if idx, err := decodeTriIndex(b[:i]); err == nil {
			for _, e := range idx {
				decodeSimplices(e.block, e.npts, e.nsimp)
			}
		}
	}
	// An index past the points is refused.
	if _, err := decodeSimplices(e.block, 3, e.nsimp); err == nil {
		t.Error("decodeSimplices accepted indices past the points")
	}
}

// FuzzDecodeTriangulations feeds arbitrary bytes to the triangulations
// decoders: they return an error or simplices with indices in range.
func FuzzDecodeTriangulations(f *testing.F) {
	f.Add(triangulationsBin[:min(len(triangulationsBin), 256)])
	pts := [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}}
	f.Add(encodeTriangulations([]string{"x"}, [][][3]float64{pts}, [][][4]int32{delaunay3(pts)}))
	f.Add([]byte(triMagic + "\x01\x00"))
	f.Add([]byte(triMagic + "\xff\xff\xff\xff\x07")) // a crasher: a huge count preallocated the index
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := decodeTriIndex(b)
		if err != nil {
			return
		}
		for _, e := range idx {
			simp, err := decodeSimplices(e.block, e.npts, e.nsimp)
			if err != nil {
				continue
			}
			for _, s := range simp {
				for _, v := range s {
					if v < 0 || int(v) >= e.npts {
						t.Fatalf("index %d out of [0, %d)", v, e.npts)
					}
				}
			}
		}
	})
}
