package env_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/envtest"
)

// fallbackStaleness is the staleness fit of the family a model no
// measurement covers takes.
func fallbackStaleness() *converge.StalenessFit {
	return converge.Default().Families[env.FallbackFamilies.Staleness].Staleness
}

// runWorkers replays jobs with the per-worker Drover model over a flat
// profile (1 s steps, no all-reduce) whose CPU sensitivity is 1.
func runWorkers(t *testing.T, c env.Cluster, bg env.Background, sync env.Sync, jobs ...env.JobSpec) *env.Sim {
	t.Helper()
	m := &env.Drover{
		Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
		Workers: &env.Workers{
			Background:    bg,
			Period:        300,
			Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1}},
		},
	}
	return runModel(t, c, m, sync, jobs...)
}

// spreadWith starts every pending job one worker per node, with a sync
// strategy.
type spreadWith struct{ sync env.Sync }

func (p spreadWith) Schedule(v *env.View) ([]env.Decision, error) {
	var ds []env.Decision
	free := append([]int(nil), v.Free...)
	for _, j := range v.Active {
		if j.State != env.Pending {
			continue
		}
		var nodes []int
		for n := 0; n < len(free) && len(nodes) < j.Spec.GPUs; n++ {
			if free[n] > 0 {
				free[n]--
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == j.Spec.GPUs {
			ds = append(ds, env.Decision{Job: j.ID, Nodes: nodes, Sync: p.sync})
		}
	}
	return ds, nil
}

func TestWorkersIdleMatchesJobLevel(t *testing.T) {
	// No load, no jitter: the per-worker model runs the measured duration.
	s := runWorkers(t, env.Homogeneous(1, 4), nil, env.Sync{}, envtest.MakeJob("a").GPUs(1).Duration(100).Obj())
	if got := s.Jobs()[0].JCT(); math.Abs(got-100) > 1e-9 {
		t.Errorf("JCT %v, want 100", got)
	}
}

func TestWorkersCPUOverload(t *testing.T) {
	// Background CPU 0.9 plus the worker's 1/16 of the node: u = 0.9625,
	// overload = (0.9625-0.8)/0.2 = 0.8125, so every step takes 1.8125 s:
	// 100 s of work takes 181.25 s.
	bg := envtest.Background{Loads: map[int]env.Usage{0: {CPU: 0.9}}}
	s := runWorkers(t, env.Homogeneous(1, 4), bg, env.Sync{}, envtest.MakeJob("a").Duration(100).Obj())
	if got := s.Jobs()[0].JCT(); math.Abs(got-181.25) > 1e-9 {
		t.Errorf("JCT %v, want 181.25", got)
	}
}

func TestWorkersStragglerBSPvsASP(t *testing.T) {
	// Two workers on two 1-GPU nodes; node 1's CPU is saturated by
	// background work: u = 1 + 1/16, overload 1.3125, so worker 1 takes
	// 2.3125 s per step against worker 0's 1 s. The median is 1.65625 and
	// 2.3125 > 1.2 x 1.65625: worker 1 straggles in every iteration.
	bg := envtest.Background{Loads: map[int]env.Usage{1: {CPU: 1}}}
	job := envtest.MakeJob("a").GPUs(2).Duration(100).Obj()
	// Under ASP worker 1 iterates at its own pace, so it makes
	// share = (1/2.3125) / (1/2.3125 + 1) = 1/3.3125 = 0.30189 of the
	// updates: a global iteration (2 updates) holds 2 x 0.30189 = 0.60377
	// straggling updates and has one with probability 1 - (1-0.30189)^2
	// = 0.51264.
	aspShare := 1 / 3.3125
	tests := []struct {
		name string
		sync env.Sync
		// BSP waits for worker 1: 2.3125 s per iteration, 231.25 s.
		// ASP: 2 / (1/2.3125 + 1) s per global iteration, times the
		// iterations to target under a staleness of 2-1: the flat
		// profile's model is measured by no source, so it takes the
		// fallback family's fitted 1 + Slowdown x 1.
		want float64
		// Share of iterations with a straggler, stragglers per iteration.
		with, count float64
	}{
		{"bsp", env.Sync{Kind: env.BSP}, 231.25, 1, 1},
		{"asp", env.Sync{Kind: env.ASP}, 100 * 2 / (1/2.3125 + 1) * (1 + fallbackStaleness().Slowdown.Value), 1 - (1-aspShare)*(1-aspShare), 2 * aspShare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := runWorkers(t, env.Homogeneous(2, 1), bg, tt.sync, job)
			j := s.Jobs()[0]
			if math.Abs(j.JCT()-tt.want) > 1e-9 {
				t.Errorf("JCT %v, want %v", j.JCT(), tt.want)
			}
			if j.Iterations <= 0 || math.Abs(j.StragglerIterations/j.Iterations-tt.with) > 1e-9 || math.Abs(j.Stragglers/j.Iterations-tt.count) > 1e-9 {
				t.Errorf("iterations %v, with a straggler %v, stragglers %v: want shares %.5f and %.5f",
					j.Iterations, j.StragglerIterations, j.Stragglers, tt.with, tt.count)
			}
		})
	}
}

func TestWorkersRefreshFollowsLoad(t *testing.T) {
	// The load changes at 300 s (a 300 s step): idle, then CPU 0.9 (slowdown
	// 1.8125). A 1000 s job does 300 s of work by 300, then the remaining
	// 700 s at 1/1.8125: it finishes at 300 + 700 x 1.8125 = 1568.75.
	s := runWorkers(t, env.Homogeneous(1, 1), stepLoad{}, env.Sync{}, envtest.MakeJob("a").Duration(1000).Obj())
	if got := s.Jobs()[0].Finish; math.Abs(got-1568.75) > 1e-9 {
		t.Errorf("finish %v, want 1568.75", got)
	}
}

// stepLoad is idle before 300 s and CPU 0.9 from then on.
type stepLoad struct{}

func (stepLoad) Load(_ int, t float64) env.Usage {
	if t < 300 {
		return env.Usage{}
	}
	return env.Usage{CPU: 0.9}
}
func (stepLoad) Step() float64 { return 300 }

func TestSTRETBatchTuning(t *testing.T) {
	// The straggler case of TestWorkersStragglerBSPvsASP (worker 1 takes
	// 2.3125 s per step against worker 0's 1 s) with STRET: the one-time
	// batch tuning gives each worker a share of the batch inversely
	// proportional to its time, which equalises them at the harmonic
	// pace, 2 / (1 + 1/2.3125) s per iteration; nothing straggles any
	// more, so nothing is withheld: 100 s of work takes 100 x that.
	m := &env.Drover{
		Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
		Workers: &env.Workers{
			Background:    envtest.Background{Loads: map[int]env.Usage{1: {CPU: 1}}},
			Period:        300,
			Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1}},
			STRET:         true,
		},
	}
	s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{envtest.MakeJob("a").GPUs(2).Duration(100).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(spreadWith{}, nil); err != nil {
		t.Fatal(err)
	}
	j := s.Jobs()[0]
	want := 100 * 2 / (1 + 1/2.3125)
	if math.Abs(j.JCT()-want) > 1e-9 {
		t.Errorf("JCT %v, want %v", j.JCT(), want)
	}
	if j.StragglerIterations != 0 {
		t.Errorf("%v iterations with a straggler after tuning, want 0", j.StragglerIterations)
	}
}

// psSpread starts every pending job one worker per node, asking for
// parameter-server rebalancing or not.
type psSpread struct{ rebalance bool }

func (p psSpread) Schedule(v *env.View) ([]env.Decision, error) {
	ds, _ := spreadWith{}.Schedule(v)
	for i := range ds {
		ds[i].PSRebalance = p.rebalance
	}
	return ds, nil
}

func TestPSServerStraggler(t *testing.T) {
	// A PS job, two workers on two 1-GPU nodes and two shards (one per
	// node). The flat profile computes for 1 s per iteration and
	// all-reduces for 0.5 s per extra node; on parameter servers that is
	// 0.5 x psOverRing(2, 2) = 1 s. Node 1's CPU is saturated in the
	// background: u = 1 + 1/16, overload 1.3125, so worker 1 computes for
	// 2.3125 s and the server on node 1 is 2.3125x slower. Even shares
	// wait for it: the exchange takes 2.3125 s and an iteration 2.3125 +
	// 2.3125 = 4.625 s. Shares that follow the servers' speeds finish
	// together: 2 / (1 + 1/2.3125) = 1.396226 s, an iteration of
	// 3.708726 s. Idle nodes: 1 + 1 = 2 s.
	job := envtest.MakeJob("a").GPUs(2).Duration(100).Obj()
	job.Arch, job.PSShards = env.PS, 2
	run := func(bg env.Background, rebalance bool) float64 {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: bg, Period: 300, BurstNoise: -1, // no network burst noise: times are exact
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1}}},
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(psSpread{rebalance}, nil); err != nil {
			t.Fatal(err)
		}
		return s.Jobs()[0].JCT()
	}
	hot := envtest.Background{Loads: map[int]env.Usage{1: {CPU: 1}}}
	idle := run(nil, false)
	even, rebalanced := run(hot, false), run(hot, true)
	slow := 2.3125
	if got, want := even/idle, (slow+slow)/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("even shares: JCT %v / idle %v = %v, want %v", even, idle, got, want)
	}
	if got, want := rebalanced/idle, (slow+2/(1+1/slow))/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("rebalanced shares: JCT %v / idle %v = %v, want %v", rebalanced, idle, got, want)
	}
	if idle != run(nil, true) {
		t.Error("rebalancing changed a job on idle servers")
	}
}

func TestPSTimeFactor(t *testing.T) {
	tests := []struct {
		name      string
		slow      []float64
		rebalance bool
		want      float64
	}{
		{"reference servers", []float64{1, 1, 1}, false, 1},
		{"reference servers, rebalanced", []float64{1, 1, 1}, true, 1},
		{"even shares wait for the slowest", []float64{1, 2}, false, 2},
		{"rebalanced: 2 / (1 + 1/2)", []float64{1, 2}, true, 4.0 / 3},
		{"no servers", nil, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := env.PSTimeFactor(tt.slow, tt.rebalance); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("PSTimeFactor(%v, %v) = %v, want %v", tt.slow, tt.rebalance, got, tt.want)
			}
		})
	}
}

func TestBurstNoiseNeedsCongestion(t *testing.T) {
	// Two workers on two 1-GPU nodes; the flat profile computes for 1 s
	// and all-reduces for 0.5 s across two nodes, all of it
	// bandwidth-bound (Net sensitivity 1). The work is 100 iterations of
	// the packed reference (one node, no all-reduce): 100 s.
	//   - Idle NICs: no queueing, so the default burst noise adds nothing
	//     and an iteration takes exactly 1.5 s: JCT 150 s.
	//   - Node 1's NIC half used in the background: its exchange stretches
	//     to 0.5 / (1 - 0.5) = 1 s, 0.5 s of which is queueing. Without
	//     burst noise an iteration takes 2 s (JCT 200 s); with it, worker
	//     1 adds 0.5 x 0.5 x |z| > 0 in every sampled iteration, so the
	//     job takes longer.
	job := envtest.MakeJob("a").GPUs(2).Duration(100).Obj()
	run := func(bg env.Background, noise float64) float64 {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: bg, Period: 300, BurstNoise: noise,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {Net: 1}}},
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(spreadWith{}, nil); err != nil {
			t.Fatal(err)
		}
		return s.Jobs()[0].JCT()
	}
	if got := run(nil, 0); math.Abs(got-150) > 1e-9 {
		t.Errorf("idle NICs, default burst noise: JCT %v, want 150", got)
	}
	busy := envtest.Background{Loads: map[int]env.Usage{1: {Net: 0.5}}}
	if got := run(busy, -1); math.Abs(got-200) > 1e-9 {
		t.Errorf("busy NIC, no burst noise: JCT %v, want 200", got)
	}
	if got := run(busy, 0); !(got > 200+1e-6) {
		t.Errorf("busy NIC, default burst noise: JCT %v, want > 200", got)
	}
}

// countingJitter counts the iterations the model samples.
type countingJitter struct{ n *int }

func (c countingJitter) Next(dst []float64) {
	*c.n++
	for i := range dst {
		dst[i] = 1
	}
}

func TestWorkersSamplesPerSync(t *testing.T) {
	// One refresh (at placement; the period is longer than the job): BSP
	// and ASP sample one iteration by default, local SGD(H) one averaging
	// window (H, at least MinWindowSamples, at most the probe's 64), SSP
	// the probe's 64 consecutive ones (env.WindowSamples), and an explicit
	// Samples applies to all, with the window strategies' minimum.
	for _, tt := range []struct {
		sync    env.Sync
		samples int
		want    int
	}{
		{env.Sync{Kind: env.BSP}, 0, 1},
		{env.Sync{Kind: env.ASP}, 0, 1},
		{env.Sync{Kind: env.SSP, Staleness: 2}, 0, env.ProbeSamples},
		{env.Sync{Kind: env.LocalSGD, Period: 4}, 0, 4},
		{env.Sync{Kind: env.LocalSGD, Period: 1}, 0, env.MinWindowSamples},
		{env.Sync{Kind: env.LocalSGD, Period: 1000}, 0, env.ProbeSamples},
		{env.Sync{Kind: env.BSP}, 3, 3},
		{env.Sync{Kind: env.SSP, Staleness: 2}, 100, 100},
		{env.Sync{Kind: env.LocalSGD, Period: 4}, 1, 4},
		{env.Sync{Kind: env.LocalSGD, Period: 4}, 6, 6},
	} {
		t.Run(tt.sync.String(), func(t *testing.T) {
			n := 0
			m := &env.Drover{
				Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
				Workers: &env.Workers{
					Period:    1e9,
					Samples:   tt.samples,
					NewJitter: func(int, rand.Source) env.Jitter { return countingJitter{&n} },
				},
			}
			s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{envtest.MakeJob("a").GPUs(2).Duration(100).Obj()})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(spreadWith{tt.sync}, nil); err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("sampled %d iterations, want %d", n, tt.want)
			}
		})
	}
}

// accurate is a Flat profile with validation curves: a job at global batch
// size b ends its training at the metric 0.5 + b/10000.
type accurate struct{ envtest.Flat }

func (accurate) FinalMetric(b int) float64 { return 0.5 + float64(b)/1e4 }

func TestResultsFinalMetric(t *testing.T) {
	// Job a (batch 256, 100 s) finishes at 100 s with 0.5 + 256/10000;
	// job b arrives at 1000 s and has not finished when the results are
	// read, so its metric is NaN; a profile without curves gives NaN.
	jobs := []env.JobSpec{
		envtest.MakeJob("a").Batch(256).Duration(100).Obj(),
		envtest.MakeJob("b").Submit(1000).Duration(100).Obj(),
	}
	for _, tt := range []struct {
		name string
		prof env.Profile
		want float64
	}{
		{"curves", accurate{envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}}, 0.5256},
		{"no curves", envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}, math.NaN()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &env.Drover{Profiles: envtest.Profiles(tt.prof)}
			s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, jobs)
			if err != nil {
				t.Fatal(err)
			}
			p := spreadWith{}
			for s.Finished() == 0 {
				v, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				ds, _ := p.Schedule(v)
				if err := s.Apply(ds); err != nil {
					t.Fatal(err)
				}
			}
			rs := s.Results()
			if got := rs[0].FinalMetric; !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
				t.Errorf("a: final metric %v, want %v", got, tt.want)
			}
			if got := rs[1].FinalMetric; !math.IsNaN(got) {
				t.Errorf("b (not finished): final metric %v, want NaN", got)
			}
		})
	}
}

// runModel replays jobs one worker per node (spreadWith) under m on c.
func runModel(t *testing.T, c env.Cluster, m *env.Drover, sync env.Sync, jobs ...env.JobSpec) *env.Sim {
	t.Helper()
	s, err := env.New(env.Config{Cluster: c, Model: m}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(spreadWith{sync}, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStragglerFreeAndCause(t *testing.T) {
	// Three workers on three 1-GPU nodes of one rack, BSP; the flat
	// profile computes for 1 s and all-reduces for 0.5 s across them
	// (0.5 x (3-1) = 1 s: Flat's sync grows by Sync per extra node), all
	// of it bandwidth-bound (Net sensitivity 1), and its CPU sensitivity is
	// 1. The work is 100 iterations of the packed reference (one node, no
	// all-reduce): 100 s. No burst noise, no jitter.
	job := envtest.MakeJob("a").GPUs(3).Duration(100).Obj()
	tests := []struct {
		name string
		bg   env.Background
		// Per iteration: the BSP time (the slowest compute plus the slowest
		// exchange), the median worker's time, and the delay's split.
		iter, free, comm, compute float64
	}{
		// Nothing slows anyone: every worker takes 1 + 1 s.
		{"idle", nil, 2, 2, 0, 0},
		// Node 2's CPU is saturated: u = 1 + 1/16, overload 1.3125, so
		// worker 2 computes for 2.3125 s. BSP: 2.3125 + 1; the median
		// worker: 1 + 1; the 1.3125 s of delay is all computation.
		{"compute straggler", envtest.Background{Loads: map[int]env.Usage{2: {CPU: 1}}}, 3.3125, 2, 0, 1.3125},
		// Node 2's NIC is half used: its exchange stretches to 1 / 0.5 =
		// 2 s. BSP: 1 + 2; the median worker 1 + 1; 1 s of delay, all
		// communication.
		{"communication straggler", envtest.Background{Loads: map[int]env.Usage{2: {Net: 0.5}}}, 3, 2, 1, 0},
		// Both on node 2: 2.3125 + 2 against 2; the slowest worker exceeds
		// the median one by 1.3125 s in computation and 1 s in its
		// exchange, so the 2.3125 s of delay splits 1.3125 : 1.
		{"both", envtest.Background{Loads: map[int]env.Usage{2: {CPU: 1, Net: 0.5}}}, 4.3125, 2, 1, 1.3125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &env.Drover{
				Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
				Workers: &env.Workers{Background: tt.bg, Period: 300, BurstNoise: -1,
					Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1, Net: 1}}},
			}
			s := runModel(t, env.Homogeneous(3, 1), m, env.Sync{}, job)
			j := s.Jobs()[0]
			const its = 100 // 100 s of work at 1 s per packed iteration
			checks := []struct {
				what      string
				got, want float64
			}{
				{"JCT", j.JCT(), its * tt.iter},
				{"straggler-free time", j.StragglerFree, its * tt.free},
				{"communication delay", j.CommDelay, its * tt.comm},
				{"computation delay", j.ComputeDelay, its * tt.compute},
			}
			for _, c := range checks {
				if math.Abs(c.got-c.want) > 1e-9*max(1, c.want) {
					t.Errorf("%s %v, want %v", c.what, c.got, c.want)
				}
			}
			sum := s.Summary()
			if j.MaxNodes != 3 || sum.MultiNodeJobs != 1 || math.Abs(sum.StragglerInflation-tt.iter/tt.free) > 1e-12 {
				t.Errorf("nodes %d, summary over %d jobs, inflation %v: want 3, 1, %v", j.MaxNodes, sum.MultiNodeJobs, sum.StragglerInflation, tt.iter/tt.free)
			}
		})
	}
}

func TestUplinkContention(t *testing.T) {
	// Two racks of two 1-GPU nodes, 100 Gbit/s within a rack and 25 per
	// node across (a 50 Gbit/s uplink per rack: half a flow at full
	// speed). The profile computes for 1 s and all-reduces for 0.5 s on
	// two nodes, all of it bandwidth-bound; 100 iterations of work.
	c := env.Homogeneous(4, 1)
	c.IntraRackGbps, c.CrossRackGbps = 100, 25
	for i := range c.Nodes {
		c.Nodes[i].Rack = i / 2
	}
	job := envtest.MakeJob("a").GPUs(2).Duration(100).Obj()
	run := func(c env.Cluster, nodes []int) float64 {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Period: 300, BurstNoise: -1,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {Net: 1}}},
		}
		s, err := env.New(env.Config{Cluster: c, Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(fixed{nodes}, nil); err != nil {
			t.Fatal(err)
		}
		return s.Jobs()[0].JCT()
	}
	// Within rack 0: 1 + 0.5 s per iteration.
	if got := run(c, []int{0, 1}); math.Abs(got-150) > 1e-9 {
		t.Errorf("one rack: JCT %v, want 150", got)
	}
	// Across racks: each hop is alone on an uplink that carries half a
	// flow at full speed, so it runs at half speed: 1 + 0.5 x 2 s.
	if got := run(c, []int{0, 2}); math.Abs(got-200) > 1e-9 {
		t.Errorf("two racks, 25 Gbit/s per node: JCT %v, want 200", got)
	}
	// With 50 Gbit/s per node the uplink carries a whole flow: a lone
	// crossing hop runs at the intra-rack speed.
	c.CrossRackGbps = 50
	if got := run(c, []int{0, 2}); math.Abs(got-150) > 1e-9 {
		t.Errorf("two racks, 50 Gbit/s per node: JCT %v, want 150", got)
	}
}

// fixed places every pending job on nodes.
type fixed struct{ nodes []int }

func (p fixed) Schedule(v *env.View) ([]env.Decision, error) {
	var ds []env.Decision
	for _, j := range v.Active {
		if j.State == env.Pending {
			ds = append(ds, env.Decision{Job: j.ID, Nodes: p.nodes})
		}
	}
	return ds, nil
}

func TestReferenceReproducesMeasuredTime(t *testing.T) {
	// Under the reference conditions the per-worker model takes the
	// measured time: one 2-worker job packed on one of the two 2-GPU nodes
	// (the reference placement), the node full, CPU background 0.8 (with
	// two workers' 1/8: overload 0.625, so the compute stretches 1.625x
	// without the reference); no jitter, so the reference is exact.
	job := envtest.MakeJob("a").GPUs(2).Duration(100).Obj()
	load := env.Usage{CPU: 0.8}
	for _, ref := range []bool{false, true} {
		m := &env.Drover{
			GPUsPerNode: 2,
			Profiles:    envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: envtest.Background{Loads: map[int]env.Usage{0: load, 1: load}}, Period: 300, BurstNoise: -1,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1}}},
		}
		want := 162.5
		if ref {
			m.Workers.Reference = &env.Reference{Loads: []env.Usage{load}}
			want = 100
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 2), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(fixed{[]int{0, 0}}, nil); err != nil {
			t.Fatal(err)
		}
		if got := s.Jobs()[0].JCT(); math.Abs(got-want) > 1e-9 {
			t.Errorf("reference %v: JCT %v, want %v", ref, got, want)
		}
	}
}

func TestReferenceWithJitterOnAverage(t *testing.T) {
	// With a jitter process the reference is a Monte Carlo mean: two
	// hundred 4-worker jobs, each alone on one idle 4-GPU node (the
	// reference placement and conditions), each worker slowed by a factor
	// of its own for the job's life, train for their measured 100 s on
	// average, within the reference's and the jobs' sampling error (the
	// standard error of the jobs' mean is about 0.8 s); without the
	// reference the same jobs run longer (BSP waits for the slowest of
	// four lognormal(0, 0.2) workers: 1.22 x 100 s on average).
	var jobs []env.JobSpec
	for i := range 200 {
		jobs = append(jobs, envtest.MakeJob(fmt.Sprintf("j%d", i)).GPUs(4).Duration(100).Submit(float64(i)*1000).Obj())
	}
	mean := func(ref bool) float64 {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Period: 10, BurstNoise: -1, Seed: 7,
				NewJitter: func(w int, src rand.Source) env.Jitter { return newPersistent(rand.New(src), w, 0.2) }},
		}
		if ref {
			m.Workers.Reference = &env.Reference{Replicates: 4096}
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(1, 4), Model: m}, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(fixed{[]int{0, 0, 0, 0}}, nil); err != nil {
			t.Fatal(err)
		}
		t := 0.0
		for _, r := range s.Results() {
			t += r.TTA
		}
		return t / float64(len(jobs))
	}
	if got := mean(false); !(got > 115) {
		t.Errorf("without the reference: mean TTA %v, want > 115", got)
	}
	if got := mean(true); math.Abs(got-100) > 3 {
		t.Errorf("with the reference: mean TTA %v, want 100 +- 3", got)
	}
}

// persistent is a jitter whose workers keep the lognormal slowdown
// exp(sigma z) they drew first.
type persistent []float64

func newPersistent(r *rand.Rand, w int, sigma float64) persistent {
	p := make(persistent, w)
	for i := range p {
		p[i] = math.Exp(sigma * r.NormFloat64())
	}
	return p
}

func (p persistent) Next(dst []float64) { copy(dst, p) }

func TestPSSlowerSide(t *testing.T) {
	// A push-pull takes the slower side's time, not the product of both:
	// a PS job, two workers on two 1-GPU nodes, two shards (one per node),
	// all of the exchange bandwidth-bound (Net sensitivity 1). Its exchange
	// on parameter servers is 0.5 x psOverRing(2, 2) = 1 s. Node 1's NIC
	// is half used in the background, so both worker 1's link and the
	// server on node 1 run at half speed (2x).
	//   - Even shares: the servers' factor is max(1, 2) = 2, so every
	//     exchange takes max(own link, 2) x 1 s = 2 s and an iteration
	//     1 + 2 = 3 s: 300 s for 100 iterations (the product of worker 1's
	//     link and the servers' factor would give 1 + 4 = 5 s).
	//   - Rebalanced shares: the servers finish together after 2 / (1 +
	//     1/2) = 1.333 s, but worker 1's own link still takes 2 s: the
	//     same 300 s.
	job := envtest.MakeJob("a").GPUs(2).Duration(100).Obj()
	job.Arch, job.PSShards = env.PS, 2
	busy := envtest.Background{Loads: map[int]env.Usage{1: {Net: 0.5}}}
	for _, rebalance := range []bool{false, true} {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: busy, Period: 300, BurstNoise: -1,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {Net: 1}}},
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(psSpread{rebalance}, nil); err != nil {
			t.Fatal(err)
		}
		if got := s.Jobs()[0].JCT(); math.Abs(got-300) > 1e-9 {
			t.Errorf("rebalance %v: JCT %v, want 300", rebalance, got)
		}
	}
}

func TestPSStragglerFree(t *testing.T) {
	// A straggling parameter server is a straggler: the counterfactual
	// serves at the median server's pace. A PS job, three workers on three
	// 1-GPU nodes, three shards (one per node); the flat profile computes
	// for 1 s and exchanges 0.5 x 2 = 1 s across three nodes, 1 x
	// psOverRing(3, 3) = 1.5 s on servers. Node 2's CPU is saturated (u =
	// 1 + 1/16, overload 1.3125, CPU sensitivity 1): worker 2 computes for
	// 2.3125 s and server 2 is 2.3125x slower.
	//   - Even shares wait for server 2: exchanges of 1.5 x 2.3125 =
	//     3.46875 s, iterations of 2.3125 + 3.46875 = 5.78125 s. Without
	//     stragglers, servers at the median pace (1): 1 + 1.5 = 2.5 s. Of
	//     the 3.28125 s of delay, worker 2's compute is 1.3125 and the
	//     exchange's excess 3.46875 - 1.5 = 1.96875.
	//   - Rebalanced shares: 3 / (2 + 1/2.3125) = 1.233333x, exchanges of
	//     1.85 s: 4.1625 s, with 1.3125 s from compute and 0.35 s from the
	//     exchange.
	job := envtest.MakeJob("a").GPUs(3).Duration(100).Obj()
	job.Arch, job.PSShards = env.PS, 3
	hot := envtest.Background{Loads: map[int]env.Usage{2: {CPU: 1}}}
	tests := []struct {
		rebalance                   bool
		iter, free, comm, computeEx float64
	}{
		{false, 5.78125, 2.5, 1.96875, 1.3125},
		{true, 2.3125 + 1.5*3/(2+1/2.3125), 2.5, 1.5*3/(2+1/2.3125) - 1.5, 1.3125},
	}
	for _, tt := range tests {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: hot, Period: 300, BurstNoise: -1,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1}}},
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(3, 1), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(psSpread{tt.rebalance}, nil); err != nil {
			t.Fatal(err)
		}
		j := s.Jobs()[0]
		for _, c := range []struct {
			what      string
			got, want float64
		}{
			{"JCT", j.JCT(), 100 * tt.iter},
			{"straggler-free", j.StragglerFree, 100 * tt.free},
			{"communication delay", j.CommDelay, 100 * tt.comm},
			{"computation delay", j.ComputeDelay, 100 * tt.computeEx},
		} {
			if math.Abs(c.got-c.want) > 1e-9*c.want {
				t.Errorf("rebalance %v: %s %v, want %v", tt.rebalance, c.what, c.got, c.want)
			}
		}
	}
}

func TestReferencePSJob(t *testing.T) {
	// A parameter-server job's reference has its servers: a 4-worker job
	// with 4 shards, packed on two 2-GPU nodes, alone, both nodes at the
	// reference load (CPU 0.8: overloaded with the node's two workers; NIC
	// half used): it takes its measured 100 s. Without the reference its
	// compute stretches 1.625x and its exchange by the servers' and links'
	// contention.
	job := envtest.MakeJob("a").GPUs(4).Duration(100).Obj()
	job.Arch, job.PSShards = env.PS, 4
	load := env.Usage{CPU: 0.8, Net: 0.5}
	for _, ref := range []bool{false, true} {
		m := &env.Drover{
			GPUsPerNode: 2,
			Profiles:    envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: envtest.Background{Loads: map[int]env.Usage{0: load, 1: load}}, Period: 300, BurstNoise: -1,
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1, Net: 1}}},
		}
		if ref {
			m.Workers.Reference = &env.Reference{Loads: []env.Usage{load}}
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 2), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(fixed{[]int{0, 0, 1, 1}}, nil); err != nil {
			t.Fatal(err)
		}
		got := s.Jobs()[0].JCT()
		if ref && math.Abs(got-100) > 1e-9 {
			t.Errorf("with the reference: JCT %v, want 100", got)
		}
		if !ref && !(got > 150) {
			t.Errorf("without the reference: JCT %v, want > 150", got)
		}
	}
}

// alternating is a jitter of two workers that take turns at half speed,
// two iterations each: iterations 0-1 slow worker 0, 2-3 worker 1, and so
// on.
type alternating struct{ k *int }

func (a alternating) Next(dst []float64) {
	slow := (*a.k / 2) % 2
	for i := range dst {
		dst[i] = 1
		if i == slow {
			dst[i] = 2
		}
	}
	*a.k++
}

// TestWindowStrategiesSampleTheProbesWindow: a two-worker job (1 s of
// compute, no exchange) whose workers take turns at half speed, two
// iterations each, runs 1.5 times as long as without the jitter under
// local SGD(16) and SSP(3), as its probe over Drover.Probe's 64 iterations
// says: a 16-iteration window holds 8 slow iterations of each worker (mean
// 1.5 s), and under SSP(3) neither worker gets more than two iterations
// ahead of the other, so the staleness bound never stalls one and each
// runs 32 slow and 32 fast iterations in 96 s, 1.5 s an iteration. A
// refresh used to sample 2 iterations for both, both slow for one worker:
// 2 s an iteration, so a strategy chosen by its probe (oracle-sync, STRN)
// ran a third slower than promised.
func TestWindowStrategiesSampleTheProbesWindow(t *testing.T) {
	for _, sync := range []env.Sync{{Kind: env.LocalSGD, Period: 16}, {Kind: env.SSP, Staleness: 3}} {
		t.Run(sync.String(), func(t *testing.T) {
			jct := func(jitter bool) float64 {
				k := 0
				wk := &env.Workers{Period: 1e9, BurstNoise: -1}
				if jitter {
					wk.NewJitter = func(int, rand.Source) env.Jitter { return alternating{&k} }
				}
				m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, PerEpoch: 1, Epochs: 1}), Workers: wk}
				s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{envtest.MakeJob("a").GPUs(2).Duration(1000).Obj()})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Run(spreadWith{sync}, nil); err != nil {
					t.Fatal(err)
				}
				if jitter {
					// The probe, from the jitter's start, says 1.5 too.
					j := &s.Jobs()[0]
					k = 0
					if r := m.Probe(j, []int{1, 1}, env.Usage{}, true) / m.Probe(j, []int{1, 1}, env.Usage{}, false); math.Abs(r-1.5) > 1e-9 {
						t.Errorf("%v: the probe's iteration time with the jitter is %.6f times without, want 1.5", sync, r)
					}
				}
				return s.Jobs()[0].Finish
			}
			if got := jct(true) / jct(false); math.Abs(got-1.5) > 1e-9 {
				t.Errorf("%v: the jitter stretches the run %.6f times, want 1.5", sync, got)
			}
		})
	}
}
