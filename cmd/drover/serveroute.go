package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/policies/pdrl"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon"
)

// routeFlags are drover serve's flags for Route calls.
type routeFlags struct {
	route, model, deployment, perf, mode *string
}

// defineRouteFlags defines drover serve's -route flags on fs.
func defineRouteFlags(fs *flag.FlagSet) *routeFlags {
	return &routeFlags{
		route:      fs.String("route", "", "answer Route calls for LLM inference requests (prefill instance, decode instance, KV format): hack (HACK's router), or a pd-rl checkpoint directory (drover train --env pd-rl), which decides every request in shadow beside HACK and answers once promoted (-route-switch) (empty: Route answers FailedPrecondition). With -log-dir every route also goes to DIR/routes.jsonl (docs/format/route-log.md), which drover eval --log re-scores"),
		model:      fs.String("route-model", "llama2-70b", "with -route: the served model's architecture (env/infer/kv's catalogue), which sizes the KV formats"),
		deployment: fs.String("route-deployment", "", "with -route: the deployment the clients route over, a drover infer preset ("+fmt.Sprint(presetNames())+"), named in the route log and replayed by the route gate (empty: none, and no gate)"),
		perf:       fs.String("route-perf", defaultPerfTable, "with -route-deployment: SplitwiseSim's latency table the gate's replays read"),
		mode:       fs.String("route-switch", "", "with a pd-rl checkpoint: gate (in shadow until the gate passes on a replay of the routed requests on -route-deployment, with the -gate-* settings, judged on mean JCT; the default with -route-deployment), shadow (never answers), or converged (answers when its checkpoint says converged; the default without -route-deployment)"),
	}
}

// setRoute applies the -route flags: HACK's router alone ("hack"), or a
// pd-rl checkpoint deciding in shadow and answering once promoted.
func (f *routeFlags) setRoute(c *daemon.Config, stderr io.Writer) error {
	if *f.route == "" {
		return nil
	}
	a, ok := kv.Lookup(*f.model)
	if !ok {
		return fmt.Errorf("-route-model %q: not in env/infer/kv's catalogue", *f.model)
	}
	var dep *infer.Config
	if *f.deployment != "" {
		if _, ok := inferPresets[*f.deployment]; !ok {
			return fmt.Errorf("-route-deployment %q: want one of %v", *f.deployment, presetNames())
		}
		perf, err := readPerf(*f.perf, *f.perf != defaultPerfTable, stderr)
		if err != nil {
			return fmt.Errorf("-route-perf: %w", err)
		}
		// The preset as drover infer and drover eval --log build it with
		// their default flags, the model's own (architecture) KV size.
		sf := defineInferSetupFlags(flag.NewFlagSet("route", flag.ContinueOnError))
		d, err := sf.deployment(*f.deployment, perf, map[string]bool{})
		if err != nil {
			return fmt.Errorf("-route-deployment: %w", err)
		}
		d.cfg.Model = infer.ModelOf(a)
		dep = &d.cfg
	}
	if *f.route == pdrl.HACKName {
		// HACK reads no link; the encoding only has to be valid.
		link := 1.0
		if dep != nil {
			link = dep.Link.BytesPerSec
		}
		c.Route = &serve.RouteConfig{Encoder: infergym.Config{Arch: a, LinkBytesPerSec: link}, Deployment: *f.deployment}
		return nil
	}
	m, nets, err := checkpoints.Load(*f.route)
	if err != nil {
		return fmt.Errorf("-route %s: %w", *f.route, err)
	}
	enc := pdrl.ConfigOf(m, a)
	newP, err := pdrl.FromCheckpoint(m, nets, enc)
	if err != nil {
		return fmt.Errorf("-route %s: %w", *f.route, err)
	}
	if dep != nil && dep.Link.BytesPerSec != enc.LinkBytesPerSec {
		fmt.Fprintf(stderr, "drover serve: -route %s was trained with a %g Gbit/s link, -route-deployment %s has %g Gbit/s\n",
			*f.route, enc.LinkBytesPerSec*8/1e9, *f.deployment, dep.Link.BytesPerSec*8/1e9)
	}
	c.Route = &serve.RouteConfig{Encoder: enc, Learned: newP, Version: fmt.Sprintf("%s/%d", m.Algo, m.Seed), Converged: m.Converged,
		Mode: *f.mode, Deployment: *f.deployment, Replay: dep}
	return nil
}
