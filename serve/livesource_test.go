package serve_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/live"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/serve"
)

// TestLiveSourceRunsCheckpoint: the shipped sas-rl checkpoint, trained in
// simulation, steps env/live over the server's live state unchanged: 8
// agents (two of them on overloaded nodes, one silent long enough to be
// stale), a queue of 5 jobs. Every job is decided, each on free GPUs of
// fresh nodes, a decided job is booked as running (its GPUs are no longer
// free to the next decision), and the stale node is never used.
func TestLiveSourceRunsCheckpoint(t *testing.T) {
	_, st, clock := liveCore(t, 8)
	for i := range 8 {
		cpu := 0.2
		if i == 1 || i == 2 {
			cpu = 0.95
		}
		if i != 7 {
			sample(t, st, clock, fmt.Sprintf("n%d", i), 1, cpu, 0.02)
		}
	}
	clock.Advance(10 * time.Second)
	for i := range 7 {
		sample(t, st, clock, fmt.Sprintf("n%d", i), 2, 0.2, 0.02)
	}
	clock.Advance(10 * time.Second) // n7: 20 s silent, stale
	for i := range 7 {
		sample(t, st, clock, fmt.Sprintf("n%d", i), 3, 0.2, 0.02)
	}
	queue := []env.JobSpec{{Name: "a", GPUs: 4, Model: "cifar10"}, {Name: "b", GPUs: 8, Model: "bert"}, {Name: "c", GPUs: 2, Model: "ncf"},
		{Name: "d", GPUs: 1, Model: "yolov3"}, {Name: "e", GPUs: 4, Model: "imagenet"}}
	for i := range queue {
		queue[i].Submit = float64(clock.Now().Unix())
	}
	carried := map[string][]string{}
	src := &serve.LiveSource{}
	src.Store, src.Clock = st, clock
	src.Pending = func() []env.JobSpec { return queue }
	src.Carry = func(job string, nodes []string, _ env.Sync) error {
		carried[job] = nodes
		return nil
	}
	m, nets, err := checkpoints.Load("../checkpoints/sas-rl")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := direct.ConfigOf(m)
	if err != nil {
		t.Fatal(err)
	}
	actor := direct.Greedy(nets["actor"])
	e, err := live.New(live.Config{Encoder: cfg, MaxIdle: 1}, src, src)
	if err != nil {
		t.Fatal(err)
	}
	obs, _ := e.Reset(0)
	var mask []bool
	for step := 0; e.Job() != nil && step < 20; step++ {
		mask = e.ActionMask(mask)
		var term, trunc bool
		obs, _, term, trunc, _ = e.Step(actor(obs, mask))
		if term || trunc {
			break
		}
	}
	if e.Err() != nil {
		t.Fatalf("episode ended on an error: %v", e.Err())
	}
	if len(carried) != len(queue) {
		t.Fatalf("decided %d of %d jobs: %v", len(carried), len(queue), carried)
	}
	used := map[string]int{}
	for _, j := range queue {
		nodes := carried[j.Name]
		if len(nodes) != j.GPUs {
			t.Errorf("job %s: %d workers placed, want %d", j.Name, len(nodes), j.GPUs)
		}
		for _, n := range nodes {
			if n == "n7" {
				t.Errorf("job %s placed on the stale node n7", j.Name)
			}
			used[n]++
		}
	}
	for n, k := range used {
		if k > 4 {
			t.Errorf("node %s given %d workers, it has 4 GPUs", n, k)
		}
	}
	// The store's own jobs count too: a job reported started holds its
	// GPUs in the next snapshot, and leaves the queue.
	var s live.State
	if err := src.Snapshot(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.Pending) != 0 || len(s.Running) != len(queue) {
		t.Errorf("after the episode: %d pending, %d running, want 0 and %d", len(s.Pending), len(s.Running), len(queue))
	}
}
