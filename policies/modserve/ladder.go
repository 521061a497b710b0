package modserve

import (
	"fmt"

	"github.com/drover-sched/drover/env/infer/mm"
)

// The paper's static setup (section 5.2): 16 DGX-A100 servers, 128 GPUs,
// as 32 TP-4 monolithic instances or 48 TP-1 image and 20 TP-4 text
// instances.
const (
	StaticMonoInstances  = 32
	StaticImageInstances = 48
	StaticTextInstances  = 20
)

// The static evaluation's window of datasets/llm's LMM 2025 week: the
// busiest hour of image requests of the week generated from seed 1
// (hour 28, from 2024-10-16 16:00 UTC), its rates scaled (LMMSynth's
// Requests) to load the 128 GPUs; the paper's loads are in its figures,
// not its text.
const (
	StaticStart   = 28 * 60
	StaticMinutes = 60
)

// Rung is one router's run on the static deployment.
type Rung struct {
	// Name is the router's.
	Name string
	// GPUs is the deployment's.
	GPUs int
	// Summary is the run's outcome.
	Summary mm.Summary
}

// StaticConfig is the paper's static deployment of m for router name:
// the monolith for Monolith, the decoupled pools for the others.
func StaticConfig(m mm.Model, name string) mm.Config {
	if name == Monolith {
		return mm.Monolith(m, StaticMonoInstances)
	}
	return mm.Decoupled(m, StaticImageInstances, StaticTextInstances)
}

// StaticLadder runs each named router (Names when names is empty) over
// reqs on the paper's static deployment of m; tune, when not nil, may
// change each configuration first (a link, an SLO factor).
func StaticLadder(m mm.Model, reqs []mm.Request, names []string, tune func(*mm.Config)) ([]Rung, error) {
	if len(names) == 0 {
		names = Names
	}
	out := make([]Rung, 0, len(names))
	for _, n := range names {
		r, err := New(n)
		if err != nil {
			return nil, err
		}
		cfg := StaticConfig(m, n)
		if tune != nil {
			tune(&cfg)
		}
		s, err := mm.New(cfg, reqs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		sum, err := s.Run(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, Rung{Name: n, GPUs: cfg.GPUs(), Summary: sum})
	}
	return out, nil
}

// Gain is one rung's cut in TTFT against the rung before it, as the paper
// reports its ablation: 0.27 is 27% lower.
type Gain struct {
	// From and To are the rungs compared (To's TTFT against From's).
	From, To string
	// Mean and P99 are the cuts in average and P99 TTFT.
	Mean, P99 float64
	// PaperMean and PaperP99 are the paper's (section 5.2): decoupling
	// 27%/42% (Llama-3.2-11B) and 46%/47% (InternVL-2.5-26B), scheduling
	// 12%/25%, routing 14%/32% (not split by model in its text).
	PaperMean, PaperP99 float64
}

// Gains compares the ladder's rungs, each with the one before it:
// Decoup against Monolith, Sched against Decoup, ModServe against Sched,
// and, when the rungs hold it, Late against Sched (the routing gain with
// the paper's late choice of the text instance). The rungs must include
// the first four.
func Gains(m mm.Model, rungs []Rung) ([]Gain, error) {
	by := map[string]*mm.Summary{}
	for i := range rungs {
		by[rungs[i].Name] = &rungs[i].Summary
	}
	dm, dp := 0.27, 0.42
	if m.Arch == mm.DecoderOnly {
		dm, dp = 0.46, 0.47
	}
	steps := []Gain{
		{From: Monolith, To: Decoup, PaperMean: dm, PaperP99: dp},
		{From: Decoup, To: Sched, PaperMean: 0.12, PaperP99: 0.25},
		{From: Sched, To: Name, PaperMean: 0.14, PaperP99: 0.32},
	}
	if by[Late] != nil {
		steps = append(steps, Gain{From: Sched, To: Late, PaperMean: 0.14, PaperP99: 0.32})
	}
	for i := range steps {
		g := &steps[i]
		a, b := by[g.From], by[g.To]
		if a == nil || b == nil {
			return nil, fmt.Errorf("modserve: gains need rungs %s and %s", g.From, g.To)
		}
		g.Mean = 1 - b.TTFT.Mean/a.TTFT.Mean
		g.P99 = 1 - b.TTFT.P99/a.TTFT.P99
	}
	return steps, nil
}
