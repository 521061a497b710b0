package mmscale

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/modserve"
)

// dayFixture is BenchmarkAutoscaledDay's inputs: day 1 of the synthetic
// week at 5x the trace's rate (5M requests a week), the history day
// before it from another seed, and InternVL-2.5-26B's profile on it.
var dayFixture struct {
	once       sync.Once
	reqs, hist []mm.Request
	h          History
	p          Profile
	slo        Objective
	err        error
}

func autoscaledDay(b *testing.B) {
	f := &dayFixture
	f.once.Do(func() {
		gen := func(seed uint64) []mm.Request {
			r, err := llm.LMMSynth{Requests: 5_000_000, Start: 1440, Minutes: 1440}.Generate(rand.NewPCG(seed, 1))
			if err != nil && f.err == nil {
				f.err = err
			}
			return r
		}
		f.reqs, f.hist = gen(1), gen(2)
		if f.err != nil {
			return
		}
		if f.h, f.err = HistoryOf(f.hist); f.err != nil {
			return
		}
		rc := mm.Monolith(mm.InternVL25_26B, 1)
		rc.SLO.Factor = 1
		rs, err := mm.New(rc, f.hist)
		if f.err = err; err != nil {
			return
		}
		ref := rs.Objectives()
		f.slo = Objective{Factor: 5, Text: ref.TTFTText, Image: ref.TTFTImage}
		base := mm.Decoupled(mm.InternVL25_26B, 1, 1)
		base.SLO.Factor = 5
		p, err := ProfileOf(ProfileSpec{Base: base, History: f.hist, SLO: f.slo, Seed: 1, Router: func(dec bool) mm.Router {
			r, _ := modserve.New(map[bool]string{false: modserve.Monolith, true: modserve.RouteOnly}[dec])
			return r
		}})
		f.p, f.err = p.Profile, err
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
}

// BenchmarkAutoscaledDay drives day 1 of the week at 5x the trace's rate
// (898,898 requests, InternVL-2.5-26B) under ModServe's rule with
// drover infer mmscale's defaults (modserve-route, target 1, stabilize 3)
// and under the monolith's, minute by minute: thousands of instances are
// started and drained over the day, so the routers' and the driver's
// scans must cost the live pools' size, not every instance ever started.
// It reports the requests and the instances deployed an op.
//
//	go test ./policies/mmscale -run '^$' -bench AutoscaledDay -benchtime 1x -count 6 -cpu 1 | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkAutoscaledDay(b *testing.B) {
	autoscaledDay(b)
	f := &dayFixture
	for _, system := range []string{"monolith", "modserve"} {
		b.Run("system="+system, func(b *testing.B) {
			b.ReportAllocs()
			dec := system == "modserve"
			var deployed int
			for b.Loop() {
				cfg := DefaultConfig()
				cfg.SLO, cfg.Stabilize = f.slo, 3
				c, name := mm.Monolith(mm.InternVL25_26B, 1), modserve.Monolith
				var sc Scaler
				var err error
				if dec {
					c, name = mm.Decoupled(mm.InternVL25_26B, 1, 1), modserve.RouteOnly
					sc, err = NewModServe(cfg, f.p, InitialSizes(f.h, f.p))
				} else {
					sc, err = NewMonolith(cfg, f.p, InitialMono(f.h, f.p))
				}
				if err != nil {
					b.Fatal(err)
				}
				c.SLO.Factor = 5
				s, err := mm.New(c, f.reqs)
				if err != nil {
					b.Fatal(err)
				}
				r, err := modserve.New(name)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(s, f.reqs, r, sc, cfg); err != nil {
					b.Fatal(err)
				}
				deployed = len(s.View().Instances)
			}
			b.ReportMetric(float64(len(f.reqs)), "requests/op")
			b.ReportMetric(float64(deployed), "instances/op")
		})
	}
}
