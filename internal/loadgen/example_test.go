package loadgen_test

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/internal/loadgen"
)

// Two slots record their latencies apart and the report merges them. A
// quantile is the top of its bucket: p50 of 1..1000 us is 500 us, in the
// bucket [499712, 501759] ns (width 2^11 ns from 2^18 ns up), reported as
// 501.759 us; p99, 990 us, is in [987136, 991231] ns.
func ExampleHistogram() {
	a, b := loadgen.NewHistogram(), loadgen.NewHistogram()
	for i := 1; i <= 1000; i++ {
		h := a
		if i%2 == 0 {
			h = b
		}
		h.Record(time.Duration(i) * time.Microsecond)
	}
	a.Merge(b)
	fmt.Println(a.Count(), a.Quantile(0.5), a.Quantile(0.99), a.Max(), a.Mean())
	// Output: 1000 501.759µs 991.231µs 1ms 500.5µs
}
