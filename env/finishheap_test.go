package env

import (
	"math/rand/v2"
	"testing"
)

// TestFinishHeap drives the finish heap through random schedules,
// reschedules, removals and whole re-keyings and checks, after each, that
// its minimum and every job's heapIdx agree with a direct scan.
func TestFinishHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 50 {
		s := &Sim{}
		jobs := make([]Job, 1+r.IntN(60))
		at := map[int]float64{}
		for i := range jobs {
			jobs[i] = Job{ID: i, heapIdx: -1}
		}
		for range 400 {
			j := &jobs[r.IntN(len(jobs))]
			switch r.IntN(4) {
			case 0, 1:
				x := float64(r.IntN(20)) // ties on purpose
				s.schedule(j, x)
				at[j.ID] = x
			case 2:
				s.unschedule(j)
				delete(at, j.ID)
			case 3:
				for i := range s.finishes {
					e := &s.finishes[i]
					e.at = float64(r.IntN(20))
					at[e.id] = e.at
				}
				s.finishes.init()
			}
			if len(s.finishes) != len(at) {
				t.Fatalf("%d entries, want %d", len(s.finishes), len(at))
			}
			best := -1
			for id, x := range at {
				if best < 0 || x < at[best] || (x == at[best] && id < best) {
					best = id
				}
				if k := jobs[id].heapIdx; k < 0 || s.finishes[k].j != &jobs[id] || s.finishes[k].at != x {
					t.Fatalf("job %d: heapIdx %d wrong", id, k)
				}
			}
			if best >= 0 && s.finishes[0].id != best {
				t.Fatalf("minimum %d, want %d", s.finishes[0].id, best)
			}
			for i := 1; i < len(s.finishes); i++ {
				if s.finishes[i].before(&s.finishes[(i-1)/2]) {
					t.Fatalf("entry %d before its parent", i)
				}
			}
		}
	}
}
