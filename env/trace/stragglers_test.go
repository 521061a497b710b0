package trace_test

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
)

// fixed runs one job at a time on the given nodes (one worker per entry)
// with a sync strategy.
type fixed struct {
	nodes []int
	sync  env.Sync
}

func (f fixed) Schedule(v *env.View) ([]env.Decision, error) {
	for _, j := range v.Active {
		if j.State == env.Running {
			return nil, nil // one job at a time
		}
	}
	for _, j := range v.Active {
		if j.State == env.Pending {
			return []env.Decision{{Job: j.ID, Nodes: f.nodes, Sync: f.sync}}, nil
		}
	}
	return nil, nil
}

// stragglerShare runs twenty 8-worker imagenet jobs, one after the other
// (each alone, for a day of work), on 16 identical 8-GPU nodes (two racks)
// under 1.5x the fitted background load and the calibrated jitter, for
// five seeds (one seed's background can favour a few nodes), and
// returns the share of their iterations that had a straggler and the
// straggling workers per iteration. Twenty jobs
// average over the jitter's per-job variation levels.
func stragglerShare(t *testing.T, nodes []int, sync env.Sync) share {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	w := &datasets.Workload{Name: "twenty"}
	for i := range 20 {
		w.Jobs = append(w.Jobs, datasets.Job{Name: fmt.Sprintf("j%d", i), Submit: float64(i) * 30 * 86400, GPUs: 8, Duration: 86400, Model: "imagenet"})
	}
	var iters, with, count float64
	for seed := range uint64(5) {
		res, err := trace.Run(trace.Options{
			Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: fixed{nodes, sync},
			Nodes: 16, GPUsPerNode: 8, Interval: 0, RestartDelay: -1,
			Stragglers: &trace.Stragglers{Background: "builtin", Load: 1.5, Seed: seed + 1},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range res.Jobs {
			iters += j.Iterations
			with += j.StragglerIterations
			count += j.Stragglers
		}
	}
	if iters == 0 {
		t.Fatal("no iterations counted")
	}
	return share{with / iters, count / iters}
}

// share is a run's straggler measures.
type share struct {
	with  float64 // share of iterations with a straggler
	count float64 // straggling workers per iteration
}

// The source papers observe stragglers on homogeneous GPUs, more when a
// job is spread over nodes and more under BSP than ASP. The per-worker
// model reproduces all three on identical GPUs: stragglers appear on one
// node (jitter, CPU and memory contention), grow as the job spreads over
// nodes and racks (NIC contention, slower cross-rack ring links), and are
// fewer under ASP, where no exchange is synchronized (less burst noise)
// and a straggler, iterating at its own slower pace, contributes fewer of
// the job's gradient updates. Both measures are checked: the share of
// iterations with a straggler and the straggling workers per iteration.
func TestStragglerDirections(t *testing.T) {
	packed := []int{0, 0, 0, 0, 0, 0, 0, 0}
	oneRack := []int{0, 1, 2, 3, 4, 5, 6, 7}    // eight nodes of rack 0
	twoRacks := []int{4, 5, 6, 7, 8, 9, 10, 11} // four nodes in each rack
	bsp, asp := env.Sync{Kind: env.BSP}, env.Sync{Kind: env.ASP}
	packedBSP := stragglerShare(t, packed, bsp)
	rackBSP := stragglerShare(t, oneRack, bsp)
	rackASP := stragglerShare(t, oneRack, asp)
	racksBSP := stragglerShare(t, twoRacks, bsp)
	t.Logf("iterations with a straggler: packed BSP %.3f; one rack BSP %.3f, ASP %.3f; two racks BSP %.3f",
		packedBSP.with, rackBSP.with, rackASP.with, racksBSP.with)
	t.Logf("stragglers per iteration: packed BSP %.3f; one rack BSP %.3f, ASP %.3f; two racks BSP %.3f",
		packedBSP.count, rackBSP.count, rackASP.count, racksBSP.count)
	if packedBSP.with <= 0 {
		t.Errorf("no stragglers on one node of identical GPUs (%.3f)", packedBSP.with)
	}
	for _, m := range []struct {
		name                       string
		packed, rack, racks, async float64
	}{
		{"iterations with a straggler", packedBSP.with, rackBSP.with, racksBSP.with, rackASP.with},
		{"stragglers per iteration", packedBSP.count, rackBSP.count, racksBSP.count, rackASP.count},
	} {
		if !(m.packed < m.rack && m.rack < m.racks) {
			t.Errorf("%s: packed %.3f, one rack %.3f, two racks %.3f: spreading should add stragglers", m.name, m.packed, m.rack, m.racks)
		}
		if !(m.async < m.rack) {
			t.Errorf("%s: one rack BSP %.3f, ASP %.3f: BSP should have more", m.name, m.rack, m.async)
		}
	}
}
