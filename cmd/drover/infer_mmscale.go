package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
)

// mmscaleNumRules are drover infer mmscale's numeric flags' rules.
var mmscaleNumRules = map[string]numRule{
	"requests":     within(0, 1<<27, "0 (the trace's 1,000,000 a week) to 2^27 requests a week"),
	"start-day":    within(0, 6, "a day of the week, 0 to 6"),
	"days":         within(1.0/24, 7, "1 hour (1/24) to 7 days"),
	"history-seed": anyNumber,
	"factor":       within(1, 1e3, "an SLO factor, 1 to 1000"),
	"period":       above(0, 86400, "a positive period, at most a day (s)"),
	"monitor":      above(0, 86400, "a positive monitoring window, at most the period (s)"),
	"threshold":    within(0, 1, "an attainment in [0, 1]"),
	"stabilize":    within(1, 1<<10, "1 to 1024 periods"),
	"rl-steps":     within(0, 1e8, "0 (no mm-rl) to 1e8 steps"),
	"rl-penalty":   within(0, 1e6, "GPU-hours a missed request, 0 or more"),
	"rl-tests":     within(1, 1e4, "1 to 10,000 held-out episodes"),
	"max":          within(0, mm.MaxInstances, fmt.Sprintf("0 (no bound) to %d instances a pool", mm.MaxInstances)),
}

// mmscaleUsage is drover infer mmscale's usage.
const mmscaleUsage = `usage: drover infer mmscale [flags]

Autoscaling over the synthetic week of the Azure LMM 2025 trace (issue 35):
ModServe's pools (policies/mmscale.ModServe: every 5 minutes each pool to
ceil(load / capacity), initial sizes from a history week, rescale when a
minute's SLO attainment falls below 0.99) against vLLM-style monolithic
instances scaled by request rate, on env/infer/mm. Capacities come from
offline profiles (simulated steady load on the history week's requests).
For each system the targets (shares of the profiled capacity the pools are
sized for) are tried in order until one reaches the attainment threshold
over the whole run; the table gives every run, GPU-hours and attainment,
and the saving at the first target each system meets the threshold with.
Every stage cost is derived (env/infer/mm), as the output says.`

// inferMmscale is drover infer mmscale.
func inferMmscale(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("infer mmscale", stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, mmscaleUsage); fs.PrintDefaults() }
	models := fs.String("model", "both", "llama (Llama-3.2-11B-Vision, cross-attention), internvl (InternVL-2.5-26B, decoder-only) or both")
	requests := fs.Int("requests", 0, "requests in the whole week (its rates scale with it); 0 is the trace's 1,000,000")
	startDay := fs.Int("start-day", 0, "first day of the week simulated (from 2024-10-15 12:00 UTC)")
	days := fs.Float64("days", 7, "days simulated")
	seed := fs.Uint64("seed", 1, "seed of the simulated week")
	histSeed := fs.Uint64("history-seed", 2, "seed of the history week (initial sizes, profiles)")
	factor := fs.Float64("factor", 5, "SLO factor: a request's TTFT objective is factor x the larger of its isolated TTFT and its modality's reference (a text-only or one-image request's)")
	router := fs.String("router", modserve.RouteOnly, "the decoupled pools' router: "+modserve.Name+" (SLO-aware scheduling and modality-aware routing) or "+modserve.RouteOnly+" (modality-aware routing, FCFS)")
	targets := fs.String("targets", "1.5,1.25,1,0.8,0.6,0.5,0.4", "shares of the profiled capacity to size pools for, tried in order for each system until one meets the threshold (1 is ModServe's rule; from the highest, the first to meet it is the cheapest)")
	period := fs.Float64("period", 300, "seconds between scaling decisions")
	monitor := fs.Float64("monitor", 60, "seconds of a monitoring window (SLO attainment checked after each)")
	threshold := fs.Float64("threshold", 0.99, "SLO attainment below which a monitoring window triggers a rescale, and the run's attainment a system must reach")
	maxInst := fs.Int("max", 0, "most instances a pool may have (0: no bound)")
	stabilize := fs.Int("stabilize", 1, "periods a scale-in waits for: each pool gets the most instances any of the last N ticks asked for (1: ModServe's rule, no hysteresis)")
	images := fs.String("images", "drawn", imagesUsage)
	imageSeed := fs.Uint64("image-seed", 0, "seed of the drawn image sizes")
	prompt := fs.String("prompt", "", promptUsage)
	plotOut := fs.String("plot", "", "write the pool sizes and GPUs over time of each model to PREFIX-<model>.png")
	rlFlags := defineMmrlFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	ms, err := mmscaleModels(*models)
	if err != nil {
		return err
	}
	if *router != modserve.Name && *router != modserve.RouteOnly {
		return fmt.Errorf("--router %q: want %s or %s", *router, modserve.Name, modserve.RouteOnly)
	}
	var tgs []float64
	for _, f := range strings.Split(*targets, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0 && x <= mmscale.MaxTarget) {
			return fmt.Errorf("--targets %q: %q is not a share in (0, %v]", *targets, f, mmscale.MaxTarget)
		}
		tgs = append(tgs, x)
	}
	rl, err := rlFlags(*requests, *seed)
	if err != nil {
		return err
	}
	if *monitor > *period {
		return fmt.Errorf("--monitor %v: want at most --period %v", *monitor, *period)
	}
	minutes := int(math.Round(*days * 1440))
	start := *startDay * 1440
	if start+minutes > llm.LMM2025Minutes {
		return fmt.Errorf("--start-day %d --days %v: past the week's end", *startDay, *days)
	}
	week, err := llm.LMMSynth{Requests: *requests, Start: start, Minutes: minutes}.Generate(rand.NewPCG(*seed, 1))
	if err != nil {
		return err
	}
	hist, err := llm.LMMSynth{Requests: *requests}.Generate(rand.NewPCG(*histSeed, 1))
	if err != nil {
		return err
	}
	h, err := mmscale.HistoryOf(hist)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "week: %d requests over %.2f days from day %d (seed %d); history: %d requests (seed %d): median %.2f images/s, %.2f requests/s, %.0f images an image request\n",
		len(week), *days, *startDay, *seed, len(hist), *histSeed, h.ImageQPS, h.RequestQPS, h.ImagesPerRequest)
	fmt.Fprintf(stdout, "GOMAXPROCS %d; times are wall seconds of each week's simulation and scaling (generation and profiling excluded)\n\n", runtime.GOMAXPROCS(0))
	for _, m := range ms {
		if err := mmscaleModel(stdout, m, week, hist, h, mmscaleOpts{factor: *factor, router: *router, targets: tgs, period: *period, monitor: *monitor, threshold: *threshold, max: *maxInst, stabilize: *stabilize, plot: *plotOut, rl: rl, images: *images, imageSeed: *imageSeed, prompt: *prompt}); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return nil
}

// mmscaleModels returns the models drover infer mmscale's --model names.
func mmscaleModels(name string) ([]mm.Model, error) {
	switch name {
	case "llama":
		return []mm.Model{mm.Llama32_11BVision}, nil
	case "internvl":
		return []mm.Model{mm.InternVL25_26B}, nil
	case "both":
		return []mm.Model{mm.Llama32_11BVision, mm.InternVL25_26B}, nil
	}
	return nil, fmt.Errorf("--model %q: want llama, internvl or both", name)
}

type mmscaleOpts struct {
	factor                     float64
	router                     string
	targets                    []float64
	period, monitor, threshold float64
	max, stabilize             int
	plot                       string
	rl                         mmrlOpts
	images, prompt             string
	imageSeed                  uint64
}

// config returns c with the run's image sizes (-images, -image-seed).
func (o mmscaleOpts) config(c mm.Config) (mm.Config, error) {
	err := setImages(&c, o.images, o.imageSeed, o.prompt)
	return c, err
}

// routerFor returns the router of a monolithic or decoupled deployment.
func (o mmscaleOpts) routerFor(decoupled bool) mm.Router {
	name := modserve.Monolith
	if decoupled {
		name = o.router
	}
	r, err := modserve.New(name)
	if err != nil {
		panic(err) // the name was checked with the flags
	}
	return r
}

// mmscaleRun is one system's run at one target.
type mmscaleRun struct {
	system string
	target float64
	out    mmscale.Outcome
	wall   time.Duration
}

func mmscaleModel(w io.Writer, m mm.Model, week, hist []mm.Request, h mmscale.History, o mmscaleOpts) error {
	// The modalities' references: isolated TTFTs of the history's median
	// text-only and one-image requests (ModServe's objectives at factor 1).
	rc, err := o.config(mm.Monolith(m, 1))
	if err != nil {
		return err
	}
	rc.SLO.Factor = 1
	rs, err := mm.New(rc, hist)
	if err != nil {
		return err
	}
	ref := rs.Objectives()
	slo := mmscale.Objective{Factor: o.factor, Text: ref.TTFTText, Image: ref.TTFTImage}
	base, err := o.config(mm.Decoupled(m, 1, 1))
	if err != nil {
		return err
	}
	base.SLO.Factor = o.factor
	t0 := time.Now()
	p, err := mmscale.ProfileOf(mmscale.ProfileSpec{Base: base, History: hist, SLO: slo, Seed: 1, Router: o.routerFor})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## %s (%s)\n\nobjective: %.0f x max(isolated TTFT, %.3f s text-only / %.3f s with images)\n", m.Name, m.Arch, o.factor, ref.TTFTText, ref.TTFTImage)
	fmt.Fprintf(w, "profile (%d simulations, %.1f s): an Image Instance %.0f image tokens/s (%.2f image requests/s), a Text Instance %.0f prompt tokens/s (%.2f requests/s), a monolithic instance %.3f requests/s; one image encodes in %.3f s\n",
		p.Runs, time.Since(t0).Seconds(), p.ImageTokensPerSec, p.ImageRate, p.TextTokensPerSec, p.TextRate, p.MonoRequestsPerSec, p.EncodeSeconds)
	ds, err := mm.New(base, hist[:1])
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "costs: %s; %s\n", strings.Join(rs.Summary().Derived, "; "), strings.Join(ds.Summary().Derived, "; "))
	fmt.Fprintf(w, "initial: %d image + %d text instances (ModServe), %d monolithic\n\n", mmscale.InitialSizes(h, p.Profile).Image, mmscale.InitialSizes(h, p.Profile).Text, mmscale.InitialMono(h, p.Profile))
	fmt.Fprintln(w, "| system | target | GPU-hours | attainment | paper's attainment | TTFT P99 image / text (s) | max pools | added / removed | triggers | wall (s) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var best [2]*mmscaleRun
	for k := range best {
		if best[k], err = mmscaleSweep(w, m, week, h, p.Profile, slo, k == 1, o); err != nil {
			return err
		}
	}
	if err := mmscaleReport(w, m, best, o); err != nil || o.rl.steps == 0 {
		return err
	}
	// mm-rl modulates ModServe's rule at the target it met the threshold
	// with (its own, 1, when it met none).
	cfg := mmscale.DefaultConfig()
	cfg.Period, cfg.Monitor, cfg.Threshold, cfg.Max, cfg.SLO, cfg.Stabilize = o.period, o.monitor, o.threshold, o.max, slo, o.stabilize
	if best[1] != nil {
		cfg.Target = best[1].target
	}
	return mmscaleRL(w, m, p.Profile, cfg, mmscale.InitialSizes(h, p.Profile), o, o.rl)
}

// mmscaleSweep runs one system at each target in turn until one meets
// the threshold, printing a row per run; it returns that run (nil if none
// did) and any error.
func mmscaleSweep(w io.Writer, m mm.Model, week []mm.Request, h mmscale.History, p mmscale.Profile, slo mmscale.Objective, decoupled bool, o mmscaleOpts) (*mmscaleRun, error) {
	system := map[bool]string{false: "monolith", true: "modserve"}[decoupled]
	for _, tg := range o.targets {
		cfg := mmscale.DefaultConfig()
		cfg.Period, cfg.Monitor, cfg.Threshold, cfg.Max, cfg.SLO, cfg.Target, cfg.Stabilize = o.period, o.monitor, o.threshold, o.max, slo, tg, o.stabilize
		var sc mmscale.Scaler
		var err error
		c := mm.Monolith(m, 1)
		if decoupled {
			sc, err = mmscale.NewModServe(cfg, p, mmscale.InitialSizes(h, p))
			c = mm.Decoupled(m, 1, 1)
		}
		if err == nil {
			c, err = o.config(c)
		}
		if !decoupled && err == nil {
			sc, err = mmscale.NewMonolith(cfg, p, mmscale.InitialMono(h, p))
		}
		if err != nil {
			return nil, err
		}
		c.SLO.Factor = o.factor
		s, err := mm.New(c, week)
		if err != nil {
			return nil, err
		}
		t1 := time.Now()
		out, err := mmscale.Run(s, week, o.routerFor(decoupled), sc, cfg)
		if err != nil {
			return nil, err
		}
		run := &mmscaleRun{system: system, target: tg, out: out, wall: time.Since(t1)}
		var mx mmscale.Sizes
		for _, x := range out.Samples {
			mx = mmscale.Sizes{Image: max(mx.Image, x.Sizes.Image), Text: max(mx.Text, x.Sizes.Text), Mono: max(mx.Mono, x.Sizes.Mono)}
		}
		pools := fmt.Sprintf("%d mono", mx.Mono)
		if decoupled {
			pools = fmt.Sprintf("%d image, %d text", mx.Image, mx.Text)
		}
		sum := out.Summary
		fmt.Fprintf(w, "| %s | %.1f | %.0f | %.4f | %.4f | %.2f / %.2f | %s | %d / %d | %d | %.1f |\n", system, tg, sum.GPUHours, out.Attainment, sum.SLOAttainment,
			sum.TTFTImage.P99, sum.TTFTText.P99, pools, out.Added, out.Removed, out.Triggers, run.wall.Seconds())
		if out.Attainment >= o.threshold {
			return run, nil
		}
	}
	return nil, nil
}

// mmscaleReport prints the saving at the threshold, the derived costs,
// and draws the plot.
func mmscaleReport(w io.Writer, m mm.Model, best [2]*mmscaleRun, o mmscaleOpts) error {
	fmt.Fprintln(w)
	if best[0] == nil || best[1] == nil {
		fmt.Fprintf(w, "no target reached %.2f attainment for %s\n\n", o.threshold, map[bool]string{true: "the monolith", false: "ModServe"}[best[0] == nil])
		return nil
	}
	saving := 1 - best[1].out.Summary.GPUHours/best[0].out.Summary.GPUHours
	fmt.Fprintf(w, "at >= %.2f attainment: ModServe %.0f GPU-hours (target %.1f) against the monolith's %.0f (target %.1f): %.1f%% fewer\n",
		o.threshold, best[1].out.Summary.GPUHours, best[1].target, best[0].out.Summary.GPUHours, best[0].target, 100*saving)
	if o.plot == "" {
		return nil
	}
	path := o.plot + "-" + m.Name + ".png"
	if err := mmscalePlot(path, m, best[0], best[1]); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n\n", path)
	return nil
}

// mmscalePlot draws GPUs held by both systems, ModServe's pools and the
// requests a minute over the run, against hours.
func mmscalePlot(path string, m mm.Model, mono, ms *mmscaleRun) error {
	series := func(r *mmscaleRun, f func(mmscale.Sample) float64) ([]float64, []float64) {
		x := make([]float64, len(r.out.Samples))
		y := make([]float64, len(r.out.Samples))
		for i, s := range r.out.Samples {
			x[i], y[i] = s.T/3600, f(s)
		}
		return x, y
	}
	gx, gm := series(mono, func(s mmscale.Sample) float64 { return float64(s.GPUs) })
	hx, hm := series(ms, func(s mmscale.Sample) float64 { return float64(s.GPUs) })
	_, img := series(ms, func(s mmscale.Sample) float64 { return float64(s.Sizes.Image) })
	_, txt := series(ms, func(s mmscale.Sample) float64 { return float64(s.Sizes.Text) })
	_, mn := series(mono, func(s mmscale.Sample) float64 { return float64(s.Sizes.Mono) })
	_, arr := series(mono, func(s mmscale.Sample) float64 { return float64(s.Arrived) })
	panels := []plot.Panel{
		{YLabel: "GPUs held", Series: []plot.Series{
			{Name: fmt.Sprintf("monolith (%.0f GPU-h)", mono.out.Summary.GPUHours), X: gx, Y: gm},
			{Name: fmt.Sprintf("ModServe (%.0f GPU-h)", ms.out.Summary.GPUHours), X: hx, Y: hm}}},
		{YLabel: "instances", Series: []plot.Series{
			{Name: "ModServe image (TP-1)", X: hx, Y: img},
			{Name: "ModServe text (TP-4)", X: hx, Y: txt},
			{Name: "monolith (TP-4)", X: gx, Y: mn}}},
		{YLabel: "requests a minute", Series: []plot.Series{{Name: "arrivals", X: gx, Y: arr}}},
	}
	o := plot.Options{Title: fmt.Sprintf("%s: autoscaling over the synthetic week", m.Name), XLabel: "hours since 2024-10-15 12:00 UTC (synthetic)", Width: 1400, Height: 900}
	return plot.WriteFile(path, func(w io.Writer) error { return plot.Stack(w, o, panels) })
}
