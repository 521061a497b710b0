package mm

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// notGone is View.Live the slow way: every instance's index whose state
// is not Gone.
func notGone(v *View) []int {
	var out []int
	for i := range v.Instances {
		if v.Instances[i].State != Gone {
			out = append(out, i)
		}
	}
	return out
}

// TestLive follows View.Live through scaling actions: an added instance
// joins it, a starting one removed leaves at once, a draining one when its
// work is done; it is every instance not gone, in increasing order, and
// PoolSize counts from it. A View whose Instances the caller replaced (a
// policy server's) gets its own instances' list.
func TestLive(t *testing.T) {
	reqs := []Request{
		{ID: 0, Arrival: 0, Prompt: 100, Output: 2000, Images: 1},
		{ID: 1, Arrival: 50, Prompt: 100, Output: 10, Images: 2},
	}
	s, err := New(Decoupled(Llama32_11BVision, 2, 2), reqs)
	if err != nil {
		t.Fatal(err)
	}
	v := s.View()
	step := func(what string, want []int, act func() error) {
		t.Helper()
		if err := act(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if d := cmp.Diff(want, v.Live()); d != "" {
			t.Errorf("%s: Live (-want,+got):\n%s", what, d)
		}
		if d := cmp.Diff(notGone(v), v.Live()); d != "" {
			t.Errorf("%s: Live is not the instances not gone (-want,+got):\n%s", what, d)
		}
	}
	r := &fewest{}
	step("start", []int{0, 1, 2, 3}, func() error { return s.RunUntil(1, r) })
	step("add a text instance", []int{0, 1, 2, 3, 4}, func() error { _, err := s.AddInstance(Text); return err })
	step("add an image instance", []int{0, 1, 2, 3, 4, 5}, func() error { _, err := s.AddInstance(Image); return err })
	step("remove the starting text instance", []int{0, 1, 2, 3, 5}, func() error { return s.RemoveInstance(4) })
	if got := s.PoolSize(Text); got != 2 {
		t.Errorf("text pool %d, want 2", got)
	}
	// Request 0 runs on text instance 2 (the first of the fewest
	// pending): it drains and stays until its decode ends.
	busy := int(s.Result(0).Instance)
	step("drain the busy text instance", []int{0, 1, 2, 3, 5}, func() error { return s.RemoveInstance(busy) })
	step("drain image instance 0, idle", []int{1, 2, 3, 5}, func() error { return s.RemoveInstance(0) })
	step("run to the end", slices.DeleteFunc([]int{1, 2, 3, 5}, func(i int) bool { return i == busy }), func() error { _, err := s.Run(r); return err })
	if got := s.PoolSize(Image); got != 2 {
		t.Errorf("image pool %d, want 2", got)
	}

	// A view with the instances of a request, as a policy server builds.
	own, mine := v.Live(), v.Instances
	v.Instances = []InstanceView{{Pool: Image, State: Active}, {Pool: Image, State: Gone}, {Pool: Text, State: Draining}}
	if got := v.Live(); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("Live of a replaced Instances %v, want [0 2]", got)
	}
	v.Instances = mine
	if got := v.Live(); !slices.Equal(got, own) || &got[0] != &s.live[0] {
		t.Errorf("Live of the sim's own Instances again %v, want the sim's %v", got, own)
	}
}
