package hack

import (
	"testing"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// TestRoute: prompts go to the prefill instance with the fewest pending
// tokens and decodes to such a decode instance, in the router's format.
// Three requests of 1,000-token prompts arrive at once at two prefill and
// two decode instances: the first takes instances 0 and 2 (ties go to the
// first), the second 1 and 3 (0 and 2 have 1,000 and 1 pending tokens),
// the third 0 and 2 again (each prefill has 1,000, each decode 1).
func TestRoute(t *testing.T) {
	perf := readPerf(t)
	c := infer.Config{Model: infer.ModelOf(kv.Llama2_70B), Perf: perf, Link: infer.LinkConfig{BytesPerSec: 1e9}}
	for _, r := range []infer.Role{infer.Prefill, infer.Prefill, infer.Decode, infer.Decode} {
		c.Instances = append(c.Instances, infer.InstanceConfig{GPU: "a100-80gb", TP: 8, Role: r, MaxBatchSize: 512, MaxBatchTokens: 4096, MaxPreemptions: 4})
	}
	reqs := []infer.Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 10}, {ID: 1, Arrival: 1, Prompt: 1000, Output: 10}, {ID: 2, Arrival: 1, Prompt: 1000, Output: 10}}
	s, err := infer.New(c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(New(kv.HACKPi(64))); err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{0, 2}, {1, 3}, {0, 2}}
	for i, r := range s.Results() {
		if r.Prefill != want[i][0] || r.Decode != want[i][1] || r.Format != "hack-pi64" {
			t.Errorf("request %d: prefill %d, decode %d, format %q; want %v, hack-pi64", i, r.Prefill, r.Decode, r.Format, want[i])
		}
	}
}

// TestRouteColocated: without prefill and decode instances both phases
// run on the colocated instance with the fewest pending tokens.
func TestRouteColocated(t *testing.T) {
	perf := readPerf(t)
	c := infer.Config{Model: infer.ModelOf(kv.Llama2_70B), Perf: perf, Link: infer.LinkConfig{BytesPerSec: 1e9}}
	for range 2 {
		c.Instances = append(c.Instances, infer.InstanceConfig{GPU: "a100-80gb", TP: 8, MaxBatchSize: 512, MaxBatchTokens: 4096, MaxPreemptions: 4})
	}
	reqs := []infer.Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 10}, {ID: 1, Arrival: 1, Prompt: 1000, Output: 10}}
	s, err := infer.New(c, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(New(kv.FP16())); err != nil {
		t.Fatal(err)
	}
	for i, r := range s.Results() {
		if r.Prefill != i || r.Decode != i {
			t.Errorf("request %d ran on %d and %d, want %d for both", i, r.Prefill, r.Decode, i)
		}
	}
}
