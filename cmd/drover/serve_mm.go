package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon"
)

// mmFlags are drover serve's flags for the multimodal calls (issue 35):
// RouteMM and Scale.
type mmFlags struct {
	model, router, scale, deployment *string
	requests                         *int
	histSeed                         *uint64
	factor, target                   *float64
}

// defineMMFlags defines drover serve's -mm flags on fs.
func defineMMFlags(fs *flag.FlagSet) *mmFlags {
	return &mmFlags{
		model:      fs.String("mm-model", "", "answer RouteMM and Scale calls for a multimodal deployment of this model: llama (Llama-3.2-11B-Vision), internvl (InternVL-2.5-26B), llava (LLaVA-OneVision-7B) or an env/infer/mm catalogue name, on A100 80GB instances as env/infer/mm's presets deploy it (image instances TP-1, text and monolithic TP-4, 16 images a request at most). With -log-dir every answer also goes to DIR/scales.jsonl and DIR/mmroutes.jsonl (docs/format/mm-log.md) (empty: both calls answer FailedPrecondition)"),
		router:     fs.String("mm-router", modserve.Name, "with -mm-model: RouteMM's router, one of policies/modserve's "+fmt.Sprint(servedRouters())+", or off"),
		scale:      fs.String("mm-scale", "modserve", "with -mm-model: Scale's autoscaler: modserve (ModServe's rule: every period each pool to ceil(load / capacity), a minute below 0.99 SLO attainment rescales), monolith (vLLM-style instances scaled by request rate), or off. Capacities come from an offline profile simulated at start-up on the synthetic LMM week (-mm-requests, -mm-history-seed), as drover infer mmscale profiles them"),
		deployment: fs.String("mm-deployment", "", "with -mm-model: the deployment's name in the multimodal route log"),
		requests:   fs.Int("mm-requests", 0, "with -mm-scale: the synthetic LMM week's requests the profile and initial sizes are drawn from (0: the trace's 1,000,000)"),
		histSeed:   fs.Uint64("mm-history-seed", 2, "with -mm-scale: the seed of that week"),
		factor:     fs.Float64("mm-factor", 5, "with -mm-scale: the SLO factor: a request's TTFT objective is this x the larger of its isolated TTFT and its modality's reference (a median text-only or one-image request's)"),
		target:     fs.Float64("mm-target", 1, "with -mm-scale: the share of the profiled capacity pools are sized for (1: ModServe's rule)"),
	}
}

// servedRouters are the routers RouteMM serves: modserve's but Late,
// whose text instance is chosen after the call.
func servedRouters() []string {
	return slices.DeleteFunc(slices.Clone(modserve.Names), func(n string) bool { return n == modserve.Late })
}

// mmModel returns the model a -mm-model value names.
func mmModel(name string) (mm.Model, error) {
	switch name {
	case "llama":
		return mm.Llama32_11BVision, nil
	case "internvl":
		return mm.InternVL25_26B, nil
	case "llava":
		return mm.LLaVAOneVision7B, nil
	}
	return mm.LookupModel(name)
}

// setMM applies the -mm flags: the router, and the autoscaler with its
// profile (simulated here, which takes a second or two).
func (f *mmFlags) setMM(fs *flag.FlagSet, c *daemon.Config, stderr io.Writer) error {
	if *f.model == "" {
		for _, n := range []string{"mm-router", "mm-scale", "mm-deployment", "mm-requests", "mm-history-seed", "mm-factor", "mm-target"} {
			if isSet(fs, n) {
				return fmt.Errorf("-%s given without -mm-model, which it needs", n)
			}
		}
		return nil
	}
	m, err := mmModel(*f.model)
	if err != nil {
		return fmt.Errorf("-mm-model: %w", err)
	}
	if *f.router != "off" && !slices.Contains(servedRouters(), *f.router) {
		return fmt.Errorf("-mm-router %q: want one of %v or off", *f.router, servedRouters())
	}
	if *f.scale != "modserve" && *f.scale != "monolith" && *f.scale != "off" {
		return fmt.Errorf("-mm-scale %q: want modserve, monolith or off", *f.scale)
	}
	if *f.router == "off" && *f.scale == "off" {
		return fmt.Errorf("-mm-router off -mm-scale off: nothing to answer")
	}
	cfg := serve.MMConfig{Base: mm.Decoupled(m, 1, 1), Router: *f.router, NoRouter: *f.router == "off", Deployment: *f.deployment}
	if *f.scale != "off" {
		newScaler, desc, err := f.scaler(m)
		if err != nil {
			return err
		}
		cfg.Scaler, cfg.ScalerName = newScaler, *f.scale
		fmt.Fprintln(stderr, "drover serve: "+desc)
	}
	c.MM = &cfg
	return nil
}

// scaler profiles m's instances on the history week and returns the
// autoscaler's constructor and a line describing it.
func (f *mmFlags) scaler(m mm.Model) (func() (mmscale.Scaler, error), string, error) {
	t0 := time.Now()
	hist, err := llm.LMMSynth{Requests: *f.requests}.Generate(rand.NewPCG(*f.histSeed, 1))
	if err != nil {
		return nil, "", fmt.Errorf("-mm-requests: %w", err)
	}
	h, err := mmscale.HistoryOf(hist)
	if err != nil {
		return nil, "", err
	}
	// The modalities' references: isolated TTFTs of the history's median
	// text-only and one-image requests (ModServe's objectives at factor 1).
	rc := mm.Monolith(m, 1)
	rc.SLO.Factor = 1
	rs, err := mm.New(rc, hist)
	if err != nil {
		return nil, "", err
	}
	ref := rs.Objectives()
	cfg := mmscale.DefaultConfig()
	cfg.SLO = mmscale.Objective{Factor: *f.factor, Text: ref.TTFTText, Image: ref.TTFTImage}
	cfg.Target = *f.target
	if err := cfg.Validate(); err != nil {
		return nil, "", fmt.Errorf("-mm-factor, -mm-target: %w", err)
	}
	router := *f.router
	if router == "off" || router == modserve.Monolith {
		router = modserve.Name
	}
	base := mm.Decoupled(m, 1, 1)
	base.SLO.Factor = *f.factor
	p, err := mmscale.ProfileOf(mmscale.ProfileSpec{Base: base, History: hist, SLO: cfg.SLO, Seed: 1, Router: func(decoupled bool) mm.Router {
		name := modserve.Monolith
		if decoupled {
			name = router
		}
		r, _ := modserve.New(name)
		return r
	}})
	if err != nil {
		return nil, "", err
	}
	init := mmscale.InitialSizes(h, p.Profile)
	mono := mmscale.InitialMono(h, p.Profile)
	newScaler := func() (mmscale.Scaler, error) {
		if *f.scale == "monolith" {
			return mmscale.NewMonolith(cfg, p.Profile, mono)
		}
		return mmscale.NewModServe(cfg, p.Profile, init)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "multimodal autoscaler %s for %s: profile of %d simulations in %.1f s on %d requests (seed %d): an image instance %.0f image tokens/s, a text instance %.0f prompt tokens/s, a monolithic one %.3f requests/s, one image encodes in %.3f s; objective %g x max(isolated TTFT, %.3f s text-only / %.3f s with images); initial %d image + %d text (monolith: %d)",
		*f.scale, m.Name, p.Runs, time.Since(t0).Seconds(), len(hist), *f.histSeed, p.ImageTokensPerSec, p.TextTokensPerSec, p.MonoRequestsPerSec, p.EncodeSeconds,
		*f.factor, ref.TTFTText, ref.TTFTImage, init.Image, init.Text, mono)
	return newScaler, b.String(), nil
}
