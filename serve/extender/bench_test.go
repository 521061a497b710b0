package extender_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/serve/extender"
)

// BenchmarkFilter times one filter call over n nodes for the first pod
// of a job (the Core decides) and for a later pod (the cached placement).
// Compare runs with benchstat:
//
//	go test -run '^$' -bench Filter -count 6 ./serve/extender | tee new.txt; benchstat old.txt new.txt
func BenchmarkFilter(b *testing.B) {
	for _, n := range []int{64, 1024} {
		nodes := nodeList(randomCluster(rand.New(rand.NewPCG(3, 3)), n)...)
		for _, cached := range []bool{false, true} {
			b.Run(fmt.Sprintf("nodes=%d/cached=%v", n, cached), func(b *testing.B) {
				h, err := extender.New(newCore(b), extender.Config{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					job := "j"
					if !cached {
						job = fmt.Sprint("j-", i)
					}
					i++
					pod := makePod("ml", "w-0").GPUs(1).Job(job, 8).Obj()
					if res := h.Filter(context.Background(), &extender.ExtenderArgs{Pod: pod, Nodes: nodes}); res.Error != "" {
						b.Fatal(res.Error)
					}
				}
			})
		}
	}
}
