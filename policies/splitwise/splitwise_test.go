package splitwise

import (
	"testing"

	"github.com/drover-sched/drover/env/infer"
	"github.com/google/go-cmp/cmp"
)

// table is a two-knot performance table (prompt 10 ms at 100 tokens,
// 110 ms at 1,100; decode 20 and 30 ms) for both measured GPU types.
const table = `model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel
m,h100-80gb,100,1,10,20,8
m,h100-80gb,1100,1,110,30,8
m,a100-80gb,100,1,10,20,8
m,a100-80gb,1100,1,110,30,8
`

func deploy(t *testing.T, kv int64, roles ...infer.Role) infer.Config {
	t.Helper()
	perf, err := infer.ParsePerfTable([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	c := infer.Config{Model: infer.Model{Name: "m", WeightBytes: 1 << 30, KVBytesPerToken: kv}, Perf: perf,
		Link: infer.LinkConfig{BytesPerSec: infer.SplitwiseTransferBytesPerSec}}
	for _, r := range roles {
		gpu := "h100-80gb"
		if r == infer.Decode {
			gpu = "a100-80gb"
		}
		c.Instances = append(c.Instances, infer.InstanceConfig{GPU: gpu, TP: 8, Role: r, MaxBatchSize: 512, MaxBatchTokens: 2048, MaxPreemptions: 4})
	}
	return c
}

func placements(t *testing.T, c infer.Config, r infer.Router, reqs []infer.Request) [][2]int {
	t.Helper()
	s, err := infer.New(c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(r); err != nil {
		t.Fatal(err)
	}
	var out [][2]int
	for _, res := range s.Results() {
		out = append(out, [2]int{res.Prefill, res.Decode})
	}
	return out
}

func TestTokenJSQ(t *testing.T) {
	// Three requests at once on two instances: the first goes to 0 (a
	// tie, first wins), the second to 1 (0 holds 1,001 pending tokens),
	// the third (100 tokens) to 1 again (501 < 1,001).
	reqs := []infer.Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 5}, {ID: 1, Arrival: 1.0001, Prompt: 500, Output: 5}, {ID: 2, Arrival: 1.0002, Prompt: 100, Output: 5}}
	got := placements(t, deploy(t, 1000, infer.Colocated, infer.Colocated), NewTokenJSQ(), reqs)
	if d := cmp.Diff([][2]int{{0, 0}, {1, 1}, {1, 1}}, got); d != "" {
		t.Fatalf("placements (-want,+got):\n%s", d)
	}
}

func TestMixedPoolBorrowsAndReturns(t *testing.T) {
	// Instance 0 decodes (token pool), 1 prefills (prompt pool). Request 0
	// (5,000 tokens) goes 1 -> 0 and its prompt starts at once. Request 1
	// (4,000) finds 1 without a queue (the running prompt is not queued):
	// 1 -> 0, 9,000 tokens pending on 1, its prompt queued. Request 2 (100)
	// finds 1's queue long (9,100 > 8,192) and no mixed instance, so the
	// token instance 0 is borrowed and runs both of its phases. Request 3,
	// long after, finds 0 idle and back in the token pool: split again.
	reqs := []infer.Request{
		{ID: 0, Arrival: 1, Prompt: 5000, Output: 5},
		{ID: 1, Arrival: 1.0001, Prompt: 4000, Output: 5},
		{ID: 2, Arrival: 1.0002, Prompt: 100, Output: 5},
		{ID: 3, Arrival: 100, Prompt: 100, Output: 5},
	}
	got := placements(t, deploy(t, 1000, infer.Decode, infer.Prefill), NewMixedPool(MixedPoolConfig{}), reqs)
	want := [][2]int{{1, 0}, {1, 0}, {0, 0}, {1, 0}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("placements (-want,+got):\n%s", d)
	}
}
