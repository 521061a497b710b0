package mmscale

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/modserve"
)

// window returns two hours of the synthetic week at 5M requests a week
// (the week's first busy hours), and an hour before them as history.
func window(t *testing.T) (hist, reqs []mm.Request) {
	t.Helper()
	var err error
	hist, err = llm.LMMSynth{Requests: 5_000_000, Start: 1380, Minutes: 60}.Generate(rand.NewPCG(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err = llm.LMMSynth{Requests: 5_000_000, Start: 1440, Minutes: 120}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	return hist, reqs
}

func router(t *testing.T, decoupled bool) mm.Router {
	name := modserve.Monolith
	if decoupled {
		name = modserve.Name
	}
	r, err := modserve.New(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// testProfile profiles Llama-3.2-11B-Vision on a short history, small
// runs.
func testProfile(t *testing.T, hist []mm.Request) Profiled {
	t.Helper()
	p, err := ProfileOf(ProfileSpec{Base: mm.Decoupled(mm.Llama32_11BVision, 1, 1), History: hist, Requests: 1000, SLO: Objective{Factor: 5, Text: 0.026, Image: 0.105}, Seed: 1,
		Router: func(dec bool) mm.Router { return router(t, dec) }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProfileBounds checks the profile against what no instance can beat:
// an Image Instance encodes at most one image per EncodeSeconds, so its
// capacity is below ImageTokens / EncodeSeconds; and capacities are
// positive. It also checks the profile is a function of its seed.
func TestProfileBounds(t *testing.T) {
	hist, _ := window(t)
	p := testProfile(t, hist)
	m := mm.Llama32_11BVision
	if bound := float64(m.ImageTokens) / p.EncodeSeconds; !(p.ImageTokensPerSec > 0 && p.ImageTokensPerSec < bound) {
		t.Errorf("image capacity %v tokens/s, want in (0, %v): one image per %v s encode", p.ImageTokensPerSec, bound, p.EncodeSeconds)
	}
	if !(p.TextTokensPerSec > 0 && p.MonoRequestsPerSec > 0) {
		t.Errorf("capacities %+v, want positive", p.Profile)
	}
	if q := testProfile(t, hist); q != p {
		t.Errorf("same seed, other profile:\n%+v\n%+v", p, q)
	}
}

// TestRun drives both deployments over two busy hours: every request is
// served (no pool is ever left without an active instance while work is
// pending, so none waits forever), pools never drop below one instance,
// the GPU-hours the samples integrate match the simulator's account, and
// a second run is identical bit for bit.
func TestRun(t *testing.T) {
	hist, reqs := window(t)
	p := testProfile(t, hist)
	h, err := HistoryOf(hist)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.SLO = Objective{Factor: 5, Text: 0.026, Image: 0.105}
	run := func(decoupled bool) Outcome {
		var sc Scaler
		var c mm.Config
		if decoupled {
			sc, err = NewModServe(cfg, p.Profile, InitialSizes(h, p.Profile))
			c = mm.Decoupled(mm.Llama32_11BVision, 1, 1)
		} else {
			sc, err = NewMonolith(cfg, p.Profile, InitialMono(h, p.Profile))
			c = mm.Monolith(mm.Llama32_11BVision, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		s, err := mm.New(c, reqs)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(s, reqs, router(t, decoupled), sc, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, dec := range []bool{false, true} {
		out := run(dec)
		if got := out.Summary.Finished + out.Summary.Dropped; got != len(reqs) {
			t.Errorf("decoupled %v: %d of %d requests finished or dropped", dec, got, len(reqs))
		}
		gpuSec := 0.0
		for i, x := range out.Samples {
			if dec && (x.Sizes.Image < 1 || x.Sizes.Text < 1) || !dec && x.Sizes.Mono < 1 {
				t.Fatalf("decoupled %v: window %d leaves a pool empty: %+v", dec, i, x.Sizes)
			}
			gpuSec += float64(x.GPUs) * cfg.Monitor
		}
		// The samples see the GPUs at each window's end; the simulator
		// counts them to the second. They agree within the minutes that
		// sizes changed in.
		if got, want := gpuSec/3600, out.Summary.GPUHours; math.Abs(got-want) > 0.1*want {
			t.Errorf("decoupled %v: samples integrate %.1f GPU-hours, simulator %.1f", dec, got, want)
		}
		if out.Attainment < 0.5 || out.Attainment > 1 {
			t.Errorf("decoupled %v: attainment %v", dec, out.Attainment)
		}
		again := run(dec)
		if d := cmp.Diff(out, again, cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })); d != "" {
			t.Errorf("decoupled %v: a second run differs (-first,+second):\n%s", dec, d)
		}
		t.Logf("decoupled %v: %.1f GPU-hours, attainment %.4f, %d added, %d removed, %d triggers", dec, out.Summary.GPUHours, out.Attainment, out.Added, out.Removed, out.Triggers)
	}
}
