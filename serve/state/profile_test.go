package state_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve/state"
)

// TestProfileTwoWorkers works the brief's two-worker job by hand:
// worker 0 does 8 iterations of 1 s, worker 1 [1,1,1,1,2,2,2,2].
func TestProfileTwoWorkers(t *testing.T) {
	st := newStore(t, state.Config{})
	st.JobIterations("j", 0, "", repeat(1, 8), 0, at(1))
	st.JobIterations("j", 1, "", []float64{1, 1, 1, 1, 2, 2, 2, 2}, 0, at(1))
	// mean over all = (8*1 + 4*1 + 4*2)/16 = 20/16 = 1.25;
	// mean over iterations of the slowest = (4*1 + 4*2)/8 = 1.5;
	// Straggling = 1.5/1.25 - 1 = 0.2;
	// Base = min(median(w0) = 1, median(w1) = (1+2)/2 = 1.5) = 1;
	// Rel = 1/1.25 = 0.8 everywhere but worker 1's last four, 2/1.25 = 1.6.
	want := state.Profile{Workers: 2, Iterations: 8, Base: 1, Straggling: 0.2, HasStraggling: true, Rel: [][]float64{
		{0.8, 0.8}, {0.8, 0.8}, {0.8, 0.8}, {0.8, 0.8},
		{0.8, 1.6}, {0.8, 1.6}, {0.8, 1.6}, {0.8, 1.6},
	}}
	got, ok := st.Profile("j", "")
	if !ok {
		t.Fatal("no profile")
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("Profile (-want,+got):\n%s", diff)
	}
}

func TestProfileShapes(t *testing.T) {
	type report struct {
		worker int
		secs   []float64
	}
	tests := []struct {
		name   string
		report []report
		want   state.Profile
		wantOK bool
	}{{
		name:   "nothing",
		wantOK: false,
	}, {
		name:   "7 iterations",
		report: []report{{0, repeat(1, 7)}, {1, repeat(1, 7)}},
		wantOK: false,
	}, {
		// Aligned on the fewest: 8 and 7 give K = 7 < MinIterations.
		name:   "one worker short",
		report: []report{{0, repeat(1, 8)}, {1, repeat(1, 7)}},
		wantOK: false,
	}, {
		// Whole-job times: median of 1..8 = (4+5)/2 = 4.5, nothing else.
		name:   "whole job only",
		report: []report{{-1, []float64{8, 1, 7, 2, 6, 3, 5, 4}}},
		want:   state.Profile{Workers: 1, Iterations: 8, Base: 4.5},
		wantOK: true,
	}, {
		// Odd count: sorted 0.9 0.95 1 1 1 1.05 1.1 1.2 5 -> median 1.
		name:   "whole job odd",
		report: []report{{-1, []float64{1, 1.1, 0.9, 1.2, 1, 5, 1, 0.95, 1.05}}},
		want:   state.Profile{Workers: 1, Iterations: 9, Base: 1},
		wantOK: true,
	}, {
		// Per-worker times too few: the whole-job times still give Base.
		name:   "whole job beside short workers",
		report: []report{{-1, repeat(3, 10)}, {0, repeat(1, 4)}, {1, repeat(1, 4)}},
		want:   state.Profile{Workers: 1, Iterations: 10, Base: 3},
		wantOK: true,
	}, {
		// One worker: no straggling to measure. mean = 16/8 = 2; Rel = x/2.
		name:   "one worker",
		report: []report{{3, []float64{1, 3, 1, 3, 1, 3, 1, 3}}},
		want: state.Profile{Workers: 1, Iterations: 8, Base: 2, Rel: [][]float64{
			{0.5}, {1.5}, {0.5}, {1.5}, {0.5}, {1.5}, {0.5}, {1.5}}},
		wantOK: true,
	}, {
		// Workers 0 and 5 (indices need not be dense), aligned K = 8
		// (worker 5's 10 are cut to 8). mean = (8*2 + 8*1)/16 = 1.5; the
		// slowest is worker 0 every time: 2/1.5 - 1 = 1/3. Base = 1.
		name:   "sparse indices",
		report: []report{{5, repeat(1, 10)}, {0, repeat(2, 8)}},
		want: state.Profile{Workers: 2, Iterations: 8, Base: 1, Straggling: 1.0 / 3, HasStraggling: true,
			Rel: [][]float64{{4.0 / 3, 2.0 / 3}, {4.0 / 3, 2.0 / 3}, {4.0 / 3, 2.0 / 3}, {4.0 / 3, 2.0 / 3},
				{4.0 / 3, 2.0 / 3}, {4.0 / 3, 2.0 / 3}, {4.0 / 3, 2.0 / 3}, {4.0 / 3, 2.0 / 3}}},
		wantOK: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t, state.Config{})
			st.JobModel("j", "", at(0)) // an empty model changes nothing
			for _, r := range tt.report {
				st.JobIterations("j", r.worker, "", r.secs, 0, at(1))
			}
			got, ok := st.Profile("j", "")
			if ok != tt.wantOK {
				t.Fatalf("Profile ok = %v, want %v (%+v)", ok, tt.wantOK, got)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Profile (-want,+got):\n%s", diff)
			}
		})
	}
}

// loadFixture is a store with nodes n1..n3 whose CPU utilisation and
// memory pressure after t0+10 s are cpu[i] and mem[i], and before it 0
// (a sample before the job started, which the fit must ignore).
func loadFixture(t *testing.T, cpu, mem []float64) *state.Store {
	t.Helper()
	st := newStore(t, state.Config{})
	for i := range cpu {
		id := []string{"n1", "n2", "n3"}[i]
		mustHello(t, st, hello(id, "a"), at(0))
		mustApply(t, st, id, sampleMsg(1, at(5), 0, 0), at(5))
		mustApply(t, st, id, sampleMsg(2, at(20), cpu[i], mem[i]), at(20))
		mustApply(t, st, id, sampleMsg(3, at(30), cpu[i], mem[i]), at(30))
	}
	return st
}

func TestProfileLoadFit(t *testing.T) {
	// Worker mean times 1.0, 1.2, 1.4: slowdowns over the fastest
	// y = 0, 0.2, 0.4. Overloads (u - 0.8)/0.2 of loads 0.7, 0.9, 1.0 are
	// max(0, -0.5) = 0, 0.5, 1. Least squares through the origin:
	// sum xy / sum xx = (0.5*0.2 + 1*0.4)/(0.25 + 1) = 0.5/1.25 = 0.4.
	// mean = (8 + 9.6 + 11.2)/24 = 1.2; the slowest is 1.4 every
	// iteration: Straggling = 1.4/1.2 - 1 = 1/6; Base = 1.
	rel := make([][]float64, 8)
	for k := range rel {
		rel[k] = []float64{1 / 1.2, 1, 1.4 / 1.2}
	}
	tests := []struct {
		name     string
		cpu, mem []float64
		agent    bool // iterations through the nodes' agents, not reports
		want     state.Profile
	}{{
		name: "cpu",
		cpu:  []float64{0.7, 0.9, 1.0}, mem: []float64{0.1, 0.1, 0.1},
		want: state.Profile{Model: "m", Workers: 3, Iterations: 8, Base: 1, Straggling: 1.0 / 6, HasStraggling: true, CPU: 0.4, HasCPU: true, Rel: rel},
	}, {
		name: "cpu via agents",
		cpu:  []float64{0.7, 0.9, 1.0}, mem: []float64{0.1, 0.1, 0.1}, agent: true,
		want: state.Profile{Model: "m", Workers: 3, Iterations: 8, Base: 1, Straggling: 1.0 / 6, HasStraggling: true, CPU: 0.4, HasCPU: true, Rel: rel},
	}, {
		// The same with memory pressure as the varying load.
		name: "memory",
		cpu:  []float64{0.5, 0.5, 0.5}, mem: []float64{0.7, 0.9, 1.0},
		want: state.Profile{Model: "m", Workers: 3, Iterations: 8, Base: 1, Straggling: 1.0 / 6, HasStraggling: true, MemBW: 0.4, HasMemBW: true, Rel: rel},
	}, {
		// Both vary: CPU overload x1 = 0, 0.5, 1 and memory pressure
		// 0.8, 0.8, 1.0, overload x2 = 0, 0, 1; y = 0, 0.2, 0.4.
		// s11 = 1.25, s12 = 1, s22 = 1, s1y = 0.5, s2y = 0.4, det = 0.25:
		// a = (1*0.5 - 1*0.4)/0.25 = 0.4, b = (1.25*0.4 - 1*0.5)/0.25 = 0
		// (y = 0.4 x1 exactly; both identified).
		name: "both vary",
		cpu:  []float64{0.7, 0.9, 1.0}, mem: []float64{0.8, 0.8, 1.0},
		want: state.Profile{Model: "m", Workers: 3, Iterations: 8, Base: 1, Straggling: 1.0 / 6, HasStraggling: true, CPU: 0.4, HasCPU: true, HasMemBW: true, Rel: rel},
	}, {
		// All nodes equally loaded: nothing identified.
		name: "no variation",
		cpu:  []float64{0.9, 0.9, 0.9}, mem: []float64{0.1, 0.1, 0.1},
		want: state.Profile{Model: "m", Workers: 3, Iterations: 8, Base: 1, Straggling: 1.0 / 6, HasStraggling: true, Rel: rel},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := loadFixture(t, tt.cpu, tt.mem)
			nodes := []string{"n1", "n2", "n3"}
			times := []float64{1.0, 1.2, 1.4}
			if tt.agent {
				st.JobStarted("j", "m", nil, at(10), at(10))
				for w, id := range nodes {
					mustApply(t, st, id, itersMsg(4, "j", int32(w), repeat(times[w], 8)...), at(31))
				}
			} else {
				st.JobStarted("j", "m", nodes, at(10), at(10))
				for w := range nodes {
					st.JobIterations("j", w, "", repeat(times[w], 8), 0, at(31))
				}
			}
			got, ok := st.Profile("j", "")
			if !ok {
				t.Fatal("no profile")
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Profile (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestProfileFitIgnoresOtherNodes: a worker whose node no agent reports,
// or whose node has no sample since the job started, is left out of the
// fit; two left give too few points to identify anything.
func TestProfileFitIgnoresOtherNodes(t *testing.T) {
	st := loadFixture(t, []float64{0.7, 0.9, 1.0}, []float64{0.1, 0.1, 0.1})
	// Started after every sample: no node has a sample since.
	st.JobStarted("late", "", []string{"n1", "n2", "n3"}, at(40), at(40))
	// Worker 2 on a node without an agent; workers 0, 1 on n1 (x = 0).
	st.JobStarted("mixed", "", []string{"n1", "n1", "elsewhere"}, at(10), at(10))
	for _, id := range []string{"late", "mixed"} {
		for w, x := range []float64{1.0, 1.2, 1.4} {
			st.JobIterations(id, w, "", repeat(x, 8), 0, at(41))
		}
		p, ok := st.Profile(id, "")
		if !ok || p.HasCPU || p.HasMemBW || p.CPU != 0 || p.MemBW != 0 {
			t.Errorf("%s: Profile %+v, %v; want no load fit", id, p, ok)
		}
	}
}

func TestJobFinishedModelProfile(t *testing.T) {
	st := newStore(t, state.Config{})
	st.JobModel("a", "bert", at(0))
	st.JobIterations("a", 0, "", repeat(1, 8), 0, at(1))
	st.JobIterations("a", 1, "", []float64{1, 1, 1, 1, 2, 2, 2, 2}, 0, at(1))
	if _, ok := st.Profile("b", "bert"); ok {
		t.Error("a running job's profile is its model's before it finished")
	}
	st.JobFinished("a", at(2))
	st.JobFinished("nobody", at(2)) // unknown: nothing happens
	want, ok := st.Profile("a", "")
	if !ok || want.Model != "bert" || want.Straggling == 0 {
		t.Fatalf("a's profile: %+v, %v", want, ok)
	}
	got, ok := st.Profile("b", "bert")
	if !ok {
		t.Fatal("Profile(b, bert): none after a finished")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Profile(b, bert) (-want a's,+got):\n%s", diff)
	}
	if _, ok := st.Profile("b", ""); ok {
		t.Error("Profile(b, \"\") found a profile")
	}
	if _, ok := st.Profile("b", "yolov3"); ok {
		t.Error("Profile(b, yolov3) found bert's profile")
	}
	// A job with its own profile gets its own, not its model's: 8 x 3 s.
	st.JobIterations("c", -1, "", repeat(3, 8), 0, at(3))
	if p, ok := st.Profile("c", "bert"); !ok || p.Base != 3 {
		t.Errorf("Profile(c, bert) = %+v, %v; want c's own (Base 3)", p, ok)
	}
	// A finished job without a model, or without a profile, leaves the
	// model profiles alone.
	st.JobIterations("d", -1, "", repeat(5, 8), 0, at(4))
	st.JobFinished("d", at(4))
	st.JobModel("e", "bert", at(4))
	st.JobFinished("e", at(5))
	if p, ok := st.Profile("x", "bert"); !ok || p.Base != 1 {
		t.Errorf("Profile(x, bert) = %+v, %v; want a's (Base 1)", p, ok)
	}
}

// jobIDs returns the ids of the jobs in the store's snapshot.
func jobIDs(t *testing.T, st *state.Store) []string {
	t.Helper()
	b, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Jobs []struct{ ID string }
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range s.Jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

func TestEviction(t *testing.T) {
	tests := []struct {
		name string
		ops  func(st *state.Store)
		want []string // after adding job "z" to a store of MaxJobs 3
	}{{
		// No job finished: the least recently touched (a, at 1) goes.
		name: "oldest",
		ops: func(st *state.Store) {
			st.JobModel("a", "m", at(1))
			st.JobModel("b", "m", at(2))
			st.JobModel("c", "m", at(3))
		},
		want: []string{"b", "c", "z"},
	}, {
		// Touching a again (at 4) makes b the oldest.
		name: "touched",
		ops: func(st *state.Store) {
			st.JobModel("a", "m", at(1))
			st.JobModel("b", "m", at(2))
			st.JobModel("c", "m", at(3))
			st.JobIterations("a", 0, "", []float64{1}, 0, at(4))
		},
		want: []string{"a", "c", "z"},
	}, {
		// A finished job goes first, though it was touched last.
		name: "finished first",
		ops: func(st *state.Store) {
			st.JobModel("a", "m", at(1))
			st.JobModel("b", "m", at(2))
			st.JobModel("c", "m", at(3))
			st.JobFinished("c", at(4))
		},
		want: []string{"a", "b", "z"},
	}, {
		// Of two finished jobs the older (b at 5, a at 6) goes.
		name: "older finished",
		ops: func(st *state.Store) {
			st.JobModel("a", "m", at(1))
			st.JobModel("b", "m", at(2))
			st.JobModel("c", "m", at(3))
			st.JobFinished("b", at(5))
			st.JobFinished("a", at(6))
		},
		want: []string{"a", "c", "z"},
	}, {
		// A tie in time: the smaller id goes.
		name: "tie",
		ops: func(st *state.Store) {
			st.JobModel("c", "m", at(1))
			st.JobModel("b", "m", at(1))
			st.JobModel("a", "m", at(2))
		},
		want: []string{"a", "c", "z"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t, state.Config{MaxJobs: 3})
			tt.ops(st)
			st.JobModel("z", "m", at(10))
			if diff := cmp.Diff(tt.want, jobIDs(t, st)); diff != "" {
				t.Errorf("jobs after eviction (-want,+got):\n%s", diff)
			}
			if n := st.Jobs(); n != 3 {
				t.Errorf("Jobs() = %d, want 3", n)
			}
		})
	}
	// A finished job's profile outlives the job.
	st := newStore(t, state.Config{MaxJobs: 1})
	st.JobModel("a", "bert", at(1))
	st.JobIterations("a", -1, "", repeat(2, 8), 0, at(1))
	st.JobFinished("a", at(2))
	st.JobModel("b", "ncf", at(3))
	if diff := cmp.Diff([]string{"b"}, jobIDs(t, st)); diff != "" {
		t.Errorf("jobs (-want,+got):\n%s", diff)
	}
	if p, ok := st.Profile("c", "bert"); !ok || p.Base != 2 {
		t.Errorf("bert's profile after its job was evicted: %+v, %v", p, ok)
	}
}

func TestProfileIterationsCap(t *testing.T) {
	st := newStore(t, state.Config{ProfileIterations: 10})
	// Worker 0: 6 x 1 s then 6 x 2 s; the first 10 are kept: 6 x 1, 4 x 2.
	st.JobIterations("j", 0, "", repeat(1, 6), 0, at(1))
	st.JobIterations("j", 0, "", repeat(2, 6), 3, at(2))
	st.JobIterations("j", 0, "", repeat(9, 6), 1, at(3)) // full: dropped
	// Worker 1: 12 x 1 s, 10 kept.
	st.JobIterations("j", 1, "", repeat(1, 12), 0, at(1))
	// mean = (6 + 8 + 10)/20 = 1.2; slowest per iteration = 6*1 + 4*2 = 14
	// over 10 = 1.4; Straggling = 1.4/1.2 - 1 = 1/6. Base = 1 (the medians
	// are (1+1)/2 and 1). Rel[9][0] = 2/1.2 = 5/3.
	p, ok := st.Profile("j", "")
	if !ok || p.Iterations != 10 || p.Workers != 2 || p.Base != 1 || math.Abs(p.Straggling-1.0/6) > 1e-12 || math.Abs(p.Rel[9][0]-5.0/3) > 1e-12 || math.Abs(p.Rel[5][0]-1/1.2) > 1e-12 {
		t.Errorf("Profile = %+v, %v; want 2 x 10, Base 1, Straggling 1/6, Rel[9][0] 5/3", p, ok)
	}
	// What is kept, in the snapshot: 10 each, the dropped counts summed.
	b, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Jobs []struct {
			Workers []struct {
				Index   int
				Seconds []float64
				Dropped int64
			}
		}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	type w = struct {
		Index   int
		Seconds []float64
		Dropped int64
	}
	want := []w{{0, []float64{1, 1, 1, 1, 1, 1, 2, 2, 2, 2}, 4}, {1, repeat(1, 10), 0}}
	if len(s.Jobs) != 1 {
		t.Fatalf("%d jobs in the snapshot, want 1", len(s.Jobs))
	}
	if diff := cmp.Diff(want, s.Jobs[0].Workers); diff != "" {
		t.Errorf("kept iterations (-want,+got):\n%s", diff)
	}
}

func TestRunning(t *testing.T) {
	st := newStore(t, state.Config{})
	st.JobStarted("a", "m", []string{"n1", "n2"}, at(1), at(1))
	st.JobStarted("b", "m", []string{"n1"}, at(1), at(1))
	st.JobModel("c", "m", at(1)) // placed, not started
	if diff := cmp.Diff(map[string]int{"n1": 2, "n2": 1}, st.Running()); diff != "" {
		t.Errorf("Running (-want,+got):\n%s", diff)
	}
	st.JobFinished("a", at(2))
	if diff := cmp.Diff(map[string]int{"n1": 1}, st.Running()); diff != "" {
		t.Errorf("Running after a finished (-want,+got):\n%s", diff)
	}
	// A restart (Started again) runs it again, on its new nodes; the
	// caller's slice is copied.
	nodes := []string{"n3"}
	st.JobStarted("a", "", nodes, at(3), at(3))
	nodes[0] = "changed"
	if diff := cmp.Diff(map[string]int{"n1": 1, "n3": 1}, st.Running()); diff != "" {
		t.Errorf("Running after a restarted (-want,+got):\n%s", diff)
	}
}

// TestProfileNodeFromStarted: iteration reports without a node take the
// worker's node from Started, whichever comes first.
func TestProfileNodeFromStarted(t *testing.T) {
	for _, startedFirst := range []bool{true, false} {
		st := loadFixture(t, []float64{0.7, 0.9, 1.0}, []float64{0.1, 0.1, 0.1})
		nodes := []string{"n1", "n2", "n3"}
		report := func() {
			for w, x := range []float64{1.0, 1.2, 1.4} {
				st.JobIterations("j", w, "", repeat(x, 8), 0, at(31))
			}
		}
		if startedFirst {
			st.JobStarted("j", "", nodes, at(10), at(10))
			report()
		} else {
			report()
			st.JobStarted("j", "", nodes, at(10), at(31))
		}
		if p, ok := st.Profile("j", ""); !ok || !p.HasCPU || math.Abs(p.CPU-0.4) > 1e-12 {
			t.Errorf("started first %v: Profile %+v, %v; want CPU 0.4", startedFirst, p, ok)
		}
	}
}

func TestRunningJobs(t *testing.T) {
	st := newStore(t, state.Config{})
	st.JobStarted("a", "bert", []string{"n1", "n2"}, at(1), at(1))
	st.JobStarted("b", "", []string{"n1"}, at(2), at(2))
	st.JobModel("b", "ncf", at(3))
	st.JobModel("c", "m", at(1))                          // placed, not started
	st.JobStarted("d", "m", []string{"n3"}, at(1), at(1)) // finished
	st.JobFinished("d", at(2))
	st.JobIterations("e", 0, "n4", []float64{1}, 0, at(1)) // only reported
	want := map[string]state.RunningJob{
		"a": {Model: "bert", Nodes: []string{"n1", "n2"}, Started: at(1)},
		"b": {Model: "ncf", Nodes: []string{"n1"}, Started: at(2)},
	}
	got := st.RunningJobs()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunningJobs (-want,+got):\n%s", diff)
	}
	// The result is a copy.
	got["a"].Nodes[0] = "changed"
	if n := st.RunningJobs()["a"].Nodes[0]; n != "n1" {
		t.Errorf("RunningJobs shares the store's slice: %q", n)
	}
}
