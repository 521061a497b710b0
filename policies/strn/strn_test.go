package strn_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/strn"
)

// flat is a profile worked by hand: 1 s of compute per iteration, plus
// 0.5 s of all-reduce per node beyond the first.
var flat = envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 100, Epochs: 2}

// spiky is a jitter process worked by hand: every iteration one worker
// (drawn from src) is Factor times slower, the others run at 1.
type spiky struct {
	r      *rand.Rand
	factor float64
}

func (s spiky) Next(dst []float64) {
	for i := range dst {
		dst[i] = 1
	}
	dst[s.r.IntN(len(dst))] = s.factor
}

// setup describes a small per-worker Drover run.
type setup struct {
	nodes  int                       // 4-GPU nodes (8 to a rack)
	loads  map[int]env.Usage         // background load by node
	sens   env.Sensitivity           // the flat model's true sensitivity
	spikes float64                   // jitter factor; 0: no jitter
	model  func(env.Model) env.Model // wraps the model (nil: as is)
	conv   *env.Convergence          // the convergence model (nil: the default)
	jobs   []env.JobSpec
}

// bertLike maps the flat profile's model to the BERT fine-tuning family
// for local SGD, whose measured local(H) runs lose no accuracy.
var bertLike = &env.Convergence{Families: map[string]env.Families{envtest.FlatName: {Local: "bert-large-squad"}}}

// view builds the simulation and returns its first decision point.
func (s setup) view(t *testing.T) (*env.Sim, *env.View) {
	t.Helper()
	w := &env.Workers{
		Background:    envtest.Background{Loads: s.loads},
		Sensitivities: map[string]env.Sensitivity{envtest.FlatName: s.sens},
		Convergence:   s.conv,
	}
	if s.spikes > 0 {
		f := s.spikes
		w.NewJitter = func(_ int, src rand.Source) env.Jitter { return spiky{rand.New(src), f} }
	}
	var m env.Model = &env.Drover{Profiles: envtest.Profiles(flat), GPUsPerNode: 4, Workers: w}
	if s.model != nil {
		m = s.model(m)
	}
	sim, err := env.New(env.Config{Cluster: env.Homogeneous(s.nodes, 4), Model: m}, s.jobs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sim.Next()
	if err != nil {
		t.Fatal(err)
	}
	return sim, v
}

// plain hides every optional interface of a model (Telemetry, Prober,
// Dynamic), as a model that cannot report load or probe would.
type plain struct{ env.Model }

func job(name string, gpus int) env.JobSpec {
	return envtest.MakeJob(name).GPUs(gpus).Duration(1000).Obj()
}

func TestPlacement(t *testing.T) {
	blockers := []env.JobSpec{job("b1", 4), job("b2", 4), job("b3", 4), job("b4", 4), job("b5", 4), job("b6", 4), job("b7", 4), job("b8", 2)}
	tests := []struct {
		name  string
		setup setup
		want  map[string][]int // nodes of the jobs checked
	}{
		{
			name:  "cpu-sensitive job avoids the CPU-loaded node",
			setup: setup{nodes: 2, loads: map[int]env.Usage{0: {CPU: 0.9}}, sens: env.Sensitivity{CPU: 1}, jobs: []env.JobSpec{job("a", 2)}},
			want:  map[string][]int{"a": {1, 1}},
		},
		{
			name:  "cpu-insensitive job takes the first node",
			setup: setup{nodes: 2, loads: map[int]env.Usage{0: {CPU: 0.9}}, sens: env.Sensitivity{MemBW: 1, Net: 1}, jobs: []env.JobSpec{job("a", 2)}},
			want:  map[string][]int{"a": {0, 0}},
		},
		{
			name:  "memory-bandwidth-sensitive job avoids the busy memory",
			setup: setup{nodes: 2, loads: map[int]env.Usage{0: {MemBW: 0.85}}, sens: env.Sensitivity{MemBW: 1}, jobs: []env.JobSpec{job("a", 4)}},
			want:  map[string][]int{"a": {1, 1, 1, 1}},
		},
		{
			name:  "insensitive job, idle nodes: first node",
			setup: setup{nodes: 2, jobs: []env.JobSpec{job("a", 1)}},
			want:  map[string][]int{"a": {0}},
		},
		{
			// Both nodes are idle: the best-fit term packs the second job
			// next to the first instead of opening node 1.
			name:  "near-ties pack tightly",
			setup: setup{nodes: 2, sens: env.Sensitivity{CPU: 1}, jobs: []env.JobSpec{job("a", 2), job("b", 1)}},
			want:  map[string][]int{"a": {0, 0}, "b": {0}},
		},
		{
			// Six GPUs need two 4-GPU nodes; nodes 0 and 1 carry heavy
			// NIC background, so a network-sensitive job takes 2 and 3.
			name:  "network-sensitive job spreads over quiet NICs",
			setup: setup{nodes: 4, loads: map[int]env.Usage{0: {Net: 0.9}, 1: {Net: 0.9}}, sens: env.Sensitivity{Net: 1}, jobs: []env.JobSpec{job("a", 6)}},
			want:  map[string][]int{"a": {2, 2, 2, 2, 3, 3}},
		},
		{
			// 16 nodes in two racks of 8. The blockers fill nodes 0-6 and
			// half of node 7 (best fit). A 6-GPU job could take node 7's
			// two GPUs and one node of rack 1 (the whole-cluster greedy
			// pass, which ties node 7 with node 9 and prefers the lower
			// index), but that ring crosses racks; the rack-1 pass wins.
			name: "multi-node job stays in one rack",
			setup: setup{nodes: 16, sens: env.Sensitivity{Net: 1}, jobs: append(blockers[:len(blockers):len(blockers)],
				envtest.MakeJob("a").GPUs(6).Duration(1000).Submit(1).Obj())},
			want: map[string][]int{"b7": {6, 6, 6, 6}, "b8": {7, 7}, "a": {8, 8, 8, 8, 9, 9}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, v := tt.setup.view(t)
			p, err := strn.New(policies.Config{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]int{}
			for placed := 0; placed < len(tt.setup.jobs); {
				ds, err := p.Schedule(v)
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.Apply(ds); err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					if name := tt.setup.jobs[d.Job].Name; tt.want[name] != nil {
						got[name] = d.Nodes
					}
				}
				if placed += len(ds); placed == len(tt.setup.jobs) {
					break
				}
				if v, err = sim.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("placements (-want,+got):\n- %v\n+ %v", tt.want, got)
			}
		})
	}
}

// TestSensitivity checks the probed profile against the flat model worked
// by hand on a 2-GPU job (packed: one node, 1 s compute, no all-reduce):
//
//   - CPU: background 0.95 plus 2 x 1/16 is 1.075, overload 1.375; the
//     compute slows by 1 x 1.375, so 1.375 / 1.375 = 1 per unit.
//   - MemBW: 0.95 + 2 x 0.08 = 1.11, overload 1.55; 0.5 x 1.55 / 1.55 = 0.5.
//   - Net: split over two nodes the iteration is 1 s compute + 0.5 s
//     all-reduce; at NIC background 0.95 the contention is 20 and the
//     all-reduce takes 0.5 x (1 - 0.6 + 0.6 x 20) = 6.2 s, a slowdown of
//     (7.2 - 1.5) / 1.5 = 3.8, or 3.8 / 19 = 0.2 per unit.
//   - Spread: 1.5 s over two nodes against 1 s on one: 0.5.
//   - Straggling: with one worker 3x slower every iteration BSP waits 3 s
//     instead of 1 s: 2.
func TestSensitivity(t *testing.T) {
	tests := []struct {
		name   string
		sens   env.Sensitivity
		spikes float64
		gpus   int
		want   strn.Sensitivity
	}{
		{"mixed", env.Sensitivity{CPU: 1, MemBW: 0.5, Net: 0.6}, 0, 2, strn.Sensitivity{CPU: 1, MemBW: 0.5, Net: 0.2, Spread: 0.5}},
		{"straggling", env.Sensitivity{}, 3, 2, strn.Sensitivity{Spread: 0.5, Straggling: 2}},
		{"one GPU never spreads nor straggles", env.Sensitivity{CPU: 1, Net: 1}, 3, 1, strn.Sensitivity{CPU: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, v := setup{nodes: 2, sens: tt.sens, spikes: tt.spikes, jobs: []env.JobSpec{job("a", tt.gpus)}}.view(t)
			got := (&strn.STRN{}).Sensitivity(v, v.Active[0])
			g := []float64{got.CPU, got.MemBW, got.Net, got.Spread, got.Straggling}
			w := []float64{tt.want.CPU, tt.want.MemBW, tt.want.Net, tt.want.Spread, tt.want.Straggling}
			for i := range g {
				if math.Abs(g[i]-w[i]) > 1e-9 {
					t.Errorf("sensitivity (-want,+got):\n- %+v\n+ %+v", tt.want, got)
					break
				}
			}
		})
	}
}

// TestSync checks the strategy choice. Without jitter every strategy runs
// at BSP's pace at best, so BSP stays. With spiky jitter a strategy that
// tolerates it wins when it keeps accuracy (local SGD for the BERT
// fine-tuning family, whose local SGD runs lost nothing measurable), and
// BSP stays when every other strategy loses accuracy (the fallback
// families: ASP and SSP(3) on 4 workers lose 1.2 points, local SGD(8)
// 0.63).
func TestSync(t *testing.T) {
	tests := []struct {
		name    string
		spikes  float64
		gpus    int
		conv    *env.Convergence
		wantBSP bool
	}{
		{"no jitter keeps BSP", 0, 4, bertLike, true},
		{"straggling-sensitive job leaves BSP for a strategy that keeps accuracy", 3, 4, bertLike, false},
		// The fallback families: every other strategy loses accuracy.
		{"straggling-sensitive job keeps BSP when the others lose accuracy", 3, 4, nil, true},
		{"one GPU keeps BSP", 3, 1, bertLike, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, v := setup{nodes: 2, spikes: tt.spikes, conv: tt.conv, jobs: []env.JobSpec{job("a", tt.gpus)}}.view(t)
			p := &strn.STRN{}
			ds, err := p.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 {
				t.Fatalf("%d decisions, want 1", len(ds))
			}
			got := ds[0].Sync
			if (got.Kind == env.BSP) != tt.wantBSP {
				t.Fatalf("sync = %v, want BSP: %v", got, tt.wantBSP)
			}
			if tt.wantBSP {
				return
			}
			// The choice must beat BSP on expected time-to-accuracy.
			pr := v.Model.(env.Prober)
			j := *v.Active[0]
			placement := env.Placement(ds[0].Nodes)
			bsp := pr.Probe(&j, placement, env.Usage{}, true)
			if math.Abs(bsp-3) > 1e-9 {
				t.Errorf("BSP probe = %v s, want 3 s", bsp)
			}
			j.Sync = got
			if tta := pr.Probe(&j, placement, env.Usage{}, true) * env.Believed(pr).Factor(j.Spec.Model, got, tt.gpus); !(tta < bsp) {
				t.Errorf("%v: time per unit of work %v s, BSP %v s", got, tta, bsp)
			}
		})
	}
}

// TestFallback checks that STRN places like best-fit first-fit with BSP
// when the model reports no load and cannot probe, and when it reports
// idle nodes (the job-level Drover model).
func TestFallback(t *testing.T) {
	// The per-worker Drover model needs the simulator to see it as
	// env.Dynamic, so the hidden model is the job-level one.
	jobLevel := func(m env.Model) env.Model { m.(*env.Drover).Workers = nil; return m }
	hide := func(m env.Model) env.Model { return plain{jobLevel(m)} }
	tests := []struct {
		name  string
		model func(env.Model) env.Model
	}{
		{"no telemetry, no prober", hide},
		{"job-level drover", jobLevel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := setup{nodes: 2, loads: map[int]env.Usage{0: {CPU: 0.9}}, sens: env.Sensitivity{CPU: 1}, spikes: 3, model: tt.model,
				jobs: []env.JobSpec{job("a", 2), job("b", 4)}}
			sim, v := s.view(t)
			p := &strn.STRN{}
			ds, err := p.Schedule(v)
			if err != nil {
				t.Fatal(err)
			}
			want := []env.Decision{{Job: 0, Nodes: []int{0, 0}}, {Job: 1, Nodes: []int{1, 1, 1, 1}}}
			if !reflect.DeepEqual(ds, want) {
				t.Errorf("decisions (-want,+got):\n- %v\n+ %v", want, ds)
			}
			if err := sim.Apply(ds); err != nil {
				t.Fatal(err)
			}
			if err := sim.Run(p, nil); err != nil {
				t.Fatal(err)
			}
			if got := sim.Finished(); got != 2 {
				t.Errorf("%d jobs finished, want 2", got)
			}
		})
	}
	_, v := setup{nodes: 1, model: hide, jobs: []env.JobSpec{job("a", 2)}}.view(t)
	if got := (&strn.STRN{}).Sensitivity(v, v.Active[0]); got != strn.Fallback {
		t.Errorf("sensitivity without a prober = %+v, want Fallback %+v", got, strn.Fallback)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		p    *strn.STRN
	}{
		{"overload above 1", &strn.STRN{Overload: 1.5}},
		{"negative uncertainty", &strn.STRN{Uncertainty: -1}},
		{"negative worker load", &strn.STRN{WorkerCPU: -0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, v := setup{nodes: 1, jobs: []env.JobSpec{job("a", 1)}}.view(t)
			if _, err := tt.p.Schedule(v); !errors.Is(err, strn.ErrConfig) {
				t.Errorf("error = %v, want ErrConfig", err)
			}
		})
	}
}

// runBuiltin replays the built-in workload (16 nodes x 4 GPUs) under STRN
// with the per-worker model.
func runBuiltin(t *testing.T) *trace.Result {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := strn.New(policies.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := trace.Run(trace.Options{
		Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: profiles, Policy: p,
		Nodes: 16, GPUsPerNode: 4, Interval: -1, RestartDelay: -1, Log: true,
		Stragglers: &trace.Stragglers{Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestBuiltinWorkload(t *testing.T) {
	a := runBuiltin(t)
	if a.Summary.Finished != a.Summary.Jobs {
		t.Fatalf("%d of %d jobs finished", a.Summary.Finished, a.Summary.Jobs)
	}
	if a.Summary.Restarts != 0 {
		t.Errorf("%d restarts, want 0: STRN never preempts", a.Summary.Restarts)
	}
	b := runBuiltin(t)
	if la, lb := env.LogString(a.Events, a.Sim.Jobs()), env.LogString(b.Events, b.Sim.Jobs()); la != lb {
		t.Error("two runs with one seed gave different event logs")
	}
	if !reflect.DeepEqual(a.Summary, b.Summary) {
		t.Errorf("summaries differ (-first,+second):\n- %+v\n+ %+v", a.Summary, b.Summary)
	}
}
