package routelog_test

import (
	"bytes"
	"fmt"

	"github.com/drover-sched/drover/serve/routelog"
)

// A route decision written as one line and read back: the log keeps the
// request, the instances it listed, the answer and the shadow decision.
func Example() {
	rec := record("dnd-1", 1767225601000000000)
	line := routelog.Encode(nil, &rec)
	recs, partial, err := routelog.Read(bytes.NewReader(line))
	if err != nil {
		panic(err)
	}
	r := recs[0]
	fmt.Printf("%d record (%d partial): %s, %d+%d tokens, %s %d -> %s %d in %s, by %s (%s); %s would route %d -> %d in %s\n",
		len(recs), partial, r.ID, r.Prompt, r.Output, r.Instances[r.Prefill].GPU, r.Prefill, r.Instances[r.Decode].GPU, r.Decode, r.Format,
		r.Policy, r.Fallback, r.Shadow.Policy, r.Shadow.Prefill, r.Shadow.Decode, r.Shadow.Format)
	// Output:
	// 1 record (0 partial): dnd-1, 1500+40 tokens, a10g 0 -> a100-80gb 1 in hack-pi64, by heuristic:hack (shadow); learned:pd-rl@v1 would route 0 -> 1 in fp16
}
