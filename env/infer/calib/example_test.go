package calib_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/infer/calib"
	"github.com/drover-sched/drover/env/infer/kv"
)

// Fit the short-prompt experiment on its lowest rate and replay its
// highest in both formats.
func Example() {
	e, _ := calib.Experiment("short")
	p, err := calib.Fit(e)
	if err != nil {
		panic(err)
	}
	base, _ := p.Replay(e, 0.75, kv.FP16())
	f, _ := kv.Parse("hack-pi64-paged") // the artifact's HACK: Pi = 64, paged layout
	hack, _ := p.Replay(e, 0.75, f)
	fmt.Printf("link %.1f Gbps + %.0f ms\n", p.LinkBytesPerSec*8/1e9, p.LinkOverhead*1e3)
	fmt.Printf("JCT reduction at 0.75 req/s: %.0f%%\n", 100*calib.Reduction(base.JCT, hack.JCT))
	// Output:
	// link 9.6 Gbps + 48 ms
	// JCT reduction at 0.75 req/s: 64%
}
