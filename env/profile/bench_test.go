package profile

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// Compare runs with:
//
//	go test ./env/profile -run '^$' -bench Throughput -count 10 > old.txt
//	benchstat old.txt new.txt
func BenchmarkThroughput(b *testing.B) {
	dir := filepath.Join(tracesDir(b), "imagenet")
	rng := rand.New(rand.NewPCG(1, 1))
	type q struct {
		pl  []int
		bsz int
	}
	qs := make([]q, 256)
	for i := range qs {
		pl := make([]int, 5+rng.IntN(8))
		for k := range pl {
			pl[k] = 1 + rng.IntN(4)
		}
		qs[i] = q{pl, 20 + rng.IntN(180)}
	}
	for _, cached := range []bool{true, false} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			m, err := Load(dir)
			if err != nil {
				b.Fatal(err)
			}
			m.ndOnce.Do(m.buildND) // build the 3-D interpolator outside the loop
			for _, x := range qs {
				m.TryThroughput(x.pl, x.bsz)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				x := qs[i%len(qs)]
				i++
				if !cached {
					clear(m.cache)
				}
				m.TryThroughput(x.pl, x.bsz)
			}
			b.ReportMetric(1, "queries/op")
		})
	}
}

// BenchmarkBuildND builds the 3-D interpolators of all six Pollux models
// per iteration: with triangulations triangulated at run time
// (source=runtime) and read from the embedded triangulations.bin
// (source=embedded). Barycentric transforms are computed at first query,
// so neither includes them.
//
//	go test ./env/profile -run '^$' -bench BuildND -count 6 | tee new.txt; benchstat new.txt
func BenchmarkBuildND(b *testing.B) {
	type set struct {
		pts  [][3]float64
		vals [][2]float64
	}
	var sets []set
	for _, m := range loadAll(b) {
		pts, vals := m.ndPoints()
		sets = append(sets, set{pts, vals})
	}
	for _, src := range []struct {
		name string
		tri  func([][3]float64) [][4]int32
	}{{"runtime", delaunay3}, {"embedded", triangulate}} {
		b.Run("source="+src.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range sets {
					newLinearND(s.pts, s.vals, src.tri(s.pts))
				}
			}
		})
	}
}

// BenchmarkLoadAll loads the six Pollux profiles (file reads, CSV
// decoding, validation) per iteration, as a drover sim on a Pollux
// workload does at start.
func BenchmarkLoadAll(b *testing.B) {
	root := tracesDir(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadAll(root); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTable decodes imagenet's placements.csv through
// encoding/csv and through csvRows's fast path for plain files.
//
//	go test ./env/profile -run '^$' -bench ReadTable -count 6 | tee new.txt; benchstat new.txt
func BenchmarkReadTable(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(tracesDir(b), "imagenet", "placements.csv"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	for _, path := range []struct {
		name string
		rows func(string, []string, func(int, []string) error) error
	}{{"csv", tableRows}, {"plain", plainRows}} {
		b.Run("path="+path.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			n := 0
			for b.Loop() {
				if err := path.rows(text, placementCols, func(int, []string) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
