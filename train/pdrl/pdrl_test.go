package pdrl

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies/gate"
	ppdrl "github.com/drover-sched/drover/policies/pdrl"
)

func perf(tb testing.TB) *infer.PerfTable {
	tb.Helper()
	data, err := os.ReadFile(sharedtraces.Path(tb, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	p, err := infer.ParsePerfTable(data)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// trace is 600 s of Poisson arrivals at 3 per second, conv-like lengths.
func trace() []infer.Request {
	rng := rand.New(rand.NewPCG(5, 5))
	var out []infer.Request
	for t := rng.ExpFloat64() / 3; t < 600; t += rng.ExpFloat64() / 3 {
		out = append(out, infer.Request{ID: len(out), Arrival: t, Prompt: 50 + rng.IntN(2000), Output: 5 + rng.IntN(300)})
	}
	return out
}

func smoke(tb testing.TB) Config {
	pc := ppo.DefaultConfig()
	pc.NumEnvs, pc.NumSteps, pc.NumMinibatches, pc.UpdateEpochs, pc.TotalSteps = 2, 100, 2, 2, 200
	return Config{Seed: 3, Deploy: infergym.Deployment(perf(tb)), Trace: trace(), Hidden: []int{16},
		Train: Windows{From: 0, To: 400, Duration: 30, GapLo: 0.5, GapHi: 0.8}, TeacherEpisodes: 2, Steps: 200, PPO: pc}
}

// TestTrainSmoke: 200 PPO steps after cloning train, and the same config
// gives the same networks bit for bit.
func TestTrainSmoke(t *testing.T) {
	a, err := Train(smoke(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Train(smoke(t))
	if err != nil {
		t.Fatal(err)
	}
	if a.Samples == 0 || a.Meta.Env != ppdrl.Name || a.Meta.Steps != 200 {
		t.Fatalf("samples %d, meta %+v", a.Samples, a.Meta)
	}
	for name, n := range a.Nets {
		pa, pb := n.Params(), b.Nets[name].Params()
		for i := range pa {
			if !slices.Equal(pa[i].Value, pb[i].Value) {
				t.Fatalf("%s %s differs between two runs of one config", name, pa[i].Name)
			}
		}
	}
}

// TestClonedRouterIsHACK: with HACK as the teacher, HACK's decision is
// always the encoding's slot 0, HACK, slot 0, so the cloned actor agrees
// with every held-back decision, routes the held-out windows as HACK
// does, and the gate sees no gain.
func TestClonedRouterIsHACK(t *testing.T) {
	cfg := smoke(t)
	cfg.BCOnly, cfg.Teacher = true, ppdrl.HACKName
	res, err := Train(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Agreement != 1 {
		t.Fatalf("agreement %v, want 1", res.Agreement)
	}
	newP, err := ppdrl.FromCheckpoint(res.Meta, res.Nets, res.Encoder)
	if err != nil {
		t.Fatal(err)
	}
	h := HeldOut{Starts: []float64{420, 480, 540}, Duration: 30, GapLo: 0.5, GapHi: 0.8}
	j, err := Judge(cfg.Deploy, cfg.Trace, h, []uint64{1, 2}, func() ppdrl.Decider { return newP() }, gate.Config{Seed: 1, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(j.Learned, j.Baseline) || j.Verdict.Converged || j.Verdict.MeanGain != 0 || j.Verdict.Episodes != 6 {
		t.Fatalf("learned %v, HACK %v, verdict %v", j.Learned, j.Baseline, j.Verdict)
	}
}

// TestWindows: a window lies in [From, To) and its gap scale in [GapLo,
// GapHi], the same for one seed.
func TestWindows(t *testing.T) {
	w := DefaultTrain
	for seed := range uint64(50) {
		r := w.Replay(seed)
		if r.Start < w.From || r.Start+r.Duration > w.To || r.GapScale < w.GapLo || r.GapScale > w.GapHi || r != w.Replay(seed) {
			t.Fatalf("seed %d: %+v", seed, r)
		}
	}
	h := DefaultHeldOut()
	if len(h.Starts) != 9 || h.Starts[0] < w.To {
		t.Fatalf("held-out starts %v overlap the training windows (to %v)", h.Starts, w.To)
	}
}
