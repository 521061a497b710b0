package serve

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/serve/servetest"
)

// TestFastSTRNMatchesSTRN checks the fast paths against the policies
// themselves (a fresh policy's Schedule on an env.View) on 2,000 random
// snapshots (20,000 in make test-long; 32 s of the race run, issue 31),
// reusing one snapshot's scratch memory throughout.
func TestFastSTRNMatchesSTRN(t *testing.T) {
	n := 2000
	if longtest.Enabled() {
		n = 20000
	}
	rng := rand.New(rand.NewPCG(11, 3))
	s := getSnapshot()
	placed := 0
	for i := range n {
		req := servetest.RandomPlaceRequest(rng)
		if err := validatePlace(req, DefaultLimits, s.index, s.ids); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		s.fill(req)
		for _, tc := range []struct {
			name string
			fast func(*snapshot, *fastScratch) ([]int, env.Sync)
			ref  func() ([]int, env.Sync, error)
		}{
			{strn.Name, fastSTRN, func() ([]int, env.Sync, error) { return runHeuristic(strn.New, s) }},
			{firstfit.Name, fastFirstFit, func() ([]int, env.Sync, error) { return runHeuristic(firstfit.New, s) }},
		} {
			want, wantSync, err := tc.ref()
			if err != nil {
				t.Fatalf("request %d: %s: %v", i, tc.name, err)
			}
			if s.job.GPUs > s.freeGPUs() {
				continue // Place answers "no room" without asking
			}
			got, gotSync := tc.fast(s, &s.fast)
			if !slices.Equal(got, want) || gotSync != wantSync {
				t.Fatalf("request %d: %s: fast path %v %v, policy %v %v", i, tc.name, got, gotSync, want, wantSync)
			}
			if got != nil {
				placed++
				if err := s.checkAlloc(got); err != nil {
					t.Fatalf("request %d: %s: %v", i, tc.name, err)
				}
			}
		}
	}
	if placed < n/2 {
		t.Errorf("only %d of %d placed: the requests are too hard", placed, 2*n)
	}
	putSnapshot(s)
}

// TestCheckAlloc covers checkAlloc's errors and that it leaves its counts
// at zero.
func TestCheckAlloc(t *testing.T) {
	s := &snapshot{ids: []string{"a", "b"}, state: placement.State{Free: []int{2, 1}}, job: env.JobSpec{GPUs: 3}}
	for _, tc := range []struct {
		alloc []int
		want  string
	}{
		{[]int{0, 0, 1}, ""},
		{[]int{0, 1}, "allocation of 2 workers for a job of 3"},
		{[]int{0, 1, 1}, "allocation puts 2 workers on node b with 1 free GPUs"},
		{[]int{0, 5, 1}, "allocation names node 5 of 2"},
		{[]int{-1, 0, 1}, "allocation names node -1 of 2"},
		{[]int{1, 0, 0}, ""},
	} {
		err := s.checkAlloc(tc.alloc)
		if got := errString(err); got != tc.want {
			t.Errorf("checkAlloc(%v) = %q, want %q", tc.alloc, got, tc.want)
		}
		for n, u := range s.used {
			if u != 0 {
				t.Fatalf("after checkAlloc(%v): used[%d] = %d", tc.alloc, n, u)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
