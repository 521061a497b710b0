package live_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/live"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/policies/direct"
)

// bitsEqual reports whether a and b hold the same float64 bit patterns.
func bitsEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestSameAsSched is the "same spaces" guarantee: a live.Env whose source
// copies a simulation's views (simCluster) gives, step for step, the
// observation, the mask and the reward that sched.Env gives over the same
// workload, model and actions, bit for bit, until the live episode ends
// at the first snapshot with no pending job (sched.Env goes on to the
// next arrival there). Actions are drawn at random among the valid ones,
// or are the shipped sas-rl checkpoint's greedy choices.
func TestSameAsSched(t *testing.T) {
	w := newWorkload(t)
	m, nets, err := checkpoints.Load(filepath.Join("..", "..", "checkpoints", direct.SASRL))
	if err != nil {
		t.Fatal(err)
	}
	sasRL, err := direct.ConfigOf(m)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cfg   sched.Config
		wait  float64
		actor direct.Actor // nil: random valid actions
	}{
		{name: "strn-rl: rack groups", cfg: sched.Config{Grouping: sched.GroupRack}},
		{name: "sas-rl: load groups, PS rebalance", cfg: sched.Config{Grouping: sched.GroupLoad, PSRebalance: true}},
		{name: "hold, 3 load groups, read budget 3, wait weight", cfg: sched.Config{Grouping: sched.GroupLoad, Groups: 3, Hold: true, HoldLimit: 1800, ReadBudget: 3, Refresh: 120}, wait: 0.5},
		{name: "sas-rl checkpoint", cfg: sasRL, actor: direct.Greedy(nets["actor"])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se, err := sched.NewEnv(sched.EnvConfig{Encoder: tt.cfg, NewJobs: w.jobs, Cluster: w.cluster, NewModel: w.model,
				RestartDelay: env.DefaultRestartDelay, WaitWeight: tt.wait})
			if err != nil {
				t.Fatal(err)
			}
			sc := w.simCluster()
			le, err := live.New(live.Config{Encoder: tt.cfg, WaitWeight: tt.wait, MaxIdle: math.MaxInt}, sc, sc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(se.ObservationSpace(), le.ObservationSpace()); diff != "" {
				t.Fatalf("observation space (-sched,+live):\n%s", diff)
			}
			if se.ActionSpace() != le.ActionSpace() {
				t.Fatalf("action space %v, sched's %v", le.ActionSpace(), se.ActionSpace())
			}
			for seed := uint64(1); seed <= 2; seed++ {
				so, _ := se.Reset(seed)
				lo, _ := le.Reset(seed)
				rng := rand.New(rand.NewPCG(seed, 7))
				steps, holds := 0, 0
				for {
					if !bitsEqual(so, lo) {
						t.Fatalf("seed %d, step %d, job %s at %v s: observation\n%v\nsched's\n%v", seed, steps, le.Job().Spec.Name, le.View().Now, lo, so)
					}
					sm, lm := se.ActionMask(nil), le.ActionMask(nil)
					if !slices.Equal(sm, lm) {
						t.Fatalf("seed %d, step %d: mask %v, sched's %v", seed, steps, lm, sm)
					}
					if se.Job().Spec != le.Job().Spec {
						t.Fatalf("seed %d, step %d: deciding %+v, sched %+v", seed, steps, le.Job().Spec, se.Job().Spec)
					}
					a := randomValid(rng, sm)
					if tt.actor != nil {
						a = tt.actor(slices.Clone(so), sm)
					}
					if a == se.Encoder().Hold() {
						holds++
					}
					var sr, lr float64
					var sterm, lterm, ltrunc bool
					so, sr, sterm, _, _ = se.Step(a)
					lo, lr, lterm, ltrunc, _ = le.Step(a)
					steps++
					if ltrunc || le.Err() != nil {
						t.Fatalf("seed %d, step %d: truncated, error %v", seed, steps, le.Err())
					}
					if lterm {
						break
					}
					if math.Float64bits(sr) != math.Float64bits(lr) || sterm {
						t.Fatalf("seed %d, step %d: reward %v, sched's %v (sched terminated %v)", seed, steps, lr, sr, sterm)
					}
				}
				t.Logf("seed %d: %d steps (%d holds) identical", seed, steps, holds)
				if steps < 30 || (tt.cfg.Hold && holds == 0) {
					t.Errorf("seed %d: %d steps (%d holds) before the queue emptied: want 30 or more (and holds)", seed, steps, holds)
				}
			}
		})
	}
}

// TestFirstDecisionPoint copies the first decision point of a simulation
// into a State by hand (the view's time, free GPUs, telemetry and jobs)
// and checks that a fresh live.Env observes and masks its first job as
// sched.Env does.
func TestFirstDecisionPoint(t *testing.T) {
	w := newWorkload(t)
	for _, grouping := range []string{sched.GroupRack, sched.GroupLoad} {
		cfg := sched.Config{Grouping: grouping}
		se, err := sched.NewEnv(sched.EnvConfig{Encoder: cfg, NewJobs: w.jobs, Cluster: w.cluster, NewModel: w.model})
		if err != nil {
			t.Fatal(err)
		}
		so, _ := se.Reset(3)
		v := se.View()
		st := live.State{Now: v.Now, Cluster: *v.Cluster, Free: slices.Clone(v.Free)}
		for i := range v.Cluster.Nodes {
			st.Load = append(st.Load, v.Model.(env.Telemetry).NodeLoad(i, v.Now))
		}
		for _, j := range v.Active {
			if j.State == env.Pending {
				st.Pending = append(st.Pending, j.Spec)
			}
		}
		le, err := live.New(live.Config{Encoder: cfg}, &script{states: []live.State{st}}, &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := le.Reset(0)
		if !bitsEqual(so, lo) {
			t.Errorf("%s: observation\n%v\nsched's\n%v", grouping, lo, so)
		}
		if sm, lm := se.ActionMask(nil), le.ActionMask(nil); !slices.Equal(sm, lm) {
			t.Errorf("%s: mask %v, sched's %v", grouping, lm, sm)
		}
	}
}

// TestGymCheck runs gym's contract checker on live.Env over a simulated
// cluster, with random valid actions, across several episodes.
func TestGymCheck(t *testing.T) {
	w := newWorkload(t)
	for _, cfg := range []sched.Config{{Grouping: sched.GroupRack}, {Grouping: sched.GroupLoad, Hold: true}} {
		mk := func() gym.Env {
			sc := w.simCluster()
			e, err := live.New(live.Config{Encoder: cfg, Horizon: 4 * 3600}, sc, sc)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		if err := gym.Check(mk, 1, 300, nil); err != nil {
			t.Errorf("%s grouping: %v", cfg.Grouping, err)
		}
	}
}

// state2x4 is a valid snapshot of 2 nodes of 4 GPUs (one rack): job r0
// runs on node 0's 4 GPUs; p (2 GPUs, submitted at 900 s) and q (8 GPUs)
// wait; the time is 1000 s.
func state2x4() live.State {
	c := env.Homogeneous(2, 4)
	return live.State{
		Now: 1000, Cluster: c, Free: []int{0, 4},
		Load:    []env.Usage{{CPU: 0.5, MemBW: 0.3, Net: 0.1}, {CPU: 0.1}},
		Pending: []env.JobSpec{{Name: "q", Submit: 950, GPUs: 8, Model: "bert"}, {Name: "p", Submit: 900, GPUs: 2, Model: "cifar10"}},
		Running: []live.Running{{Spec: env.JobSpec{Name: "r0", Submit: 100, GPUs: 4, Model: "ncf"}, Nodes: []int{0, 0, 0, 0}, Start: 200}},
	}
}

// TestReward works a short episode by hand. At 1000 s, r0 runs and p, q
// wait; p fits (2 GPUs on node 1), q does not (8 GPUs). Placing p leaves
// 2 jobs running and q pending until the next snapshot at 2800 s: with
// wait weight 0.5 the reward is -(2 + 0.5 x 1) x 1800 s / 3600 = -1.25.
// At 2800 s the queue is empty: the episode terminates.
func TestReward(t *testing.T) {
	s1 := state2x4()
	s2 := state2x4()
	s2.Now, s2.Pending, s2.Free = 2800, nil, []int{0, 2}
	s2.Running = append(s2.Running, live.Running{Spec: s1.Pending[1], Nodes: []int{1, 1}, Start: 1000})
	rec := &recorder{}
	e, err := live.New(live.Config{WaitWeight: 0.5}, &script{states: []live.State{s1, s2}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	e.Reset(0)
	if j := e.Job(); j == nil || j.Spec.Name != "p" {
		t.Fatalf("deciding %v, want p (q does not fit: backfilling)", j)
	}
	mask := e.ActionMask(nil)
	a := slices.Index(mask, true) // slot 0 (the rack), BSP
	obs, r, term, trunc, _ := e.Step(a)
	if r != -1.25 || !term || trunc || e.Err() != nil || e.Job() != nil {
		t.Errorf("reward %v, terminated %v, truncated %v, error %v: want -1.25, terminated", r, term, trunc, e.Err())
	}
	if slices.ContainsFunc(obs, func(x float64) bool { return x != 0 }) {
		t.Errorf("terminal observation %v, want zeros", obs)
	}
	want := []live.Decision{{Job: "p", Nodes: []int{1, 1}}}
	if diff := cmp.Diff(want, rec.got); diff != "" {
		t.Errorf("decisions (-want,+got):\n%s", diff)
	}
	func() {
		defer func() {
			if r := recover(); r != gym.ErrStepAfterEnd {
				t.Errorf("step after the end panicked with %v, want gym.ErrStepAfterEnd", r)
			}
		}()
		e.Step(a)
	}()
}

// TestTruncation: an episode is truncated after MaxIdle snapshots with
// nothing that fits, at the horizon, and when the actuator refuses.
func TestTruncation(t *testing.T) {
	full := state2x4() // p runs on node 1; q, which never fits, waits
	full.Pending, full.Free = full.Pending[:1], []int{0, 2}
	full.Running = append(full.Running, live.Running{Spec: state2x4().Pending[1], Nodes: []int{1, 1}, Start: 1000})
	later := func(s live.State, dt float64) live.State { s.Now += dt; return s }
	tests := []struct {
		name    string
		cfg     live.Config
		states  []live.State
		refuse  string
		reward  float64 // of the first step
		wantErr error
	}{
		// p placed at 1000 s; then 2 idle snapshots (1 allowed): 2
		// running jobs x 2 x 1800 s = 2 hours.
		{name: "idle", cfg: live.Config{MaxIdle: 1}, states: []live.State{state2x4(), later(full, 1800), later(full, 3600)}, reward: -2},
		// The snapshot at 1000 + 3600 s reaches the horizon: 2 x 1 hour.
		{name: "horizon", cfg: live.Config{Horizon: 3600}, states: []live.State{state2x4(), later(state2x4(), 3600)}, reward: -2},
		{name: "refused", states: []live.State{state2x4()}, refuse: "p", wantErr: errRefused},
		{name: "source error", states: []live.State{state2x4()}, reward: 0, wantErr: errScriptEnd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{refuse: tt.refuse}
			e, err := live.New(tt.cfg, &script{states: tt.states}, rec)
			if err != nil {
				t.Fatal(err)
			}
			e.Reset(0)
			_, r, term, trunc, _ := e.Step(slices.Index(e.ActionMask(nil), true))
			if r != tt.reward || term || !trunc || !errors.Is(e.Err(), tt.wantErr) || (tt.wantErr == nil) != (e.Err() == nil) {
				t.Errorf("reward %v, terminated %v, truncated %v, error %v: want %v, truncated, error %v", r, term, trunc, e.Err(), tt.reward, tt.wantErr)
			}
			if tt.refuse != "" && len(rec.got) != 0 {
				t.Errorf("refused decision recorded: %v", rec.got)
			}
		})
	}
}

// TestBadState: a snapshot out of range ends Reset with an error that
// wraps ErrBadState and names the field.
func TestBadState(t *testing.T) {
	tests := []struct {
		name string
		edit func(s *live.State)
		want string
	}{
		{"NaN load", func(s *live.State) { s.Load[1].CPU = math.NaN() }, "load[1].CPU = NaN"},
		{"negative load", func(s *live.State) { s.Load[0].MemBW = -0.1 }, "load[0].MemBW = -0.1"},
		{"infinite load", func(s *live.State) { s.Load[0].Net = math.Inf(1) }, "load[0].Net = +Inf"},
		{"unknown node in a running job", func(s *live.State) { s.Running[0].Nodes[3] = 7 }, "running[0] (job r0): nodes[3] = 7, not a node"},
		{"free > gpus", func(s *live.State) { s.Free[1] = 5 }, "free[1] = 5 GPUs, want 0 to node node-1's 4"},
		{"negative free", func(s *live.State) { s.Free[1] = -1 }, "free[1] = -1"},
		{"free plus running > gpus", func(s *live.State) { s.Free[0] = 1 }, "node 0 (node-0): free[0] = 1 plus 4 running workers exceed its 4 GPUs"},
		{"free per node", func(s *live.State) { s.Free = s.Free[:1] }, "free has 1 entries for 2 nodes"},
		{"load per node", func(s *live.State) { s.Load = nil }, "load has 0 entries for 2 nodes"},
		{"no nodes", func(s *live.State) { s.Cluster.Nodes = nil }, "cluster has no nodes"},
		{"node without GPUs", func(s *live.State) { s.Cluster.Nodes[1].GPUs = 0 }, "cluster.nodes[1] (node-1): GPUs = 0"},
		{"NaN now", func(s *live.State) { s.Now = math.NaN() }, "now = NaN"},
		{"pending without GPUs", func(s *live.State) { s.Pending[1].GPUs = 0 }, "pending[1] (job p): GPUs = 0"},
		{"pending without name", func(s *live.State) { s.Pending[0].Name = "" }, "pending[0]: empty name"},
		{"duplicate id", func(s *live.State) { s.Running[0].Spec.Name = "p" }, "running[0] (job p): name used twice"},
		{"NaN submit", func(s *live.State) { s.Pending[1].Submit = math.NaN() }, "pending[1] (job p): submit = NaN"},
		{"running on no node", func(s *live.State) { s.Running[0].Nodes = nil }, "running[0] (job r0): no nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := state2x4()
			s.Running[0].Nodes = slices.Clone(s.Running[0].Nodes)
			tt.edit(&s)
			e, err := live.New(live.Config{}, &script{states: []live.State{s}}, &recorder{})
			if err != nil {
				t.Fatal(err)
			}
			obs, _ := e.Reset(0)
			err = e.Err()
			if !errors.Is(err, live.ErrBadState) || !strings.Contains(fmt.Sprint(err), tt.want) {
				t.Fatalf("error %v, want ErrBadState naming %q", err, tt.want)
			}
			if e.Job() != nil || slices.ContainsFunc(obs, func(x float64) bool { return x != 0 }) {
				t.Errorf("after a bad snapshot: job %v, observation %v; want none, zeros", e.Job(), obs)
			}
			if m := e.ActionMask(nil); slices.Contains(m, true) {
				t.Errorf("mask %v after a bad snapshot, want none valid", m)
			}
		})
	}
	// Time going back between snapshots.
	s2 := state2x4()
	s2.Now = 999
	e, _ := live.New(live.Config{}, &script{states: []live.State{state2x4(), s2}}, &recorder{})
	e.Reset(0)
	if _, _, _, trunc, _ := e.Step(slices.Index(e.ActionMask(nil), true)); !trunc || !errors.Is(e.Err(), live.ErrBadState) ||
		!strings.Contains(e.Err().Error(), "now = 999 s, before the previous snapshot's 1000 s") {
		t.Errorf("time going back: truncated %v, error %v", trunc, e.Err())
	}
}

// TestNew checks the configuration's validation.
func TestNew(t *testing.T) {
	src, act := &script{}, &recorder{}
	tests := []struct {
		name string
		cfg  live.Config
		src  live.Source
		act  live.Actuator
		want string
	}{
		{"no source", live.Config{}, nil, act, "needs a source"},
		{"no actuator", live.Config{}, src, nil, "needs a source and an actuator"},
		{"bad encoder", live.Config{Encoder: sched.Config{Grouping: "zone"}}, src, act, `grouping "zone"`},
		{"negative wait weight", live.Config{WaitWeight: -1}, src, act, "wait weight = -1"},
		{"NaN horizon", live.Config{Horizon: math.NaN()}, src, act, "horizon = NaN"},
		{"negative max idle", live.Config{MaxIdle: -1}, src, act, "max idle = -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := live.New(tt.cfg, tt.src, tt.act)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	e, err := live.New(live.Config{}, src, act)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Config(); got.MaxIdle != live.DefaultMaxIdle || got.Encoder.Groups != sched.DefaultGroups {
		t.Errorf("defaults %+v", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Step before Reset did not panic")
			}
		}()
		e.Step(0)
	}()
}
