package placement_test

import (
	"math"
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/cputime"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

func newEnv(t testing.TB, nodes int, stragglers bool) *placement.Env {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(seed uint64) env.Model {
		m := &env.Drover{Profiles: profiles}
		if stragglers {
			w, err := trace.Stragglers{Seed: seed}.Workers(nodes)
			if err != nil {
				t.Fatal(err)
			}
			m.Workers = w
		}
		return m
	}
	e, err := placement.New(placement.Config{
		Jobs: trace.Specs(datasets.Builtin()), Cluster: env.Homogeneous(nodes, 4), NewModel: mk, RestartDelay: env.DefaultRestartDelay,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// firstValid picks the lowest valid action: pack into the first group that
// fits, else spread.
func firstValid(e *placement.Env) func([]float64, int) int {
	return func([]float64, int) int {
		for a, ok := range e.ActionMask(nil) {
			if ok {
				return a
			}
		}
		return -1
	}
}

func TestReturnIsMinusTotalJCT(t *testing.T) {
	// Little's law: the undiscounted return is minus the integral of the
	// number of jobs in the system, i.e. minus the sum of their JCTs.
	e := newEnv(t, 16, false)
	e.Reset(1)
	pick := firstValid(e)
	ret, steps := 0.0, 0
	for {
		_, r, term, trunc, _ := e.Step(pick(nil, steps))
		ret += r
		steps++
		if term || trunc {
			break
		}
	}
	s := e.Summary()
	want := -s.AvgJCT * float64(s.Jobs) / 3600
	if s.Finished != s.Jobs || math.Abs(ret-want) > 1e-6*math.Abs(want) {
		t.Errorf("return %.6f after %d steps, want -sum(JCT)/3600 = %.6f (%d of %d finished)", ret, steps, want, s.Finished, s.Jobs)
	}
	if steps != s.Jobs {
		t.Errorf("%d steps for %d jobs, want one decision per job", steps, s.Jobs)
	}
}

func TestMaskAndCheck(t *testing.T) {
	e := newEnv(t, 16, true)
	if err := gym.Check(func() gym.Env { return newEnv(t, 16, true) }, 3, 300, nil); err != nil {
		t.Fatal(err)
	}
	obs, _ := e.Reset(1)
	if len(obs) != e.ObservationSpace().Shape() {
		t.Fatalf("obs has %d values, space %d", len(obs), e.ObservationSpace().Shape())
	}
	// Two racks of eight 4-GPU nodes: groups 0 and 1, and spread (2).
	if e.Groups() != 2 || e.ActionSpace().N != 3 {
		t.Fatalf("groups %d, actions %d", e.Groups(), e.ActionSpace().N)
	}
	mask := e.ActionMask(nil)
	if !mask[0] || !mask[1] || !mask[2] {
		t.Errorf("empty cluster: mask %v, want all valid", mask)
	}
}

// BenchmarkStep measures placement decisions per second on 64 nodes x 4
// GPUs (8 racks), the builtin workload, with the lowest valid action:
//
//   - model=job: the job-level model;
//   - model=worker: the per-worker model (background load, jitter, burst
//     noise, the dedicated regime's reference) with one env.Reference for
//     every episode, as drover eval and train/direct share one
//     (trace.Stragglers.NewReference): the step's own cost;
//   - model=worker-fresh-ref: the per-worker model with a new Reference
//     per episode, so each episode also pays the Monte Carlo of its job
//     shapes' reference factors (the first episode's cost with a shared
//     one).
//
// It reports steps per second of wall clock and per second of the
// process's CPU time (the steadier figure on a shared machine; with
// GOMAXPROCS=1 it is one core's rate). Compare two builds with
//
//	GOMAXPROCS=1 taskset -c 1 go test ./env/placement -run '^$' -bench Step -cpu 1 -count 6 >new.txt
//	benchstat old.txt new.txt
func BenchmarkStep(b *testing.B) {
	for _, model := range []string{"job", "worker", "worker-fresh-ref"} {
		b.Run("model="+model, func(b *testing.B) {
			var e *placement.Env
			switch model {
			case "job":
				e = newEnv(b, 64, false)
			case "worker":
				e = newEnvRef(b, 64)
			default:
				e = newEnv(b, 64, true)
			}
			// One episode untimed first: a shared Reference then knows
			// the workload's factors, as in a run past its first episode.
			var obs []float64
			var mask []bool
			for e.Reset(0); ; {
				mask = e.ActionMask(mask)
				var term bool
				if obs, _, term, _, _ = e.StepInto(obs, slices.Index(mask, true)); term {
					break
				}
			}
			e.Reset(1)
			steps, seed := 0, uint64(1)
			b.ReportAllocs()
			cpu0 := cputime.Seconds()
			for b.Loop() {
				// The lowest valid action, as firstValid, without allocating.
				mask = e.ActionMask(mask)
				a := slices.Index(mask, true)
				var term bool
				obs, _, term, _, _ = e.StepInto(obs, a)
				steps++
				if term {
					seed++
					e.Reset(seed)
				}
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(steps)/(cputime.Seconds()-cpu0), "steps/cpu-s")
		})
	}
}

// newEnvRef is newEnv with the per-worker model and one env.Reference
// shared by every episode, as drover eval and train/direct build it.
func newEnvRef(t testing.TB, nodes int) *placement.Env {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := trace.Stragglers{}.NewReference(nodes)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(seed uint64) env.Model {
		w, err := trace.Stragglers{Seed: seed, Reference: ref}.Workers(nodes)
		if err != nil {
			t.Fatal(err)
		}
		return &env.Drover{Profiles: profiles, Workers: w}
	}
	e, err := placement.New(placement.Config{
		Jobs: trace.Specs(datasets.Builtin()), Cluster: env.Homogeneous(nodes, 4), NewModel: mk, RestartDelay: env.DefaultRestartDelay,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newSyncEnv(t testing.TB, nodes int) *placement.Env {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(seed uint64) env.Model {
		w, err := trace.Stragglers{Seed: seed}.Workers(nodes)
		if err != nil {
			t.Fatal(err)
		}
		return &env.Drover{Profiles: profiles, Workers: w}
	}
	e, err := placement.New(placement.Config{
		Jobs: trace.Specs(datasets.Builtin()), Cluster: env.Homogeneous(nodes, 4), NewModel: mk, RestartDelay: env.DefaultRestartDelay, Sync: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSyncEnvAlwaysBSPIsFirstFit(t *testing.T) {
	// Choosing BSP for every job in the sync environment is exactly the
	// first-fit heuristic under the replay driver: same decisions, same
	// summary, with the same per-worker model seed.
	e := newSyncEnv(t, 16)
	got := e.Run(5, func([]float64, []bool) int { return 0 })
	profiles, _, _ := trace.Profiles("builtin", "")
	p, _ := builtin.Registry().New("first-fit", policies.Config{})
	res, err := trace.Run(trace.Options{Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: profiles, Policy: p,
		Nodes: 16, GPUsPerNode: 4, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if got.AvgJCT != res.Summary.AvgJCT || got.StragglerFrac != res.Summary.StragglerFrac {
		t.Errorf("sync env always-BSP: JCT %v straggler %v; first-fit: %v %v", got.AvgJCT, got.StragglerFrac, res.Summary.AvgJCT, res.Summary.StragglerFrac)
	}
	if err := gym.Check(func() gym.Env { return newSyncEnv(t, 16) }, 3, 300, nil); err != nil {
		t.Fatal(err)
	}
}

// With a Proposer, always taking action 0 (the heuristic's own candidate)
// replays the heuristic itself: the episode equals a plain simulation of
// SAS on the same model seed, to the bit; and a Learned policy that
// always picks 0 is the heuristic too.
func TestProposerActionZeroIsTheHeuristic(t *testing.T) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	const nodes = 16
	mk := func(seed uint64) env.Model {
		w, err := trace.Stragglers{Seed: seed}.Workers(nodes)
		if err != nil {
			t.Fatal(err)
		}
		return &env.Drover{Profiles: profiles, Workers: w}
	}
	newSAS := func() env.Proposer {
		p, err := builtin.Registry().New("sas", policies.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return p.(env.Proposer)
	}
	cfg := placement.Config{Jobs: trace.Specs(datasets.Builtin()), Cluster: env.Homogeneous(nodes, 4), NewModel: mk,
		RestartDelay: env.DefaultRestartDelay, NewProposer: newSAS}
	e, err := placement.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := gym.Check(func() gym.Env { e, _ := placement.New(cfg); return e }, 3, 300, nil); err != nil {
		t.Fatal(err)
	}
	plain := func(p policies.Policy) env.Summary {
		s, err := env.New(env.Config{Cluster: cfg.Cluster, Model: mk(7), RestartDelay: cfg.RestartDelay}, cfg.Jobs)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(p, nil); err != nil {
			t.Fatal(err)
		}
		return s.Summary()
	}
	want := plain(newSAS())
	choices := 0
	got := e.Run(7, func(obs []float64, mask []bool) int {
		if len(obs) != e.ObservationSpace().Shape() || !mask[0] {
			t.Fatalf("obs %d (want %d), mask %v", len(obs), e.ObservationSpace().Shape(), mask)
		}
		for _, ok := range mask[1:] {
			if ok {
				choices++
				break
			}
		}
		return 0
	})
	if got != want {
		t.Errorf("action 0 gives %+v, SAS gives %+v", got, want)
	}
	if choices == 0 {
		t.Error("SAS never offered a second candidate: nothing to learn")
	}
	zero := placement.Learned(newSAS, placement.DefaultCandidates, func([]float64, []bool) int { return 0 })
	if l := plain(zero); l != want {
		t.Errorf("Learned(0) gives %+v, SAS gives %+v", l, want)
	}
	// The deployed policy counts its choices as the env offers them, and
	// none of action 0's deviates; always the last candidate always does.
	if d, c := zero.(policies.Deviator).Deviations(); d != 0 || c != choices {
		t.Errorf("Learned(0): %d deviations of %d choices, want 0 of %d", d, c, choices)
	}
	last := placement.Learned(newSAS, placement.DefaultCandidates, func(_ []float64, mask []bool) int {
		a := 0
		for i, ok := range mask {
			if ok {
				a = i
			}
		}
		return a
	})
	plain(last)
	if d, c := last.(policies.Deviator).Deviations(); c == 0 || d != c {
		t.Errorf("Learned(last): %d deviations of %d choices, want all of them", d, c)
	}
}

func TestReturnIsMinusTotalHeldTime(t *testing.T) {
	// With the TTA objective the return is minus the integral of the
	// number of running jobs: minus the GPUs-held time summed over jobs,
	// which is their TTA plus one restart delay per start.
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(uint64) env.Model { return &env.Drover{Profiles: profiles} }
	newSAS := func() env.Proposer {
		p, _ := builtin.Registry().New("sas", policies.Config{})
		return p.(env.Proposer)
	}
	for _, obj := range []string{placement.ObjectiveTTA, placement.ObjectiveTTAFinish} {
		t.Run(obj, func(t *testing.T) { heldReturn(t, mk, newSAS, obj) })
	}
	if _, err := placement.New(placement.Config{Jobs: trace.Specs(datasets.Builtin()), Cluster: env.Homogeneous(16, 4), NewModel: mk, Objective: "makespan"}); err == nil {
		t.Error("unknown objective accepted")
	}
}

func heldReturn(t *testing.T, mk func(uint64) env.Model, newSAS func() env.Proposer, obj string) {
	e, err := placement.New(placement.Config{Jobs: trace.Specs(datasets.Builtin()), Cluster: env.Homogeneous(16, 4), NewModel: mk,
		RestartDelay: env.DefaultRestartDelay, NewProposer: newSAS, Objective: obj})
	if err != nil {
		t.Fatal(err)
	}
	e.Reset(1)
	ret := 0.0
	for {
		mask := e.ActionMask(nil)
		a := 0
		for i := len(mask) - 1; i >= 0; i-- {
			if mask[i] {
				a = i // the heuristic's last choice, to differ from action 0
				break
			}
		}
		_, r, term, trunc, _ := e.Step(a)
		ret += r
		if term || trunc {
			break
		}
	}
	s := e.Summary()
	want := -(s.AvgTTA*float64(s.Finished) + float64(s.Jobs+s.Restarts)*env.DefaultRestartDelay) / 3600
	if s.Finished != s.Jobs || math.Abs(ret-want) > 1e-6*math.Abs(want) {
		t.Errorf("return %.6f, want -sum(held)/3600 = %.6f (%d of %d finished)", ret, want, s.Finished, s.Jobs)
	}
}

// NewJobs gives each episode the workload of its seed.
func TestNewJobsPerEpisode(t *testing.T) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := placement.Config{Cluster: env.Homogeneous(16, 4), NewModel: func(uint64) env.Model { return &env.Drover{Profiles: profiles} },
		NewJobs: func(s uint64) []env.JobSpec { return trace.Specs(datasets.GenerateDefault(s)) }}
	e, err := placement.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s1, s1again, s2 := e.Run(1, placement.FirstValid), e.Run(1, placement.FirstValid), e.Run(2, placement.FirstValid)
	if s1.Jobs != datasets.DefaultJobs || s1 != s1again || s1.AvgJCT == s2.AvgJCT {
		t.Errorf("seed 1 %+v, again %+v, seed 2 %+v: want the default job count, one workload per seed", s1, s1again, s2)
	}
}
