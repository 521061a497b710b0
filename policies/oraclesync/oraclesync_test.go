package oraclesync_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/oraclesync"
)

// flat is a profile worked by hand: 1 s of compute per iteration, plus
// 0.5 s of all-reduce per node beyond the first. An 8-GPU job on two
// 4-GPU nodes so has its reference (packed) iteration at 1.5 s, a 4-GPU
// job on one node at 1 s.
var flat = envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 100, Epochs: 2}

// persistent is a jitter process worked by hand: worker 0 is always 3x
// slower, the others run at 1.
type persistent struct{}

func (persistent) Next(dst []float64) {
	for i := range dst {
		dst[i] = 1
	}
	dst[0] = 3
}

// scenario is one job of 1000 reference seconds on two 4-GPU nodes,
// placed by first-fit, under the per-worker model.
type scenario struct {
	gpus   int
	cpu0   float64 // node 0's CPU background
	sens   env.Sensitivity
	jitter bool // persistent straggler
}

// run simulates the scenario under policy name and returns the sync the
// job ran with and its time to accuracy.
func (s scenario) run(t *testing.T, name string) (env.Sync, float64) {
	t.Helper()
	w := &env.Workers{
		Background:    envtest.Background{Loads: map[int]env.Usage{0: {CPU: s.cpu0}}},
		Sensitivities: map[string]env.Sensitivity{envtest.FlatName: s.sens},
	}
	if s.jitter {
		w.NewJitter = func(int, rand.Source) env.Jitter { return persistent{} }
	}
	m := &env.Drover{Profiles: envtest.Profiles(flat), GPUsPerNode: 4, Workers: w}
	sim, err := env.New(env.Config{Cluster: env.Homogeneous(2, 4), Model: m},
		[]env.JobSpec{envtest.MakeJob("a").GPUs(s.gpus).Duration(1000).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := builtin.Registry().New(name, policies.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Run(p, nil); err != nil {
		t.Fatal(err)
	}
	return sim.Jobs()[0].Sync, sim.Summary().AvgTTA
}

// TestOracleBeatsFixed checks, on single jobs worked by hand, that the
// oracle picks the strategy of least time to accuracy and that no fixed
// strategy of DefaultSyncs does better in the simulator. The time to
// accuracy is 1000 s x (iteration time / reference iteration time) x the
// convergence model's iterations to target. The flat profile's model is
// measured by no source, so it takes env.FallbackFamilies: staleness
// costs ResNet32 on CIFAR-10's fitted 1 + Slowdown x sbar (sbar = w-1 for
// ASP, min(3, w-1) for SSP(3); Slowdown 0.436, so ASP on 8 workers needs
// 4.05x BSP's iterations) and local SGD(H) reaches the target in BSP's
// iterations (ResNet50 on ImageNet ends 0.09 points lower per step of H,
// well above the target).
func TestOracleBeatsFixed(t *testing.T) {
	slow := converge.Default().Families[env.FallbackFamilies.Staleness].Staleness.Slowdown.Value
	asp := func(w float64) float64 { return 1 + slow*(w-1) }
	tests := []struct {
		name     string
		s        scenario
		wantSync string
		wantTTA  float64
	}{
		{
			// Every strategy iterates at 1 s: BSP and local SGD tie at
			// 1000 s (no all-reduce on one node), the others cost more.
			name: "no straggler: bsp", s: scenario{gpus: 4},
			wantSync: "bsp", wantTTA: 1000,
		},
		{
			// Compute [3, 1, 1, 1] s every iteration: BSP, SSP and local
			// SGD wait for worker 0 (3 s, 3000 s); ASP does 4 updates per
			// 1/3 + 3 updates per second: 1.2 s, x (1 + 3 Slowdown) =
			// 2.31: 2770 s.
			name: "persistent straggler: asp", s: scenario{gpus: 4, jitter: true},
			wantSync: "asp", wantTTA: 1000 * 1.2 * asp(4),
		},
		{
			// 1 s compute + 0.5 s all-reduce. BSP 1.5 s (1000 s); ASP
			// 1.5 x 4.05; SSP(3) 1.5 x 2.31; local(H) 1 + 0.5/H at BSP's
			// iterations: local(4) 1.125 s (750 s), local(8) 1.0625 s
			// (708.3 s), local(16) 1.03125 s (687.5 s).
			name: "communication-bound: local(16)", s: scenario{gpus: 8},
			wantSync: "local(16)", wantTTA: 1000 * 1.03125 / 1.5,
		},
		{
			// Node 0's CPU at 0.9 plus 4 workers x 1/16 = 1.15: overload
			// (1.15-0.8)/0.2 = 1.75, so its workers compute 2.75 s; node
			// 1's run at 1 s. BSP 3.25 s; SSP(3) 3.25 x 2.31; local(16)
			// 2.75 + 0.5/16 = 2.78125 s (1854.2 s); ASP 8 / (4/3.25 +
			// 4/1.5) = 2.0526 s x 4.05 = 8.31 s.
			name: "one loaded node: local(16)", s: scenario{gpus: 8, cpu0: 0.9, sens: env.Sensitivity{CPU: 1}},
			wantSync: "local(16)", wantTTA: 1000 * (2.75 + 0.5/16) / 1.5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sync, tta := tt.s.run(t, "first-fit+oracle-sync")
			if sync.String() != tt.wantSync || math.Abs(tta-tt.wantTTA) > 1e-6*tt.wantTTA {
				t.Errorf("oracle: %v, TTA %.4f s; want %s, %.4f s", sync, tta, tt.wantSync, tt.wantTTA)
			}
			for _, fixed := range oraclesync.DefaultSyncs {
				if _, f := tt.s.run(t, "first-fit+"+fixed.String()); !(tta <= f*(1+1e-12)) {
					t.Errorf("first-fit+%v: TTA %.4f s < the oracle's %.4f s", fixed, f, tta)
				}
			}
		})
	}
}

func TestCombine(t *testing.T) {
	tests := []struct {
		name string
		s    env.Sync
		take []int
		per  []float64
		want float64
	}{
		{"bsp waits for the slowest node", env.Sync{}, []int{4, 4}, []float64{3.25, 1.5}, 3.25},
		{"ssp too", env.Sync{Kind: env.SSP, Staleness: 3}, []int{2, 6}, []float64{1, 2}, 2},
		{"local sgd too", env.Sync{Kind: env.LocalSGD, Period: 8}, []int{1, 1}, []float64{4, 2}, 4},
		// 2 workers at 1 update/s and 6 at 1/3: 8 / (2 + 2) = 2 s.
		{"asp: harmonic, weighted by workers", env.Sync{Kind: env.ASP}, []int{2, 6}, []float64{1, 3}, 2},
		{"unusable probe", env.Sync{}, []int{1}, []float64{math.NaN()}, math.NaN()},
		{"zero probe", env.Sync{Kind: env.ASP}, []int{1, 1}, []float64{1, 0}, math.NaN()},
		{"no nodes", env.Sync{}, nil, nil, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oraclesync.Combine(tt.s, tt.take, tt.per)
			if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
				t.Errorf("Combine = %v, want %v", got, tt.want)
			}
		})
	}
}

// spiky is a random jitter process: every iteration one worker (drawn
// from src) is 3x slower.
type spiky struct{ r *rand.Rand }

func (s spiky) Next(dst []float64) {
	for i := range dst {
		dst[i] = 1
	}
	dst[s.r.IntN(len(dst))] = 3
}

// TestExpectedNaive checks Expected, which probes only the undominated
// nodes for the strategies that wait for the slowest, against probing
// every node, on random loads and speeds: the same bits.
func TestExpectedNaive(t *testing.T) {
	w := &env.Workers{
		Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1, MemBW: 0.5, Net: 0.6}},
		NewJitter:     func(_ int, src rand.Source) env.Jitter { return spiky{rand.New(src)} },
	}
	m := &env.Drover{Profiles: envtest.Profiles(flat), GPUsPerNode: 4, Workers: w}
	sim, err := env.New(env.Config{Cluster: env.Homogeneous(6, 4), Model: m},
		[]env.JobSpec{envtest.MakeJob("a").GPUs(20).Duration(1000).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sim.Next()
	if err != nil {
		t.Fatal(err)
	}
	j := v.Active[0]
	r := rand.New(rand.NewPCG(1, 1))
	take := []int{4, 4, 4, 4, 2, 2}
	for trial := range 50 {
		loads := make([]env.Usage, len(take))
		speeds := make([]float64, len(take))
		for k := range loads {
			// Coarse values, so that ties and dominated nodes are common.
			loads[k] = env.Usage{CPU: float64(r.IntN(4)) * 0.3, MemBW: float64(r.IntN(3)) * 0.4, Net: float64(r.IntN(3)) * 0.3}
			speeds[k] = []float64{0, 1, 0.5}[r.IntN(3)]
		}
		for _, s := range oraclesync.DefaultSyncs {
			job := *j
			job.Sync = s
			per := make([]float64, len(take))
			for k := range take {
				per[k] = m.Probe(&job, take, loads[k], true)
				if speeds[k] > 0 {
					per[k] /= speeds[k]
				}
			}
			want := oraclesync.Combine(s, take, per) * env.Believed(m).Factor(j.Spec.Model, s, 20)
			if got := oraclesync.Expected(m, j, s, take, loads, speeds); got != want {
				t.Fatalf("trial %d, %v: Expected = %v, probing every node %v (loads %v, speeds %v)", trial, s, got, want, loads, speeds)
			}
		}
	}
}

// plain hides the model's optional interfaces (Prober, Telemetry).
type plain struct{ env.Model }

// TestNoProber: a model that cannot probe gets BSP for every job.
func TestNoProber(t *testing.T) {
	m := plain{&env.Drover{Profiles: envtest.Profiles(flat), GPUsPerNode: 4}}
	sim, err := env.New(env.Config{Cluster: env.Homogeneous(2, 4), Model: m},
		[]env.JobSpec{envtest.MakeJob("a").GPUs(8).Duration(1000).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sim.Next()
	if err != nil {
		t.Fatal(err)
	}
	ds := []env.Decision{{Job: 0, Nodes: []int{0, 0, 0, 0, 1, 1, 1, 1}, Sync: env.Sync{Kind: env.ASP}}}
	if err := (&oraclesync.Oracle{}).Assign(v, ds); err != nil {
		t.Fatal(err)
	}
	if ds[0].Sync != (env.Sync{}) {
		t.Errorf("sync = %v, want bsp", ds[0].Sync)
	}
}
