package state_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve/state"
)

// TestNodesBounded: the store holds at most MaxNodes nodes. A new node's
// hello when it is full takes the place of the node silent the longest
// if that node is stale (lowest id on a tie), and is refused when none
// is: a flood of made-up nodes never pushes out a node whose agent
// reports. 20,000 distinct nodes saying hello one second apart, each
// stale after 15 s, leave MaxNodes nodes, the newest, and each eviction
// and refusal is counted.
func TestNodesBounded(t *testing.T) {
	st := newStore(t, state.Config{MaxNodes: 3, StaleAfter: 15 * time.Second})
	for _, id := range []string{"n0", "n1", "n2"} {
		mustHello(t, st, hello(id, "a"), at(0))
	}
	mustApply(t, st, "n1", sampleMsg(1, at(10), 0.5, 0), at(10))
	// At 10 s no node is stale: refused.
	if _, err := st.Hello(hello("n3", "a"), at(10)); !errors.Is(err, state.ErrTooManyNodes) {
		t.Errorf("a fourth node with none stale: %v, want ErrTooManyNodes", err)
	}
	// At 20 s n0 and n2 (silent since 0) are stale, n1 (10 s) is not.
	mustHello(t, st, hello("n3", "a"), at(20))
	mustHello(t, st, hello("n4", "a"), at(20))
	if _, err := st.Hello(hello("n5", "a"), at(20)); !errors.Is(err, state.ErrTooManyNodes) {
		t.Errorf("a sixth node with none stale: %v, want ErrTooManyNodes", err)
	}
	if diff := cmp.Diff([]string{"n1", "n3", "n4"}, nodeIDs(st, at(20))); diff != "" {
		t.Errorf("nodes (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(state.Evictions{StaleNodes: 2, Nodes: 2}, st.Summarize(at(20)).Evicted); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}

	const maxNodes, n = 100, 20_000
	st = newStore(t, state.Config{MaxNodes: maxNodes, StaleAfter: 15 * time.Second})
	refused := 0
	for i := range n {
		if _, err := st.Hello(hello(fmt.Sprintf("node-%05d", i), "a"), at(float64(i))); err != nil {
			refused++
		}
	}
	sum := st.Summarize(at(n))
	// Until 15 s have passed a new node finds none stale: 100 are taken
	// at 0-99 s, so each later node finds the oldest one stale.
	if sum.Nodes != maxNodes || refused != 0 || sum.Evicted.StaleNodes != n-maxNodes {
		t.Errorf("after %d nodes: %d nodes, %d refused, %d evicted; want %d, 0, %d", n, sum.Nodes, refused, sum.Evicted.StaleNodes, maxNodes, n-maxNodes)
	}
	if _, ok := st.Node(fmt.Sprintf("node-%05d", n-1), at(n)); !ok {
		t.Error("the newest node is not kept")
	}
}

// nodeIDs lists the store's node ids at now, sorted.
func nodeIDs(st *state.Store, now time.Time) []string {
	var ids []string
	for _, v := range st.Nodes(now) {
		ids = append(ids, v.Info.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestPostedJobsBounded is issue 32's flood through a real stream:
// 20,000 iteration reports of distinct jobs from one node's agent (what
// 20,000 POSTs to its unauthenticated iteration endpoint become, one
// JobIterations message each: serve/agent's TestIterationsEndToEnd) over
// the Telemetry service. The store holds that node's MaxJobsPerNode jobs
// and no more, and its snapshot stays the size it had at the quota.
func TestPostedJobsBounded(t *testing.T) {
	leakcheck.Check(t)
	const perNode, n = 64, 20_000
	st := newStore(t, state.Config{MaxJobsPerNode: perNode})
	clock := &fakeClock{t: at(0)}
	a := openStream(t, startTelemetry(t, st, clock))
	a.send(helloMsg(hello("n1", "a1")))
	var sizeAtQuota int
	for i := range n {
		clock.Set(at(float64(i)))
		a.send(itersMsg(uint64(i+1), fmt.Sprintf("posted-%05d", i), 0, iterTimes(8)...))
		if i == perNode-1 {
			sizeAtQuota = len(mustMarshal(t, st))
		}
	}
	a.close()
	if got := st.Jobs(); got != perNode {
		t.Errorf("%d jobs after %d posted, want MaxJobsPerNode %d", got, n, perNode)
	}
	if ev := st.Summarize(at(n)).Evicted; ev.NodeQuota != n-perNode {
		t.Errorf("%d jobs evicted for the node's quota, want %d", ev.NodeQuota, n-perNode)
	}
	if size := len(mustMarshal(t, st)); size > sizeAtQuota+sizeAtQuota/20 {
		t.Errorf("snapshot after %d posted jobs: %d bytes, more than 1.05 x the %d bytes at the quota", n, size, sizeAtQuota)
	}
}
