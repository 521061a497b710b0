package trace_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/drover-sched/drover/env/trace"
)

// The measured profiles are shared by parallel runs (drover eval loads
// them once): queries from many goroutines, inside the measurements and
// beyond them (the fitted fallback), give the answers one goroutine gets.
// Under -race this also checks the memo maps' locking.
func TestProfilesConcurrent(t *testing.T) {
	dir := filepath.Join(tracesDir(t), "pollux_apps")
	shared, _, err := trace.Profiles(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := trace.Profiles(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	placements := [][]int{{1}, {2}, {4}, {4, 4}, {2, 2, 2}, {8}, {8, 8}, {16}, {4, 4, 4, 4, 4}}
	type key struct {
		model string
		p, b  int
	}
	want := map[key][2]float64{}
	for name, p := range fresh {
		bsz := p.MaxLocalBsz()
		for i, pl := range placements {
			s, y := p.Throughput(pl, bsz)
			want[key{name, i, bsz}] = [2]float64{s, y}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 20 {
				for name, p := range shared {
					bsz := p.MaxLocalBsz()
					i := (g + r) % len(placements)
					s, y := p.Throughput(placements[i], bsz)
					if w := want[key{name, i, bsz}]; w != [2]float64{s, y} {
						select {
						case errs <- name:
						default:
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for name := range errs {
		t.Errorf("%s: a concurrent query's answer differs from a sequential one's", name)
	}
}
