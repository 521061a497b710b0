package policies

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
)

// TestMostFreeMatchesPack packs random jobs into random free GPUs with
// MostFree and with env.PackMostFree and wants the same nodes and the same
// free GPUs left after every job, including jobs that do not fit (nil)
// and nodes with nothing free.
func TestMostFreeMatchesPack(t *testing.T) {
	var m MostFree
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 3))
		nodes := 1 + r.IntN(40)
		free := make([]int, nodes)
		for i := range free {
			if r.IntN(4) > 0 {
				free[i] = r.IntN(9)
			}
		}
		ref := slices.Clone(free)
		m.Reset(free)
		for job := range 30 {
			n := 1 + r.IntN(12)
			want := env.PackMostFree(ref, n)
			got := m.Pack(n)
			if !slices.Equal(got, want) || !slices.Equal(free, ref) {
				t.Fatalf("seed %d job %d (%d GPUs): MostFree packed %v leaving %v, PackMostFree %v leaving %v", seed, job, n, got, free, want, ref)
			}
		}
	}
}
