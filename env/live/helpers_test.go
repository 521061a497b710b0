package live_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/live"
	"github.com/drover-sched/drover/env/trace"
)

// simCluster is a simulated cluster seen as a live one: a Source whose
// snapshots copy the simulator's view at each decision point (the time,
// the free GPUs, every node's telemetry through env.Telemetry, the pending
// and running jobs), an Actuator that applies each decision to the
// simulation, and a Rewinder that starts a new simulation of the seed's
// workload and model. Built from the same workload and model as a
// sched.Env, it sees the decision points the sched.Env sees.
type simCluster struct {
	cluster env.Cluster
	jobs    func(seed uint64) []env.JobSpec
	model   func(seed uint64) env.Model
	restart float64

	sim *env.Sim
	tel env.Telemetry
	ids map[string]int
}

func (s *simCluster) Rewind(seed uint64) error {
	m := s.model(seed)
	sim, err := env.New(env.Config{Cluster: s.cluster, Model: m, RestartDelay: s.restart}, s.jobs(seed))
	if err != nil {
		return err
	}
	s.sim, s.tel = sim, m.(env.Telemetry)
	s.ids = map[string]int{}
	for _, j := range sim.Jobs() {
		s.ids[j.Spec.Name] = j.ID
	}
	return nil
}

func (s *simCluster) Snapshot(dst *live.State) error {
	if s.sim == nil {
		return errors.New("simCluster: not rewound")
	}
	v, err := s.sim.Next()
	if err != nil && !errors.Is(err, env.ErrDone) {
		return err
	}
	n := len(s.cluster.Nodes)
	dst.Now, dst.Cluster = s.sim.Now(), s.cluster
	dst.Free, dst.Load = dst.Free[:0], dst.Load[:0]
	dst.Pending, dst.Running = dst.Pending[:0], dst.Running[:0]
	for i := range n {
		if v != nil {
			dst.Free = append(dst.Free, v.Free[i])
		} else {
			dst.Free = append(dst.Free, s.cluster.Nodes[i].GPUs)
		}
		dst.Load = append(dst.Load, s.tel.NodeLoad(i, dst.Now))
	}
	if v == nil {
		return nil // done: no pending job
	}
	for _, j := range v.Active {
		switch j.State {
		case env.Pending:
			dst.Pending = append(dst.Pending, j.Spec)
		case env.Running:
			dst.Running = append(dst.Running, live.Running{Spec: j.Spec, Nodes: j.Alloc, Start: j.FirstStart})
		}
	}
	return nil
}

func (s *simCluster) Apply(d live.Decision) error {
	id, ok := s.ids[d.Job]
	if !ok {
		return fmt.Errorf("simCluster: unknown job %q", d.Job)
	}
	return s.sim.Apply([]env.Decision{{Job: id, Nodes: d.Nodes, Sync: d.Sync, PSRebalance: d.PSRebalance}})
}

// workload is a small training setting under the per-worker model with
// the built-in background and the dedicated regime's jitter, as
// train/direct's settings: 48 Philly-fitted synthetic jobs of up to 16
// GPUs, the one-GPU ones given 1, 2, 4 or 8 GPUs in turn and all
// arriving 10 s apart, so that the queue stays long, on 8 nodes of 4 GPUs
// in 4 racks (nodes 6 and 7 with GPUs at 0.8x speed).
type workload struct {
	cluster env.Cluster
	jobs    func(seed uint64) []env.JobSpec
	model   func(seed uint64) env.Model
}

var (
	setupOnce sync.Once
	setup     workload
	setupErr  error
)

func newWorkload(t testing.TB) workload {
	t.Helper()
	setupOnce.Do(func() {
		c := env.Homogeneous(8, 4)
		for i := range c.Nodes {
			c.Nodes[i].Rack = i / 2
		}
		c.Nodes[6].Speed, c.Nodes[7].Speed = 0.8, 0.8
		prof, _, err := trace.Profiles("builtin", "")
		if err != nil {
			setupErr = err
			return
		}
		ref, err := trace.Stragglers{Regime: trace.RegimeDedicated}.NewReference(len(c.Nodes))
		if err != nil {
			setupErr = err
			return
		}
		p := datasets.DefaultParams()
		p.MaxGPUs = 16
		setup = workload{
			cluster: c,
			jobs: func(seed uint64) []env.JobSpec {
				specs := trace.Specs(datasets.Synthetic(p, 48, rand.NewPCG(seed, seed)))
				for i := range specs {
					specs[i].Submit = 10 * float64(i)
					if specs[i].GPUs == 1 {
						specs[i].GPUs = 1 << (i % 4)
					}
				}
				return specs
			},
			model: func(seed uint64) env.Model {
				w, err := trace.Stragglers{Seed: seed, Regime: trace.RegimeDedicated, Reference: ref}.Workers(len(c.Nodes))
				if err != nil {
					panic(err)
				}
				return &env.Drover{Profiles: prof, Workers: w}
			},
		}
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return setup
}

func (w workload) simCluster() *simCluster {
	return &simCluster{cluster: w.cluster, jobs: w.jobs, model: w.model, restart: env.DefaultRestartDelay}
}

// script is a Source that returns its states in turn, then an error.
type script struct {
	states []live.State
	next   int
}

var errScriptEnd = errors.New("script: no more states")

func (s *script) Snapshot(dst *live.State) error {
	if s.next >= len(s.states) {
		return errScriptEnd
	}
	*dst = s.states[s.next]
	s.next++
	return nil
}

// recorder is an Actuator that records the decisions, refusing those of
// the job named refuse.
type recorder struct {
	got    []live.Decision
	refuse string
}

var errRefused = errors.New("recorder: refused")

func (r *recorder) Apply(d live.Decision) error {
	if d.Job == r.refuse {
		return errRefused
	}
	r.got = append(r.got, d)
	return nil
}

// randomValid picks uniformly among the valid actions of mask.
func randomValid(rng *rand.Rand, mask []bool) int {
	var valid []int
	for a, ok := range mask {
		if ok {
			valid = append(valid, a)
		}
	}
	return valid[rng.IntN(len(valid))]
}
