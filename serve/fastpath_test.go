package serve

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/strn"
	pb "github.com/drover-sched/drover/serve/proto"
)

// randomSnapshotRequest is a valid Place request with extreme values
// mixed in: tiny and large speeds, loads up to the limit, bandwidth
// ratios that overflow, many equal nodes.
func randomSnapshotRequest(rng *rand.Rand) *pb.PlaceRequest {
	nodes := 1 + rng.IntN(80)
	rackSize := 1 + rng.IntN(10)
	c := &pb.Cluster{IntraRackGbps: []float64{0, 40, 100, 1e308}[rng.IntN(4)], CrossRackGbps: []float64{0, 10, 100, 1e-300}[rng.IntN(4)]}
	same := rng.IntN(3) == 0
	for i := range nodes {
		g := []int32{1, 2, 4, 8, 16}[rng.IntN(5)]
		u := func() float64 {
			if same {
				return 0.5
			}
			return []float64{0, 0.3, 0.79, 0.8, 0.81, 0.95, 1, 2.5, 10, rng.Float64()}[rng.IntN(10)]
		}
		sp := []float64{0, 1, 1, 0.5, 0.999, 1e-300, 4}[rng.IntN(7)]
		if same {
			g, sp = 4, 1
		}
		c.Nodes = append(c.Nodes, &pb.Node{Id: string(rune('a'+i%26)) + string(rune('a'+i/26)), Gpus: g, FreeGpus: int32(rng.IntN(int(g) + 1)),
			Speed: sp, Rack: int32(i / rackSize), CpuUtil: u(), MemBwUtil: u(), NetUtil: u()})
	}
	if rng.IntN(3) == 0 {
		rng.Shuffle(nodes, func(a, b int) { c.Nodes[a].Rack, c.Nodes[b].Rack = c.Nodes[b].Rack, c.Nodes[a].Rack })
	}
	j := &pb.Job{Id: "j", Workers: int32(1 + rng.IntN(40))}
	for _, n := range c.Nodes {
		if rng.IntN(8) == 0 {
			j.ExcludeNodes = append(j.ExcludeNodes, n.Id)
		}
	}
	return &pb.PlaceRequest{Cluster: c, Job: j}
}

// TestFastSTRNMatchesSTRN checks the fast paths against the policies
// themselves (a fresh policy's Schedule on an env.View) on 20,000 random
// snapshots, reusing one snapshot's scratch memory throughout.
func TestFastSTRNMatchesSTRN(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(11, 3))
	s := getSnapshot()
	placed := 0
	for i := range n {
		req := randomSnapshotRequest(rng)
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
