package mm

import (
	"math"
	"slices"
	"sort"

	"github.com/drover-sched/drover/env"
)

// Stat summarises one metric over requests.
type Stat struct {
	N                        int
	Mean, P50, P90, P99, Max float64
}

func stat(xs []float64) Stat {
	if len(xs) == 0 {
		nan := math.NaN()
		return Stat{0, nan, nan, nan, nan, nan}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Stat{N: len(xs), Mean: sum / float64(len(xs)), P50: env.Quantile(xs, 0.5), P90: env.Quantile(xs, 0.9),
		P99: env.Quantile(xs, 0.99), Max: xs[len(xs)-1]}
}

// Summary is a run's outcome.
type Summary struct {
	// Requests is the requests that arrived, Finished those that made
	// their last token, Dropped those that could never fit an instance's
	// memory.
	Requests, Finished, Dropped int
	// TTFT, TBT and E2E are over the finished requests; the Image and
	// Text variants over those with images and those without.
	TTFT, TTFTImage, TTFTText Stat
	TBT, TBTImage, TBTText    Stat
	E2E                       Stat
	// SLOAttainment is the share of arrived requests that finished within
	// their objectives (Config.SLO); 1 with no objective.
	SLOAttainment float64
	// Goodput is the requests a second that met their objectives, over
	// the span from the first arrival to the last finish.
	Goodput float64
	// GPUHours is the GPU time held (Sim.GPUSeconds / 3600).
	GPUHours float64
	// CutImages and CutTokens are the images and prompt tokens left out
	// to fit the model's context (Config.MaxImages).
	CutImages, CutTokens int
	// PromptImageTokens is the prompt tokens read as the production
	// model's image tokens and taken out of the text
	// (Config.PromptHasImageTokens).
	PromptImageTokens int64
	// Derived lists the stage costs that come from a roofline rather than
	// a measurement ("Encode: derived: ..."), sorted.
	Derived []string
}

// Summary summarises the requests that have arrived so far.
func (s *Sim) Summary() Summary {
	out := Summary{Requests: s.next, Dropped: s.dropped, CutImages: s.cut[0], CutTokens: s.cut[1], PromptImageTokens: s.fromPrm, GPUHours: s.GPUSeconds() / 3600}
	var all, img, txt, tb, tbi, tbt, e2e []float64
	met := 0
	last := 0.0
	for i := range s.next {
		r := &s.reqs[i].res
		if math.IsNaN(r.End) {
			continue
		}
		out.Finished++
		last = max(last, r.End)
		t, b := r.TTFT(), r.TBT()
		all = append(all, t)
		tb = append(tb, b)
		e2e = append(e2e, r.E2E())
		if r.Images > 0 {
			img = append(img, t)
			tbi = append(tbi, b)
		} else {
			txt = append(txt, t)
			tbt = append(tbt, b)
		}
		if t <= r.SLO && b <= s.obj.TBT {
			met++
		}
	}
	out.TTFT, out.TTFTImage, out.TTFTText = stat(all), stat(img), stat(txt)
	out.TBT, out.TBTImage, out.TBTText = stat(tb), stat(tbi), stat(tbt)
	out.E2E = stat(e2e)
	out.SLOAttainment = 1
	if out.Requests > 0 {
		out.SLOAttainment = float64(met) / float64(out.Requests)
		if span := last - s.trace[0].Arrival; span > 0 {
			out.Goodput = float64(met) / span
		}
	}
	seen := map[string]bool{}
	for p := range numPools {
		if s.cfg.Instances[p] == 0 && s.PoolSize(p) == 0 && !(p == Mono) {
			continue
		}
		for k, v := range s.costs[p].Sources {
			if len(v) >= 8 && v[:8] == "measured" {
				continue
			}
			seen[k+": "+v] = true
		}
	}
	seen[s.imagesSource()] = true
	if s.cfg.PromptHasImageTokens {
		seen["Prompt: assumption: the trace's ContextTokens hold each image's tokens in a GPT-4o-like production model (85 + 170 a 512-px tile), taken out of the text"] = true
	}
	for k := range seen {
		out.Derived = append(out.Derived, k)
	}
	sort.Strings(out.Derived)
	return out
}
