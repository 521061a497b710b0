package pdrl

import (
	"fmt"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
)

// Greedy is the Actor that takes the valid action of largest logit of
// net's forward pass (the lowest index on ties).
func Greedy(net *nn.MLP) Actor {
	f, err := nn.NewInfer(net)
	if err != nil {
		panic(fmt.Sprintf("pdrl: %v", err))
	}
	return func(obs []float64, mask []bool) int { return nn.MaskedArgmax(f.Forward(obs), mask) }
}

// PutConfig records the encoding in a checkpoint's hyperparameters:
// "slots", "formats" (their number: the formats are
// infergym.DefaultFormats unless the loader says otherwise) and
// "link_bytes_per_sec" (the link the observation's transfer times were
// computed for). The model's architecture is the deployment's, given again
// when the checkpoint is loaded.
func PutConfig(h map[string]float64, cfg infergym.Config) {
	h["slots"], h["formats"], h["link_bytes_per_sec"] = float64(cfg.Slots), float64(len(cfg.Formats)), cfg.LinkBytesPerSec
}

// ConfigOf is the encoding a pd-rl checkpoint was trained with, for a
// model of architecture a: its slots and link bandwidth (PutConfig), the
// default formats.
func ConfigOf(m checkpoints.Meta, a kv.Arch) infergym.Config {
	return infergym.Config{Slots: int(m.Hyperparams["slots"]), Arch: a, LinkBytesPerSec: m.Hyperparams["link_bytes_per_sec"]}
}

// FromCheckpoint returns a constructor of pd-rl policies deciding with the
// checkpoint's actor greedily over encoding cfg, after checking that the
// checkpoint is pd-rl's and its sizes are cfg's.
func FromCheckpoint(m checkpoints.Meta, nets map[string]*nn.MLP, cfg infergym.Config) (func() *Policy, error) {
	enc, err := infergym.NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("pdrl: %w", err)
	}
	cfg = enc.Config()
	actor := nets["actor"]
	switch {
	case m.Env != Name:
		return nil, fmt.Errorf("pdrl: checkpoint of %q, want %q", m.Env, Name)
	case actor == nil:
		return nil, fmt.Errorf("pdrl: checkpoint has no actor")
	case m.ObsDim != enc.ObsDim() || m.Actions != enc.Actions() || m.Hyperparams["slots"] != float64(cfg.Slots):
		return nil, fmt.Errorf("pdrl: checkpoint has %d observations and %d actions (%v slots), the encoding %d and %d (%d slots): "+
			"a checkpoint trained on another encoding (before the expected-time features, 62 observations for 4 slots) must be retrained (drover train --env pd-rl)",
			m.ObsDim, m.Actions, m.Hyperparams["slots"], enc.ObsDim(), enc.Actions(), cfg.Slots)
	}
	return func() *Policy {
		p, _ := New(cfg, Greedy(actor))
		return p
	}, nil
}

// Load reads the pd-rl checkpoint in dir (checkpoints.Load) for encoding
// cfg.
func Load(dir string, cfg infergym.Config) (checkpoints.Meta, func() *Policy, error) {
	m, nets, err := checkpoints.Load(dir)
	if err != nil {
		return m, nil, err
	}
	f, err := FromCheckpoint(m, nets, cfg)
	return m, f, err
}
