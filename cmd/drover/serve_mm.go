package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/drover-sched/drover/checkpoints"
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
	policy, mode                     *string
	gateHours                        *float64
	gateEvery                        *int
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
		policy:     fs.String("mm-policy", "", "with -mm-model: an mm-rl checkpoint directory (drover train --env mm-rl), the learned autoscaler: it decides every Scale call beside ModServe's rule and answers once promoted (-mm-switch); the rule is then the checkpoint's own (its profile, objective, target, stabilization and initial sizes: the rule its gate judged it against), so -mm-requests, -mm-history-seed, -mm-factor and -mm-target are refused with it and nothing is profiled at start-up. A checkpoint for another model, or one this build cannot read, is refused naming the file and field"),
		mode:       fs.String("mm-switch", serve.SwitchConverged, "with -mm-policy: converged (the learned autoscaler answers when its checkpoint's gate verdict says converged; the rule answers otherwise, the learned one logged in shadow), gate (the live Scale gate: in shadow until a replay of the requests RouteMM routed over the last -mm-gate-hours, under both autoscalers on the served deployment, shows it cheaper in GPU-hours + its training penalty per missed request, with the -gate-* settings; back when the lower bound falls to -gate-back-margin; needs -mm-router) or shadow (never answers; with a router the gate is evaluated and reported, never switching)"),
		gateHours:  fs.Float64("mm-gate-hours", serve.DefaultMMGateWindow/3600, "with -mm-switch gate or shadow: the hours of routed requests the Scale gate replays, cut into -gate-seeds episodes"),
		gateEvery:  fs.Int("mm-gate-every", serve.DefaultMMGateEvery, "with -mm-switch gate or shadow: period-end Scale calls between the Scale gate's evaluations (-gate-interval also evaluates it)"),
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
		for _, n := range []string{"mm-router", "mm-scale", "mm-deployment", "mm-requests", "mm-history-seed", "mm-factor", "mm-target", "mm-policy", "mm-switch", "mm-gate-hours", "mm-gate-every"} {
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
	if *f.policy != "" {
		if err := f.setPolicy(fs, &cfg, m, stderr); err != nil {
			return err
		}
		c.MM = &cfg
		return nil
	}
	for _, n := range []string{"mm-switch", "mm-gate-hours", "mm-gate-every"} {
		if isSet(fs, n) {
			return fmt.Errorf("-%s given without -mm-policy, which it needs", n)
		}
	}
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
	router := *f.router
	if router == "off" || router == modserve.Monolith {
		router = modserve.Name
	}
	r, err := profileMM(m, *f.requests, *f.histSeed, *f.factor, *f.target, router, false)
	if err != nil {
		return nil, "", err
	}
	cfg, p := r.cfg, r.p
	newScaler := func() (mmscale.Scaler, error) {
		if *f.scale == "monolith" {
			return mmscale.NewMonolith(cfg, p.Profile, r.mono)
		}
		return mmscale.NewModServe(cfg, p.Profile, r.init)
	}
	return newScaler, fmt.Sprintf("multimodal autoscaler %s for %s: %s", *f.scale, m.Name, r), nil
}

// mmRule is ModServe's (and the monolith's) rule for a model: its
// settings, the offline profile and the initial sizes, drawn from a
// synthetic history week as drover infer mmscale draws them.
type mmRule struct {
	cfg      mmscale.Config
	p        mmscale.Profiled
	init     mmscale.Sizes
	mono     int
	histSeed uint64
	history  int
	took     time.Duration
	ref      mm.Objectives
	factor   float64
	router   string
}

// profileMM profiles m's instances on the history week of requests
// requests (seed histSeed) with the decoupled pools routed by router, and
// returns the rule at the SLO factor and target; fixed simulates every
// image as 896x896 (mm.Config.Fixed896).
func profileMM(m mm.Model, requests int, histSeed uint64, factor, target float64, router string, fixed bool) (mmRule, error) {
	t0 := time.Now()
	hist, err := llm.LMMSynth{Requests: requests}.Generate(rand.NewPCG(histSeed, 1))
	if err != nil {
		return mmRule{}, fmt.Errorf("-mm-requests: %w", err)
	}
	h, err := mmscale.HistoryOf(hist)
	if err != nil {
		return mmRule{}, err
	}
	// The modalities' references: isolated TTFTs of the history's median
	// text-only and one-image requests (ModServe's objectives at factor 1).
	rc, base := mm.Monolith(m, 1), mm.Decoupled(m, 1, 1)
	if fixed {
		rc, base = rc.Fixed896(), base.Fixed896()
	}
	rc.SLO.Factor = 1
	rs, err := mm.New(rc, hist)
	if err != nil {
		return mmRule{}, err
	}
	ref := rs.Objectives()
	cfg := mmscale.DefaultConfig()
	cfg.SLO = mmscale.Objective{Factor: factor, Text: ref.TTFTText, Image: ref.TTFTImage}
	cfg.Target = target
	if err := cfg.Validate(); err != nil {
		return mmRule{}, fmt.Errorf("-mm-factor, -mm-target: %w", err)
	}
	base.SLO.Factor = factor
	p, err := mmscale.ProfileOf(mmscale.ProfileSpec{Base: base, History: hist, SLO: cfg.SLO, Seed: 1, Router: func(decoupled bool) mm.Router {
		name := modserve.Monolith
		if decoupled {
			name = router
		}
		r, _ := modserve.New(name)
		return r
	}})
	if err != nil {
		return mmRule{}, err
	}
	return mmRule{cfg: cfg, p: p, init: mmscale.InitialSizes(h, p.Profile), mono: mmscale.InitialMono(h, p.Profile), histSeed: histSeed,
		history: len(hist), took: time.Since(t0), ref: ref, factor: factor, router: router}, nil
}

// String describes the profile, the objective and the initial sizes.
func (r mmRule) String() string {
	p := r.p
	return fmt.Sprintf("profile of %d simulations in %.1f s on %d requests (seed %d): an image instance %.0f image tokens/s, a text instance %.0f prompt tokens/s, a monolithic one %.3f requests/s, one image encodes in %.3f s; objective %g x max(isolated TTFT, %.3f s text-only / %.3f s with images); initial %d image + %d text (monolith: %d)",
		p.Runs, r.took.Seconds(), r.history, r.histSeed, p.ImageTokensPerSec, p.TextTokensPerSec, p.MonoRequestsPerSec, p.EncodeSeconds,
		r.factor, r.ref.TTFTText, r.ref.TTFTImage, r.init.Image, r.init.Text, r.mono)
}

// setPolicy applies -mm-policy: the mm-rl checkpoint's learned
// autoscaler beside the rule it was judged against.
func (f *mmFlags) setPolicy(fs *flag.FlagSet, cfg *serve.MMConfig, m mm.Model, stderr io.Writer) error {
	for _, n := range []string{"mm-requests", "mm-history-seed", "mm-factor", "mm-target"} {
		if isSet(fs, n) {
			return fmt.Errorf("-%s with -mm-policy: the rule is the checkpoint's own (the one its gate judged it against)", n)
		}
	}
	if *f.scale != "modserve" {
		return fmt.Errorf("-mm-scale %s with -mm-policy: an mm-rl checkpoint scales ModServe's rule (-mm-scale modserve)", *f.scale)
	}
	p, err := loadMMPolicy(*f.policy, m)
	if err != nil {
		return err
	}
	if err := mmPolicyConfig(cfg, p, *f.mode); err != nil {
		return err
	}
	cfg.GateWindow, cfg.GateEvery = *f.gateHours*3600, *f.gateEvery
	fmt.Fprintln(stderr, "drover serve: "+mmPolicyLine(*f.policy, p, cfg.Mode))
	return nil
}

// loadMMPolicy reads the mm-rl checkpoint in dir for the served model m.
// An error names the file and the field.
func loadMMPolicy(dir string, m mm.Model) (*serve.MMRL, error) {
	p, err := serve.LoadMMRL(dir)
	if err != nil {
		return nil, fmt.Errorf("-mm-policy %w", err)
	}
	if err := p.Check(m); err != nil {
		return nil, fmt.Errorf("-mm-policy %s: %w (-mm-model)", filepath.Join(dir, checkpoints.MetaFile), err)
	}
	return p, nil
}

// mmPolicyConfig sets cfg's autoscalers from an mm-rl checkpoint: the rule
// it was judged against as the heuristic, the learned autoscaler beside
// it, promoted by mode (serve.SwitchConverged: the checkpoint's verdict;
// serve.SwitchGate: the live Scale gate, which replays the routed
// requests and so needs cfg's router, at the checkpoint's rule and
// training penalty; serve.SwitchShadow: never).
func mmPolicyConfig(cfg *serve.MMConfig, p *serve.MMRL, mode string) error {
	switch {
	case mode != serve.SwitchConverged && mode != serve.SwitchShadow && mode != serve.SwitchGate:
		return fmt.Errorf("-mm-switch %q: want %s, %s or %s", mode, serve.SwitchConverged, serve.SwitchGate, serve.SwitchShadow)
	case mode == serve.SwitchGate && cfg.NoRouter:
		return fmt.Errorf("-mm-switch %s replays the requests RouteMM routes: it needs -mm-router (not off)", mode)
	}
	cfg.Scaler, cfg.ScalerName = p.Rule, serve.MMRLBaseline
	cfg.Learned, cfg.Version, cfg.Converged, cfg.Mode = p.NewScaler, p.Version(), p.Meta.Converged, mode
	cfg.Rule, cfg.Penalty = p.Scale, p.Meta.MM.Training.Penalty
	return nil
}

// mmPolicyLine describes a loaded mm-rl checkpoint and who answers.
func mmPolicyLine(dir string, p *serve.MMRL, mode string) string {
	g := p.Meta.MM.Gate
	who := "ModServe's rule answers, mm-rl in shadow"
	switch {
	case mode == serve.SwitchConverged && p.Meta.Converged:
		who = "mm-rl answers, ModServe's rule in shadow"
	case mode == serve.SwitchGate:
		who = "ModServe's rule answers, mm-rl in shadow until the live Scale gate passes"
	}
	return fmt.Sprintf("multimodal autoscaler mm-rl %s (%s) for %s: trained %d periods on days %v (images %s); gate vs %s on %d held-out episodes: mean gain %.1f%%, lower bound %.1f%%, converged %v (mm-rl %.1f GPU-hours at %.4f attainment, the rule %.1f at %.4f); switch %s: %s; the rule's profile: an image instance %.0f image tokens/s, a text instance %.0f prompt tokens/s; initial %d image + %d text",
		dir, p.Version(), p.Model.Name, p.Meta.Steps, p.Meta.MM.Training.TrainDays, p.Meta.MM.Training.Images, g.Baseline, g.Episodes, 100*g.MeanGain, 100*g.Lower, g.Converged,
		g.GPUHours, g.Attainment, g.RuleGPUHours, g.RuleAttainment, mode, who, p.Profile.ImageTokensPerSec, p.Profile.TextTokensPerSec, p.Initial.Image, p.Initial.Text)
}
