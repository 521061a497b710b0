package profile

import (
	"fmt"
	"math/rand/v2"
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
// (triangulation and barycentric transforms) per iteration.
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
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range sets {
			newLinearND(s.pts, s.vals, delaunay3(s.pts))
		}
	}
}
