package policies

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
)

// TestPendingFollow changes random jobs' states at random and wants
// Pending, following each change (some repeated), to hold what Reset
// finds: the pending jobs in ID order.
func TestPendingFollow(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		jobs := make([]*env.Job, 1+r.IntN(40))
		for i := range jobs {
			jobs[i] = &env.Job{ID: i, State: env.JobState(r.IntN(4))}
		}
		var p, want Pending
		p.Reset(jobs)
		for range 200 {
			j := jobs[r.IntN(len(jobs))]
			j.State = env.JobState(r.IntN(4))
			p.Follow(j)
			if r.IntN(4) == 0 {
				p.Follow(j)
			}
			want.Reset(jobs)
			if !slices.Equal(p.Jobs, want.Jobs) {
				t.Fatalf("seed %d: followed %d jobs, want %d", seed, len(p.Jobs), len(want.Jobs))
			}
		}
	}
}
