package sched

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

// tel is a model that only reports fixed node loads.
type tel struct {
	env.Model
	loads []env.Usage
}

func (t tel) NodeLoad(n int, _ float64) env.Usage { return t.loads[n] }

// cluster4 is 4 nodes of 4 GPUs, nodes 0-1 in rack 0 and 2-3 in rack 1.
func cluster4() *env.Cluster {
	c := env.Homogeneous(4, 4)
	for i := range c.Nodes {
		c.Nodes[i].Rack = i / 2
	}
	return &c
}

func view(c *env.Cluster, free []int, cpu []float64, jobs ...*env.Job) *env.View {
	loads := make([]env.Usage, len(cpu))
	for i, u := range cpu {
		loads[i].CPU = u
	}
	return &env.View{Now: 100, Cluster: c, Free: free, Active: jobs, Model: tel{loads: loads}}
}

func job(id, gpus int) *env.Job {
	return &env.Job{ID: id, State: env.Pending, Spec: env.JobSpec{Name: "j", GPUs: gpus, Model: "cifar10", Duration: 3600}}
}

// TestTemplates works the templates of a small cluster by hand. Free GPUs
// [4 2 4 4], CPU loads [0.9 0 0.1 0.5]. A 2-GPU job adds 2/16 CPU and
// 0.16 memory bandwidth to a node, so its pressure (the larger) is 1.025
// on node 0, 0.16 on node 1, 0.225 on node 2 and 0.625 on node 3; the
// packing term adds 0.01 x spare GPUs / 4: node 0 1.03, node 1 0.16, node
// 2 0.23, node 3 0.63. Rack 0's template is node 1, rack 1's node 2, the
// cluster's node 1. An 8-GPU job fits only in rack 1 (nodes 2 and 3) and
// in the cluster, where the most-free nodes 0, 2, 3 are taken by load:
// 2, then 3.
func TestTemplates(t *testing.T) {
	c := cluster4()
	e, err := NewEncoder(Config{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if e.Groups() != 8 || len(e.groups) != 2 {
		t.Fatalf("groups %v of %d slots, want the 2 racks in 8 slots", e.groups, e.Groups())
	}
	j2, j8 := job(0, 2), job(1, 8)
	v := view(c, []int{4, 2, 4, 4}, []float64{0.9, 0, 0.1, 0.5}, j2, j8)
	e.Begin(v)
	S := len(DefaultSyncs)
	for slot, want := range map[int]int{0: 1, 1: 2, 8: 1} {
		d, hold := e.Decode(v, j2, slot*S)
		if hold || !slices.Equal(d.Nodes, []int{want, want}) || d.Sync != (env.Sync{}) {
			t.Errorf("2-GPU job, slot %d: %v (hold %v), want nodes [%d %d] under BSP", slot, d, hold, want, want)
		}
	}
	m := e.Mask(nil, v, j2)
	for a, ok := range m {
		if want := a/S == 0 || a/S == 1 || a/S == 8; ok != want {
			t.Errorf("2-GPU job: action %d valid %v, want %v", a, ok, want)
		}
	}
	obs := e.Observe(nil, v, j2)
	if len(obs) != e.ObsDim() || e.ObsDim() != jobBase+S+9*SlotFeatures {
		t.Fatalf("observation of %d values, ObsDim %d", len(obs), e.ObsDim())
	}
	slot0 := obs[jobBase+S:]
	if slot0[0] != 1 || slot0[1] != 1 || slot0[2] != 6.0/8 || math.Abs(slot0[5]-0.16) > 1e-12 {
		t.Errorf("rack 0's features %v: want exists, fits, 6/8 free, worst pressure 0.16", slot0[:SlotFeatures])
	}
	if empty := obs[jobBase+S+2*SlotFeatures : jobBase+S+3*SlotFeatures]; slices.ContainsFunc(empty, func(x float64) bool { return x != 0 }) {
		t.Errorf("an empty slot's features %v, want zeros", empty)
	}
	d, _ := e.Decode(v, j8, 1*S+2) // rack 1, ASP
	if !slices.Equal(d.Nodes, []int{2, 2, 2, 2, 3, 3, 3, 3}) || d.Sync.Kind != env.ASP {
		t.Errorf("8-GPU job in rack 1: %v, want nodes 2 and 3 under ASP", d)
	}
	d, _ = e.Decode(v, j8, 8*S)
	if !slices.Equal(d.Nodes, []int{2, 2, 2, 2, 3, 3, 3, 3}) {
		t.Errorf("8-GPU job on the cluster: %v, want nodes 2 and 3 (least loaded of the most free)", d)
	}
	if m := e.Mask(nil, v, j8); m[0] || !m[S] || !m[8*S+3] {
		t.Errorf("8-GPU job mask %v: want rack 0 invalid, rack 1 and the cluster valid", m)
	}
	// A teacher's decision maps to the slot holding it and its strategy.
	if a := e.Action(v, j8, env.Decision{Job: 1, Nodes: []int{2, 2, 2, 2, 3, 3, 3, 3}, Sync: env.Sync{Kind: env.LocalSGD, Period: 8}}); a != S+3 {
		t.Errorf("teacher's rack-1 local SGD decision: action %d, want %d", a, S+3)
	}
	if a := e.Action(v, j8, env.Decision{Job: 1, Nodes: []int{0, 0, 0, 0, 2, 2, 2, 2}, Sync: env.Sync{Kind: env.SSP, Staleness: 5}}); a != 8*S+1 {
		t.Errorf("teacher's cross-rack SSP(5) decision: action %d, want %d (the cluster, SSP)", a, 8*S+1)
	}
	// Commit books the GPUs: node 1 is full for the next job of the point.
	d, _ = e.Decode(v, j2, 0)
	e.Commit(d)
	if d, _ := e.Decode(v, job(2, 2), 0); !slices.Equal(d.Nodes, []int{0, 0}) {
		t.Errorf("after booking node 1, rack 0 places on %v, want node 0", d.Nodes)
	}
}

// TestOneGPUAndHold: a one-GPU job may only take BSP; hold is valid while
// a job runs and the job has waited less than the limit.
func TestOneGPUAndHold(t *testing.T) {
	c := cluster4()
	e, _ := NewEncoder(Config{Hold: true, HoldLimit: 50}, c)
	j := job(0, 1)
	run := job(1, 1)
	run.State = env.Running
	v := view(c, []int{4, 4, 4, 4}, []float64{0, 0, 0, 0}, j, run)
	e.Begin(v)
	S := len(DefaultSyncs)
	m := e.Mask(nil, v, j)
	if !m[0] || m[1] || m[2] || m[3] {
		t.Errorf("one-GPU job's strategies on slot 0: %v, want BSP only", m[:S])
	}
	v.Now = 40 // submitted at 0: waited 40 < 50
	e.Begin(v)
	if m := e.Mask(nil, v, j); !m[e.Hold()] {
		t.Error("hold invalid after 40 s of a 50 s limit with a job running")
	}
	if _, hold := e.Decode(v, j, e.Hold()); !hold {
		t.Error("hold action did not decode as hold")
	}
	v.Now = 60
	e.Begin(v)
	if m := e.Mask(nil, v, j); m[e.Hold()] {
		t.Error("hold valid past the limit")
	}
	v.Now, v.Active = 10, []*env.Job{j}
	e.Begin(v)
	if m := e.Mask(nil, v, j); m[e.Hold()] {
		t.Error("hold valid with nothing running (no later decision point)")
	}
}

// TestRackGroups: five racks of 4 GPUs into two groups close the first
// once it holds half the GPUs (after the third rack, 12 of 20).
func TestRackGroups(t *testing.T) {
	c := env.Homogeneous(10, 2)
	for i := range c.Nodes {
		c.Nodes[i].Rack = i / 2
	}
	g := rackGroups(&c, 2)
	if len(g) != 2 || !slices.Equal(g[0], []int{0, 1, 2, 3, 4, 5}) || !slices.Equal(g[1], []int{6, 7, 8, 9}) {
		t.Errorf("groups %v, want racks 0-2 and 3-4", g)
	}
	if g := rackGroups(&c, 8); len(g) != 5 {
		t.Errorf("%d groups of 5 racks in 8 slots, want one per rack", len(g))
	}
}

// TestLoadGroups: GroupLoad bands nodes by predicted pace; with one
// reading the predicted pressure is the reading (no variance yet).
func TestLoadGroups(t *testing.T) {
	c := cluster4()
	e, _ := NewEncoder(Config{Grouping: GroupLoad, Groups: 8}, c)
	v := view(c, []int{4, 4, 4, 4}, []float64{0.95, 0.1, 0.5, 0.85}, job(0, 1))
	e.Begin(v)
	// Bands: <0.3: 0, <0.45: 1, <0.55: 2, ..., <0.9: 6, else 7.
	want := map[int][]int{0: {1}, 2: {2}, 6: {3}, 7: {0}}
	for g, nodes := range e.groups {
		if !slices.Equal(nodes, want[g]) && !(len(nodes) == 0 && want[g] == nil) {
			t.Errorf("band %d: %v, want %v", g, nodes, want[g])
		}
	}
	// A GPU at 0.8x speed adds slowness 0.25: node 2's pace 0.5 + 0.25
	// moves it to band 5 (0.72 to 0.8).
	c.Nodes[2].Speed = 0.8
	e, _ = NewEncoder(Config{Grouping: GroupLoad, Groups: 8}, c)
	e.Begin(v)
	if !slices.Equal(e.groups[5], []int{2}) || len(e.groups[2]) != 0 {
		t.Errorf("bands with a slow node 2: %v, want node 2 in band 5", e.groups)
	}
}

// TestEnvReturn checks the reward's accounting: with WaitWeight 0 an
// episode's undiscounted return is minus the jobs' GPU-held hours (Little's
// law), whatever the actions.
func TestEnvReturn(t *testing.T) {
	prof := envtest.Flat{Step: 0.1, Sync: 0.02, PerEpoch: 0.1, Epochs: 10}
	var jobs []env.JobSpec
	for i := range 12 {
		jobs = append(jobs, env.JobSpec{Name: fmt.Sprint("j", i), Submit: float64(60 * i), GPUs: 1 + i%5, Model: envtest.FlatName, Duration: 600})
	}
	e, err := NewEnv(EnvConfig{Jobs: jobs, Cluster: *cluster4(), RestartDelay: 10,
		NewModel: func(uint64) env.Model { return &env.Drover{Profiles: envtest.Profiles(prof)} }})
	if err != nil {
		t.Fatal(err)
	}
	for _, pick := range []string{"first", "last"} {
		_, _ = e.Reset(1)
		ret, steps := 0.0, 0
		var mask []bool
		for {
			mask = e.ActionMask(mask)
			a := slices.Index(mask, true)
			if pick == "last" {
				for k := len(mask) - 1; k >= 0; k-- {
					if mask[k] {
						a = k
						break
					}
				}
			}
			_, r, term, _, _ := e.Step(a)
			ret += r
			steps++
			if term {
				break
			}
		}
		held := 0.0
		for _, j := range e.Jobs() {
			if j.State != env.Done {
				t.Fatalf("%s: job %d not done", pick, j.ID)
			}
			held += j.Held / 3600
		}
		if steps != len(jobs) || math.Abs(ret+held) > 1e-9*held {
			t.Errorf("%s actions: %d steps, return %v, want %d steps and minus %v GPU-held hours", pick, steps, ret, len(jobs), held)
		}
	}
}
