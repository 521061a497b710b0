package autoscale

import (
	"testing"

	"github.com/drover-sched/drover/env/infer/mm"
)

// first routes every request to instance 0 (the decision's default).
type first struct{}

func (first) Route(*mm.View, *mm.Request, *mm.Decision) error { return nil }

// fixed keeps the pools at one monolithic instance.
type fixed struct{}

func (fixed) Initial() Sizes                   { return Sizes{Mono: 1} }
func (fixed) Decide(Window, Sizes, bool) Sizes { return Sizes{Mono: 1} }

// TestDroppedLeavesWindow: a request that can never fit its instance's
// memory (mm's Result.Dropped, its times NaN) leaves the pending requests
// once dropped instead of staying pending forever; it never finishes, so
// it counts as a miss in the run's attainment.
func TestDroppedLeavesWindow(t *testing.T) {
	cfg := mm.Monolith(mm.Llama32_11BVision, 1)
	cfg.MemoryUtil = 0.07 // 2.7 GB of KV: a 100,000-token prompt never fits (mm's TestDropped)
	reqs := []mm.Request{{ID: 0, Prompt: 100000, Output: 2}, {ID: 1, Arrival: 1, Prompt: 10, Output: 2}}
	s, err := mm.New(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	d, err := NewDriver(s, reqs, first{}, c, fixed{}.Initial())
	if err != nil {
		t.Fatal(err)
	}
	w, tick, err := d.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !s.Result(0).Dropped {
		t.Fatalf("request 0: %+v, want dropped", s.Result(0))
	}
	if w.Requests != 2 || w.Finished != 1 || w.PendingRequests != 0 || tick {
		t.Errorf("first window: %d arrived, %d finished, %d pending (tick %v); want 2, 1, 0 (false)", w.Requests, w.Finished, w.PendingRequests, tick)
	}
	if err := d.Set(fixed{}.Decide(w, d.Sizes(), tick)); err != nil {
		t.Fatal(err)
	}
	if out := d.Outcome(); !d.Done() || out.Met != 1 || out.Attainment != 0.5 {
		t.Errorf("done %v, met %d, attainment %v; want done, 1 met of 2: 0.5", d.Done(), out.Met, out.Attainment)
	}
}
