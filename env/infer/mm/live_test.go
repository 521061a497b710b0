package mm

import (
	"fmt"
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

// TestDeployedBeyondLive starts and removes more instances than
// 3 x MaxInstances, the bound the simulator once put on the instances
// deployed over a run (gone ones included): a long autoscaled run must not
// stop for instances that are gone. Two runs of the same requests take
// the same actions (an instance added to each pool and one active image
// instance drained, with requests in flight), one of them after starting
// and at once removing 3 x MaxInstances + 10 instances: every result, the
// summary and the GPU time are the same, bit for bit, but for the later
// instances' indexes, which count the churned ones; the churned ones are
// gone and only the others are live.
func TestDeployedBeyondLive(t *testing.T) {
	var reqs []Request
	for i := range 300 {
		reqs = append(reqs, Request{ID: i, Arrival: float64(i) / 2, Prompt: 2000 + 37*i, Output: 500 + 11*i, Images: i % 3})
	}
	cfg := Decoupled(Llama32_11BVision, 2, 1)
	const churn = 3*MaxInstances + 10
	run := func(churn int) (*Sim, int) {
		s, err := New(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		r := &fewest{}
		if err := s.RunUntil(50, r); err != nil {
			t.Fatal(err)
		}
		for k := range churn {
			p := []Pool{Image, Text}[k%2]
			i, err := s.AddInstance(p)
			if err != nil {
				t.Fatalf("instance %d of the churn: %v", k, err)
			}
			if err := s.RemoveInstance(i); err != nil {
				t.Fatalf("remove instance %d: %v", i, err)
			}
		}
		first := len(s.View().Instances)
		for _, p := range []Pool{Image, Text} {
			if _, err := s.AddInstance(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RunUntil(120, r); err != nil {
			t.Fatal(err)
		}
		if err := s.RemoveInstance(1); err != nil { // an image instance with work, drained
			t.Fatal(err)
		}
		if _, err := s.Run(r); err != nil {
			t.Fatal(err)
		}
		return s, first
	}
	plain, first := run(0)
	churned, firstC := run(churn)
	if firstC != first+churn {
		t.Fatalf("the first instance after the churn is %d, want %d", firstC, first+churn)
	}
	want, got := plain.Results(), churned.Results()
	later := 0
	for i := range got {
		if int(got[i].Instance) >= firstC {
			got[i].Instance -= churn
			later++
		}
	}
	if later == 0 {
		t.Error("no request ran on an instance added after the churn")
	}
	t.Logf("%d instances deployed, %d of %d requests on the two added after the churn", firstC+2, later, len(got))
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Errorf("results after the churn differ from the plain run's")
	}
	if g, w := fmt.Sprintf("%+v", churned.Summary()), fmt.Sprintf("%+v", plain.Summary()); g != w {
		t.Errorf("summary after the churn:\n%s\nwant\n%s", g, w)
	}
	if g, w := churned.GPUSeconds(), plain.GPUSeconds(); g != w {
		t.Errorf("GPU seconds %v after the churn, want %v", g, w)
	}
	v := churned.View()
	wantLive := []int{0, 2, firstC, firstC + 1}
	if len(v.Instances) != firstC+2 || !slices.Equal(v.Live(), wantLive) || !slices.Equal(notGone(v), wantLive) {
		t.Errorf("%d instances, live %v; want %d, live %v", len(v.Instances), v.Live(), firstC+2, wantLive)
	}
	if gone := v.Instances[1]; gone.State != Gone {
		t.Errorf("the drained image instance is %s, want gone", gone.State)
	}
}
