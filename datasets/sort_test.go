package datasets

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortJobsStable checks sortJobs against the naive stable sort of the
// jobs themselves, on lists with many equal submit times (the order among
// equal times is the input order), already sorted lists and single jobs.
func TestSortJobsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		n := rng.IntN(300)
		jobs := make([]Job, n)
		for i := range jobs {
			jobs[i] = Job{Name: fmt.Sprint("j", i), Submit: float64(rng.IntN(1 + trial%20)), GPUs: i}
		}
		if trial%10 == 0 {
			slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
		}
		want := slices.Clone(jobs)
		slices.SortStableFunc(want, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
		sortJobs(jobs)
		if !slices.Equal(jobs, want) {
			t.Fatalf("trial %d (%d jobs): sortJobs differs from the stable sort", trial, n)
		}
	}
}
