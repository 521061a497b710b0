package mmscale

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/env/infer/mm"
)

// ProfileSpec says how to profile a model's instances offline (ModServe
// section 4.1: "controlled inference workloads with varying ... load",
// here by simulation): one instance of a kind under a steady Poisson load
// of requests drawn from a history trace, the load raised until fewer
// than Attainment of the requests make their TTFT objective.
type ProfileSpec struct {
	// Base is the deployment the instances belong to: model, GPU, TP,
	// costs, batching and SLO. Its instance counts are ignored.
	Base mm.Config
	// History is the trace whose requests (sizes: images, prompt, output)
	// the profiling loads draw from, with replacement.
	History []mm.Request
	// Requests is the requests of one profiling run (default 4,000): its
	// arrivals span Requests / rate seconds.
	Requests int
	// SLO is each request's TTFT objective (Config.SLO).
	SLO Objective
	// Pool is the instances of the profiled kind in a profiling run
	// (default 8): a pool, not one instance, so that a large request's
	// images spread as they do in the deployment; the capacity is the
	// pool's over Pool.
	Pool int
	// Attainment is the share of requests that must meet their TTFT
	// objective (default 0.99, ModServe's threshold).
	Attainment float64
	// Helpers is the instances of the other pool beside the profiled one
	// (default 16): enough that the other stage does not limit it.
	Helpers int
	// Seed seeds the draws.
	Seed uint64
	// Router returns the router of a deployment (monolithic or decoupled).
	Router func(decoupled bool) mm.Router
}

// Profiled is a profile with how it was measured.
type Profiled struct {
	Profile
	// ImageRate, TextRate and MonoRate are the request rates (a second,
	// per instance) at which a pool of each kind still met the
	// attainment.
	ImageRate, TextRate, MonoRate float64
	// Runs is the simulations the search took.
	Runs int
}

// ProfileOf profiles a pool of Image Instances (image requests only, with
// Helpers Text Instances), of Text Instances (the whole mix, with Helpers
// Image Instances) and of monolithic instances (the whole mix), each at
// the highest steady request rate meeting the attainment, found by
// bisection on a log scale to 2%. Capacities are that rate's image tokens
// a second, text load a second and requests a second, per instance.
// EncodeSeconds is the median history image's encode alone on an Image
// Instance (mm.Sim.MedianImageEncode).
func ProfileOf(spec ProfileSpec) (Profiled, error) {
	if spec.Requests == 0 {
		spec.Requests = 4000
	}
	if spec.Attainment == 0 {
		spec.Attainment = 0.99
	}
	if spec.Helpers == 0 {
		spec.Helpers = 16
	}
	if spec.Pool == 0 {
		spec.Pool = 8
	}
	if len(spec.History) == 0 || spec.Router == nil || spec.Requests < 100 || !(spec.Attainment > 0 && spec.Attainment <= 1) || spec.Helpers < 1 || spec.Pool < 1 || spec.SLO.Validate() != nil {
		return Profiled{}, fmt.Errorf("%w: profile spec: %d history requests, router %v, %d requests a run, attainment %v, %d helpers, pool %d, objective %+v", ErrBadConfig, len(spec.History), spec.Router != nil, spec.Requests, spec.Attainment, spec.Helpers, spec.Pool, spec.SLO)
	}
	var imgReqs []mm.Request
	for _, r := range spec.History {
		if r.Images > 0 {
			imgReqs = append(imgReqs, r)
		}
	}
	if len(imgReqs) == 0 {
		return Profiled{}, fmt.Errorf("%w: profile history has no image requests", ErrBadConfig)
	}
	var out Profiled
	kinds := []struct {
		inst [3]int
		from []mm.Request
		rate *float64
		cap  *float64
		load func(m mm.Model, r mm.Result) float64
	}{
		{[3]int{0, spec.Pool, spec.Helpers}, imgReqs, &out.ImageRate, &out.ImageTokensPerSec, func(m mm.Model, r mm.Result) float64 {
			return float64(r.ImageTokens)
		}},
		{[3]int{0, spec.Helpers, spec.Pool}, spec.History, &out.TextRate, &out.TextTokensPerSec, func(m mm.Model, r mm.Result) float64 {
			if m.Arch == mm.DecoderOnly {
				return float64(r.Prompt) + float64(r.ImageTokens)
			}
			return float64(r.Prompt)
		}},
		{[3]int{spec.Pool, 0, 0}, spec.History, &out.MonoRate, &out.MonoRequestsPerSec, func(mm.Model, mm.Result) float64 { return 1 }},
	}
	for k, kind := range kinds {
		cfg := spec.Base
		cfg.Instances = kind.inst
		meets := func(rate float64) (bool, float64, error) {
			out.Runs++
			reqs := steady(kind.from, rate, spec.Requests, spec.Seed+uint64(k))
			s, err := mm.New(cfg, reqs)
			if err != nil {
				return false, 0, err
			}
			if _, err := s.Run(spec.Router(cfg.Decoupled())); err != nil {
				return false, 0, err
			}
			met, load := 0, 0.0
			for i := range reqs {
				res := s.Result(i)
				if res.TTFT() <= spec.SLO.Of(s.IsolatedTTFT(&reqs[i]), int(res.Images)) { // NaN (dropped) compares false
					met++
				}
				load += kind.load(cfg.Model, res)
			}
			return float64(met) >= spec.Attainment*float64(len(reqs)), load / reqs[len(reqs)-1].Arrival / float64(spec.Pool), nil
		}
		// Bracket from 0.1 requests a second (the pool's): up by doubling while it
		// meets the attainment, down by halving while it does not.
		lo, hi := 0.0, 0.0
		var loLoad float64
		for r := 0.1; ; r *= 2 {
			ok, load, err := meets(r)
			if err != nil {
				return out, err
			}
			if !ok {
				hi = r
				break
			}
			lo, loLoad = r, load
			if r > 1e6 {
				return out, fmt.Errorf("%w: profile: one instance meets the SLO at %v requests a second", ErrBadConfig, lo)
			}
		}
		for r := hi / 2; lo == 0; r /= 2 {
			if r < 1e-4 {
				return out, fmt.Errorf("%w: profile: one %v instance misses %v of the objectives even at %v requests a second", ErrBadConfig, []mm.Pool{mm.Image, mm.Text, mm.Mono}[k], spec.Attainment, r)
			}
			ok, load, err := meets(r)
			if err != nil {
				return out, err
			}
			if ok {
				lo, loLoad = r, load
			} else {
				hi = r
			}
		}
		for hi/lo > 1.02 {
			mid := math.Sqrt(lo * hi)
			ok, load, err := meets(mid)
			if err != nil {
				return out, err
			}
			if ok {
				lo, loLoad = mid, load
			} else {
				hi = mid
			}
		}
		*kind.rate, *kind.cap = lo/float64(spec.Pool), loLoad
	}
	cfg := spec.Base
	cfg.Instances = [3]int{0, 1, 1}
	s, err := mm.New(cfg, spec.History)
	if err != nil {
		return out, err
	}
	out.EncodeSeconds = s.MedianImageEncode(mm.Image)
	return out, out.Validate()
}

// steady returns n requests arriving as a Poisson stream of rate requests
// a second, each request's sizes drawn from from with replacement; IDs 0,
// 1, ...
func steady(from []mm.Request, rate float64, n int, seed uint64) []mm.Request {
	rng := rand.New(rand.NewPCG(seed, 0x6d6d7363616c65)) // "mmscale"
	out := make([]mm.Request, n)
	t := 0.0
	for i := range out {
		t += rng.ExpFloat64() / rate
		out[i] = from[rng.IntN(len(from))]
		out[i].ID, out[i].Arrival = i, t
	}
	return out
}
