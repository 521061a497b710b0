package serve_test

import (
	"context"
	"errors"
	"testing"

	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/state"
)

// TestEveryHeuristicStopsWhenCancelled: for every heuristic drover serve
// accepts (-heuristic, the registry's names), stateless and with a live
// state, a Place request whose context was cancelled before it arrived
// answers context.Canceled and records no decision. The request (512
// nodes x 1,024 workers) is heavy, so the heavy-work budget does not
// answer for the policy: the policy's loops must look at the request's
// Done (policies/builtin's TestScheduleStopsWhenDone checks each one
// directly). The stateless first-fit is the exception: serve answers it
// by one first-fit pack over the nodes (fastFirstFit), microseconds at
// the work bound, which does not look at Done.
func TestEveryHeuristicStopsWhenCancelled(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	req := makeRequest(512, 4, 1024)
	for _, name := range builtin.Registry().Names() {
		for _, live := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "/live"}[live], func(t *testing.T) {
				if name == firstfit.Name && !live {
					t.Skip("the stateless first-fit is serve's fast path: one pack over the nodes, no loop to stop")
				}
				sink := &serve.MemorySink{}
				opts := []serve.Option{serve.WithHeuristic(name), serve.WithSink(sink), serve.WithHeavyWork(0)}
				if live {
					st, err := state.New(state.Config{})
					if err != nil {
						t.Fatal(err)
					}
					opts = append(opts, serve.WithState(st, nil))
				}
				k := newCore(t, opts...)
				if resp, err := k.Place(cancelled, req); !errors.Is(err, context.Canceled) {
					t.Errorf("Place: placed %v, %v; want %v", resp.GetPlaced(), err, context.Canceled)
				}
				if n := len(sink.Decisions()); n != 0 {
					t.Errorf("%d decisions recorded for a request that was not answered", n)
				}
			})
		}
	}
}
