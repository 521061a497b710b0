package background

import (
	"fmt"
	"testing"
)

// BenchmarkStochasticAt queries every node of a fresh Default source at
// every step of one day (288 steps of 300 s), as the simulator does at step
// boundaries; the cost includes generating the series.
//
//	go test ./env/background -run XXX -bench StochasticAt -count 10 | benchstat -
func BenchmarkStochasticAt(b *testing.B) {
	for _, nodes := range []int{1000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			steps := int(24 * 3600 / Default().Step)
			b.ReportAllocs()
			var sink float64
			for b.Loop() {
				s, err := NewStochastic(Default(), nodes, 1)
				if err != nil {
					b.Fatal(err)
				}
				for k := range steps {
					t := float64(k) * s.Step()
					for n := range nodes {
						sink += s.At(n, t).CPU
					}
				}
			}
			b.ReportMetric(float64(nodes*steps), "queries/op")
			_ = sink
		})
	}
}
