package state_test

import (
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/serve/state"
)

// TestResume: a node restored from a snapshot saved at t0 reads stale at
// t0+100 s (its agent was last heard at t0, StaleAfter 15 s) until the
// restarted server calls Resume(t0+100 s); then it is fresh until
// t0+115 s and stale after, unless its agent speaks.
func TestResume(t *testing.T) {
	st := newStore(t, state.Config{})
	mustHello(t, st, hello("n1", "a"), at(0))
	path := filepath.Join(t.TempDir(), "state.json")
	if err := st.Save(path, at(0)); err != nil {
		t.Fatal(err)
	}
	back, err := state.Load(path, state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Node("n1", at(100)); !v.Stale {
		t.Fatalf("restored node at t0+100 s: not stale before Resume")
	}
	back.Resume(at(100))
	for _, c := range []struct {
		t     float64
		stale bool
	}{{100, false}, {115, false}, {115.5, true}} {
		if v, _ := back.Node("n1", at(c.t)); v.Stale != c.stale {
			t.Errorf("t0+%v s after Resume(t0+100 s): stale %v, want %v", c.t, v.Stale, c.stale)
		}
	}
}
