package serve

import (
	"context"
	"errors"
	"testing"

	"github.com/drover-sched/drover/serve/servetest"
)

// TestHeavyWorkWaits: with the heavy-work budget taken, a request above
// SmallWork waits for it within its context (a cancelled one answers
// Canceled, though this job fits on one node and no loop of the
// heuristic would have looked at the context), a small request is
// answered at once, and the waiting heavy one is answered once the
// budget is given back.
func TestHeavyWorkWaits(t *testing.T) {
	k, err := NewCore(WithHeavyWork(1 << 20))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	heavy := servetest.PlaceRequest(4096, 64, 32, 0) // 131,072 > SmallWork; fits on one node
	small := servetest.PlaceRequest(64, 4, 2, 0)
	if err := k.heavy.Acquire(context.Background(), k.heavyCap); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if resp, err := k.Place(cancelled, heavy); !errors.Is(err, context.Canceled) {
		t.Errorf("heavy request, budget taken, cancelled: placed %v, %v; want context.Canceled", resp.GetPlaced(), err)
	}
	if resp, err := k.Place(context.Background(), small); err != nil || !resp.Placed {
		t.Errorf("small request, budget taken: placed %v, %v; want it answered", resp.GetPlaced(), err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := k.Place(context.Background(), heavy)
		if err == nil && !resp.Placed {
			err = errors.New("not placed")
		}
		done <- err
	}()
	k.heavy.Release(k.heavyCap)
	if err := <-done; err != nil {
		t.Errorf("heavy request once the budget is back: %v", err)
	}
	// Without the bound the same cancelled request is answered: nothing
	// in it looks at the context.
	free, err := NewCore(WithHeavyWork(0))
	if err != nil {
		t.Fatal(err)
	}
	defer free.Close()
	if resp, err := free.Place(cancelled, heavy); err != nil || !resp.Placed {
		t.Errorf("heavy request, no budget, cancelled: placed %v, %v; want it answered", resp.GetPlaced(), err)
	}
}
