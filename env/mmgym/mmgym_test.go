package mmgym

import (
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/infer/mm/autoscale"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
)

// prof is Llama-3.2-11B-Vision's profile at the trace's rate, as drover
// infer mmscale measured it (docs/results/multimodal.md), rounded.
var prof = mmscale.Profile{ImageTokensPerSec: 21700, TextTokensPerSec: 9550, MonoRequestsPerSec: 0.82, EncodeSeconds: 0.122}

func router() mm.Router {
	r, err := modserve.New(modserve.RouteOnly)
	if err != nil {
		panic(err)
	}
	return r
}

// initial is the pools' sizes at an episode's start.
var initial = mmscale.Sizes{Image: 2, Text: 2}

func config() Config {
	sc := mmscale.DefaultConfig()
	sc.SLO = mmscale.Objective{Factor: 5, Text: 0.026, Image: 0.105}
	sc.Stabilize = 3
	return Config{Model: mm.Llama32_11BVision, Requests: 3_000_000, Days: []int{1, 2}, Hours: 2, Scale: sc, Profile: prof,
		NewRule: func() (autoscale.Scaler, error) { return mmscale.NewModServe(sc, prof, initial) }, Penalty: 0.05, Router: router}
}

// TestCheck runs gym.Check: spaces, determinism by seed, ownership, the
// panic after an episode's end.
func TestCheck(t *testing.T) {
	if err := gym.Check(func() gym.Env {
		e, err := New(config())
		if err != nil {
			t.Fatal(err)
		}
		return e
	}, 1, 60, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRuleIsModServe plays an episode with action Rule at every step and
// checks it is mmscale.Run under ModServe's autoscaler on the same
// requests: the same GPU-hours and attainment, bit for bit; and that the
// episode's return is minus its GPU-hours and the penalty of its misses,
// within what the first period (before the first step) holds.
func TestRuleIsModServe(t *testing.T) {
	c := config()
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	const seed = 7
	e.Reset(seed)
	ret := 0.0
	var info gym.Info
	for {
		_, r, term, trunc, inf := e.Step(Rule)
		ret += r
		if term || trunc {
			info = inf
			break
		}
	}
	day := c.Days[seed%len(c.Days)]
	reqs, err := llm.LMMSynth{Requests: c.Requests, Start: day * 1440, Minutes: 120}.Generate(rand.NewPCG(seed, 0x6d6d67796d))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mm.New(mm.Decoupled(c.Model, 1, 1), reqs)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := mmscale.NewModServe(c.Scale, c.Profile, initial)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mmscale.Run(s, reqs, router(), sc, c.Scale)
	if err != nil {
		t.Fatal(err)
	}
	if info["gpu_hours"] != out.Summary.GPUHours || info["attainment"] != out.Attainment {
		t.Errorf("rule episode: %v GPU-hours, attainment %v; mmscale.Run: %v, %v", info["gpu_hours"], info["attainment"], out.Summary.GPUHours, out.Attainment)
	}
	// The windows before the first period's end run in Reset: their
	// GPU-hours and misses are not in the return.
	ticks := int(c.Scale.Period / c.Scale.Monitor)
	missed, firstMissed, firstGPUs := 0, 0, 0
	for i, x := range out.Samples {
		missed += x.Finished - x.Met
		if i < ticks-1 {
			firstMissed += x.Finished - x.Met
		}
		if i < ticks {
			firstGPUs = max(firstGPUs, x.GPUs)
		}
	}
	lo := -(out.Summary.GPUHours + c.Penalty*float64(missed))
	hi := -(out.Summary.GPUHours - float64(firstGPUs)*c.Scale.Period/3600)
	if ret < lo-1e-9 || ret > hi {
		t.Errorf("return %v, want within [%v, %v]: minus the GPU-hours and penalties after the first period (%d misses in it)", ret, lo, hi, firstMissed)
	}
	t.Logf("%.2f GPU-hours, attainment %.4f, return %.3f", out.Summary.GPUHours, out.Attainment, ret)
}

// TestScale checks the actions' sizes against hand-worked asks: down by
// a third and at least one, kept, up by half and at least one, within the
// config's bounds.
func TestScale(t *testing.T) {
	c := autoscale.DefaultConfig()
	c.Max = 10
	tests := []struct {
		name   string
		ask    autoscale.Sizes
		action int
		want   autoscale.Sizes
	}{
		{"rule keeps the ask", autoscale.Sizes{Image: 3, Text: 7}, Rule, autoscale.Sizes{Image: 3, Text: 7}},
		{"down, down: a third off, at least one", autoscale.Sizes{Image: 9, Text: 2}, 0, autoscale.Sizes{Image: 6, Text: 1}},
		{"down at the floor stays at Min", autoscale.Sizes{Image: 1, Text: 1}, 0, autoscale.Sizes{Image: 1, Text: 1}},
		{"up, up: half more, at least one", autoscale.Sizes{Image: 4, Text: 1}, 8, autoscale.Sizes{Image: 6, Text: 2}},
		{"up past Max stops at Max", autoscale.Sizes{Image: 8, Text: 10}, 8, autoscale.Sizes{Image: 10, Text: 10}},
		{"image down, text up", autoscale.Sizes{Image: 3, Text: 3}, 2, autoscale.Sizes{Image: 2, Text: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Scale(tt.ask, tt.action, c); got != tt.want {
				t.Errorf("Scale(%+v, %d) = %+v, want %+v", tt.ask, tt.action, got, tt.want)
			}
		})
	}
}
