package mmlog_test

import (
	"bytes"
	"fmt"

	"github.com/drover-sched/drover/serve/mmlog"
)

// A Scale answer written as one line and read back: the log keeps the
// window the client saw, the answer and the shadow autoscaler's answer.
func Example() {
	rec := scale("dnd-2", 4)
	line := mmlog.EncodeScale(nil, &rec)
	recs, partial, err := mmlog.ReadScales(bytes.NewReader(line))
	if err != nil {
		panic(err)
	}
	r := recs[0]
	fmt.Printf("%d record (%d partial): period %d of %s, %d of %d met; %d+%d -> %d+%d instances by %s (%s); %s would ask %d+%d\n",
		len(recs), partial, r.Period, r.Deployment, r.Window.Met, r.Window.Finished, r.Current.Image, r.Current.Text, r.Sizes.Image, r.Sizes.Text,
		r.Policy, r.Fallback, r.Shadow.Policy, r.Shadow.Sizes.Image, r.Shadow.Sizes.Text)
	// Output:
	// 1 record (0 partial): period 4 of day1, 409 of 410 met; 2+2 -> 1+1 instances by heuristic:modserve (not-converged); learned:mm-rl@v1 would ask 2+1
}
