package main

import (
	"fmt"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/policies/pdrl"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon"
)

// setRoute applies drover serve's -route and -route-model: HACK's router
// alone ("hack"), or a pd-rl checkpoint answering once it has passed the
// gate (its meta.json's converged).
func setRoute(c *daemon.Config, route, model string) error {
	if route == "" {
		return nil
	}
	a, ok := kv.Lookup(model)
	if !ok {
		return fmt.Errorf("-route-model %q: not in env/infer/kv's catalogue", model)
	}
	if route == pdrl.HACKName {
		// HACK reads no link; the encoding only has to be valid.
		c.Route = &serve.RouteConfig{Encoder: infergym.Config{Arch: a, LinkBytesPerSec: 1}}
		return nil
	}
	m, nets, err := checkpoints.Load(route)
	if err != nil {
		return fmt.Errorf("-route %s: %w", route, err)
	}
	enc := pdrl.ConfigOf(m, a)
	newP, err := pdrl.FromCheckpoint(m, nets, enc)
	if err != nil {
		return fmt.Errorf("-route %s: %w", route, err)
	}
	c.Route = &serve.RouteConfig{Encoder: enc, Learned: newP, Version: fmt.Sprintf("%s/%d", m.Algo, m.Seed), Converged: m.Converged}
	return nil
}
