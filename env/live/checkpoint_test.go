package live_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/live"
	"github.com/drover-sched/drover/policies/direct"
)

// fakeCluster is a Source whose every snapshot is drawn afresh from a
// PCG: 12 nodes of 4 GPUs in racks of 3 (the last rack's GPUs at 0.8x
// speed), node loads that random-walk from one snapshot to the next,
// some GPUs of each node held by a running job, and two pending jobs: a
// 64-GPU job submitted at 0 that never fits (backfilling skips it) and a
// job that fits, of 1 to 16 GPUs, a random model, a parameter-server job
// one time in three. So every snapshot is a decision point of exactly one
// decision. It keeps a copy of each snapshot it served.
type fakeCluster struct {
	rng     *rand.Rand
	cluster env.Cluster
	now     float64
	load    []env.Usage
	served  []live.State
}

var models = []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}

func newFakeCluster(seed uint64) *fakeCluster {
	c := env.Homogeneous(12, 4)
	for i := range c.Nodes {
		c.Nodes[i].Rack = i / 3
		if i >= 9 {
			c.Nodes[i].Speed = 0.8
		}
	}
	f := &fakeCluster{rng: rand.New(rand.NewPCG(seed, 0x6c697665)), cluster: c, now: 3600, load: make([]env.Usage, len(c.Nodes))}
	for i := range f.load {
		f.load[i] = env.Usage{CPU: f.rng.Float64(), MemBW: 0.8 * f.rng.Float64(), Net: 0.5 * f.rng.Float64()}
	}
	return f
}

func (f *fakeCluster) walk(x float64) float64 { return min(1, max(0, x+0.3*(f.rng.Float64()-0.5))) }

func (f *fakeCluster) Snapshot(dst *live.State) error {
	k := len(f.served)
	f.now += 60 + 540*f.rng.Float64()
	s := live.State{Now: f.now, Cluster: f.cluster}
	for i, nd := range f.cluster.Nodes {
		f.load[i] = env.Usage{CPU: f.walk(f.load[i].CPU), MemBW: f.walk(f.load[i].MemBW), Net: f.walk(f.load[i].Net)}
		used := f.rng.IntN(nd.GPUs + 1)
		if i == 0 {
			used = min(used, nd.GPUs-1) // some GPU is free
		}
		s.Free = append(s.Free, nd.GPUs-used)
		if used > 0 {
			s.Running = append(s.Running, live.Running{
				Spec:  env.JobSpec{Name: fmt.Sprintf("r%d-%d", k, i), Submit: f.now - 7200, GPUs: used, Model: models[f.rng.IntN(len(models))]},
				Nodes: slices.Repeat([]int{i}, used), Start: f.now - 3600})
		}
	}
	s.Load = slices.Clone(f.load)
	free := 0
	for _, x := range s.Free {
		free += x
	}
	p := env.JobSpec{Name: fmt.Sprintf("p%d", k), Submit: f.now - 3600*f.rng.Float64(), GPUs: 1 + f.rng.IntN(min(16, free)),
		Model: models[f.rng.IntN(len(models))], Duration: 600 + 36000*f.rng.Float64()}
	if f.rng.IntN(3) == 0 {
		p.Arch, p.PSShards = env.PS, 1
	}
	s.Pending = []env.JobSpec{{Name: "big", GPUs: 64, Model: "bert"}, p}
	f.served = append(f.served, s)
	*dst = s
	return nil
}

// snapActuator records each decision with the snapshot it was taken at.
type snapActuator struct {
	src *fakeCluster
	got [][]live.Decision // per snapshot
}

func (a *snapActuator) Apply(d live.Decision) error {
	k := len(a.src.served) - 1
	for len(a.got) <= k {
		a.got = append(a.got, nil)
	}
	a.got[k] = append(a.got[k], d)
	return nil
}

// tel answers fixed node loads through env.Telemetry.
type tel struct {
	env.Model
	loads []env.Usage
}

func (t tel) NodeLoad(n int, _ float64) env.Usage { return t.loads[n] }

// viewOf builds, independently of live.Env, the env.View of snapshot s
// (on cluster c, which stays the same pointer from one snapshot to the
// next, as a simulation's does).
func viewOf(s live.State, c *env.Cluster) *env.View {
	var jobs []*env.Job
	for _, r := range s.Running {
		jobs = append(jobs, &env.Job{Spec: r.Spec, State: env.Running, Alloc: r.Nodes})
	}
	for _, p := range s.Pending {
		jobs = append(jobs, &env.Job{Spec: p, State: env.Pending})
	}
	slices.SortStableFunc(jobs, func(a, b *env.Job) int {
		switch {
		case a.Spec.Submit < b.Spec.Submit:
			return -1
		case a.Spec.Submit > b.Spec.Submit:
			return 1
		}
		return 0
	})
	for i, j := range jobs {
		j.ID = i
	}
	return &env.View{Now: s.Now, Cluster: c, Free: slices.Clone(s.Free), Active: jobs, Model: tel{loads: s.Load}}
}

// TestCheckpointsRunUnchanged: the shipped strn-rl and sas-rl
// checkpoints, loaded with policies/direct, step live.Env with their
// greedy actor over a fake cluster for 40 decisions, and the decisions
// the Actuator receives are exactly those policies/direct.Policy (the
// deployed form of the same checkpoint) makes on the equivalent
// env.View of each snapshot.
func TestCheckpointsRunUnchanged(t *testing.T) {
	for _, name := range []string{direct.SASRL, direct.STRNRL} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "checkpoints", name)
			m, nets, err := checkpoints.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := direct.ConfigOf(m)
			if err != nil {
				t.Fatal(err)
			}
			_, newPolicy, err := direct.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			src := newFakeCluster(1)
			act := &snapActuator{src: src}
			e, err := live.New(live.Config{Encoder: cfg}, src, act)
			if err != nil {
				t.Fatal(err)
			}
			if e.ObservationSpace().Shape() != m.ObsDim || e.ActionSpace().N != m.Actions {
				t.Fatalf("spaces %d x %d, the checkpoint's %d x %d", e.ObservationSpace().Shape(), e.ActionSpace().N, m.ObsDim, m.Actions)
			}
			actor := direct.Greedy(nets["actor"])
			obs, _ := e.Reset(0)
			var mask []bool
			const decisions = 40
			for range decisions {
				mask = e.ActionMask(mask)
				var term, trunc bool
				obs, _, term, trunc, _ = e.Step(actor(obs, mask))
				if term || trunc {
					t.Fatalf("episode ended (error %v)", e.Err())
				}
			}

			p := newPolicy()
			c := src.cluster
			var want [][]live.Decision
			for k := range decisions {
				v := viewOf(src.served[k], &c)
				ds, err := p.Schedule(v)
				if err != nil {
					t.Fatal(err)
				}
				var got []live.Decision
				for _, d := range ds {
					got = append(got, live.Decision{Job: v.Active[d.Job].Spec.Name, Nodes: d.Nodes, Sync: d.Sync, PSRebalance: d.PSRebalance})
				}
				want = append(want, got)
			}
			if diff := cmp.Diff(want, act.got); diff != "" {
				t.Errorf("decisions per snapshot (-policies/direct,+live):\n%s", diff)
			}
			// The run is not trivial: several slots and strategies.
			slots, syncs := map[string]bool{}, map[env.Sync]bool{}
			for _, ds := range act.got {
				for _, d := range ds {
					slots[fmt.Sprint(slices.Compact(slices.Clone(d.Nodes)))] = true
					syncs[d.Sync] = true
				}
			}
			t.Logf("%d decisions on %d distinct node sets under %d strategies", decisions, len(slots), len(syncs))
			if len(slots) < 5 {
				t.Errorf("%d distinct node sets in %d decisions: the fake cluster does not exercise the policy", len(slots), decisions)
			}
		})
	}
}
