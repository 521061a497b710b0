package serve

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/mmgym"
	"github.com/drover-sched/drover/policies/mmscale"
)

// MMRLObservation names env/mmgym.Observe's inputs in order: the layout
// an mm-rl checkpoint's actor reads (checkpoints.MMScale.Observation). A
// checkpoint naming another layout is refused, since its network would
// read these numbers as something else.
var MMRLObservation = []string{
	"image_instances/10", "text_instances/10", "rule_image_ask/10", "rule_text_ask/10",
	"peak_image_load/capacity/10", "peak_text_load/capacity/10", "mean_image_load/capacity/10", "mean_text_load/capacity/10",
	"attainment", "pending_image_minutes/10", "pending_text_minutes/10", "day_sin", "day_cos",
}

// MMRLBaseline is the rule an mm-rl checkpoint's gate judges it against
// (checkpoints.MMGate.Baseline): ModServe's.
const MMRLBaseline = "modserve"

// MMRL is a learned multimodal autoscaler read from an mm-rl checkpoint
// (checkpoints.MMRLEnv): each period ModServe's rule asks, the actor
// (greedy) picks an action from env/mmgym's observation, and the asks are
// scaled by the action's factors (mmgym.Scale), as env/mmgym's episodes
// did in training. Everything the rule and the observation need (profile,
// objective, target, stabilization, initial sizes) is the checkpoint's.
type MMRL struct {
	// Meta is the checkpoint's metadata; Model its served model.
	Meta  checkpoints.Meta
	Model mm.Model
	// Scale, Profile and Initial are ModServe's rule as trained with.
	Scale   mmscale.Config
	Profile mmscale.Profile
	Initial mmscale.Sizes

	actor *nn.MLP
}

// MMRLScale returns the parts of an mm-rl checkpoint's setting that
// describe the policy a server rebuilds (model, observation and action
// layout, profile, rule); the caller fills Training and Gate.
func MMRLScale(m mm.Model, cfg mmscale.Config, p mmscale.Profile, initial mmscale.Sizes) checkpoints.MMScale {
	return checkpoints.MMScale{Model: m.Name, Observation: slices.Clone(MMRLObservation), Factors: mmgym.Factors[:], RuleAction: mmgym.Rule,
		Profile: checkpoints.MMProfile{ImageTokensPerSec: p.ImageTokensPerSec, TextTokensPerSec: p.TextTokensPerSec, MonoRequestsPerSec: p.MonoRequestsPerSec, EncodeSeconds: p.EncodeSeconds},
		Rule: checkpoints.MMRule{Period: cfg.Period, Monitor: cfg.Monitor, Threshold: cfg.Threshold, Min: cfg.Min, Max: cfg.Max,
			SLOFactor: cfg.SLO.Factor, SLOText: cfg.SLO.Text, SLOImage: cfg.SLO.Image, Target: cfg.Target, Stabilize: cfg.Stabilize,
			InitialImage: initial.Image, InitialText: initial.Text}}
}

// NewMMRL checks an mm-rl checkpoint's metadata and networks
// (checkpoints.Decode's) against what this build computes: a model of
// env/infer/mm's catalogue, env/mmgym's observation (MMRLObservation) and
// actions (mmgym.Factors, mmgym.Rule), an actor of that shape, and a rule
// mmscale accepts. An error names the meta.json field.
func NewMMRL(m checkpoints.Meta, nets map[string]*nn.MLP) (*MMRL, error) {
	s := m.MM
	switch {
	case m.Env != checkpoints.MMRLEnv || s == nil:
		return nil, fmt.Errorf("env: %q, want %q with its mm section", m.Env, checkpoints.MMRLEnv)
	case m.ObsDim != mmgym.ObsDim:
		return nil, fmt.Errorf("obs_dim: %d, env/mmgym observes %d", m.ObsDim, mmgym.ObsDim)
	case m.Actions != 9:
		return nil, fmt.Errorf("actions: %d, env/mmgym has 9", m.Actions)
	case !slices.Equal(s.Factors, mmgym.Factors[:]):
		return nil, fmt.Errorf("mm.factors: %v, env/mmgym's actions scale by %v", s.Factors, mmgym.Factors)
	case s.RuleAction != mmgym.Rule:
		return nil, fmt.Errorf("mm.rule_action: %d, env/mmgym's rule action is %d", s.RuleAction, mmgym.Rule)
	case s.Gate.Baseline != MMRLBaseline:
		return nil, fmt.Errorf("mm.gate.baseline: %q, want %q", s.Gate.Baseline, MMRLBaseline)
	}
	for i, name := range s.Observation {
		if name != MMRLObservation[i] {
			return nil, fmt.Errorf("mm.observation[%d]: %q, this build's mm-rl observes %q there", i, name, MMRLObservation[i])
		}
	}
	model, err := mm.LookupModel(s.Model)
	if err != nil {
		return nil, fmt.Errorf("mm.model: %w", err)
	}
	actor := nets["actor"]
	if actor == nil {
		return nil, fmt.Errorf("networks: %v, want an actor", m.Networks)
	}
	if _, err := nn.NewInfer(actor); err != nil {
		return nil, fmt.Errorf("networks: actor: %w", err)
	}
	r := s.Rule
	cfg := mmscale.Config{Period: r.Period, Monitor: r.Monitor, Threshold: r.Threshold, Min: r.Min, Max: r.Max,
		SLO: mmscale.Objective{Factor: r.SLOFactor, Text: r.SLOText, Image: r.SLOImage}, Target: r.Target, Stabilize: r.Stabilize}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mm.rule: %w", err)
	}
	prof := mmscale.Profile{ImageTokensPerSec: s.Profile.ImageTokensPerSec, TextTokensPerSec: s.Profile.TextTokensPerSec,
		MonoRequestsPerSec: s.Profile.MonoRequestsPerSec, EncodeSeconds: s.Profile.EncodeSeconds}
	p := &MMRL{Meta: m, Model: model, Scale: cfg, Profile: prof, Initial: mmscale.Sizes{Image: r.InitialImage, Text: r.InitialText}, actor: actor}
	if _, err := p.Rule(); err != nil {
		return nil, fmt.Errorf("mm.rule: %w", err)
	}
	return p, nil
}

// LoadMMRL reads the mm-rl checkpoint in dir (checkpoints.Load) and checks
// it (NewMMRL). An error names the directory or meta.json, and the field.
func LoadMMRL(dir string) (*MMRL, error) {
	m, nets, err := checkpoints.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	p, err := NewMMRL(m, nets)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, checkpoints.MetaFile), err)
	}
	return p, nil
}

// Check refuses a checkpoint trained for another model than served's.
func (p *MMRL) Check(served mm.Model) error {
	if p.Model.Name != served.Name {
		return fmt.Errorf("mm.model: %q, the served model is %q", p.Model.Name, served.Name)
	}
	return nil
}

// Version names the checkpoint in answers and logs: "ALGO/SEED/STEPS".
func (p *MMRL) Version() string {
	return fmt.Sprintf("%s/%d/%d", p.Meta.Algo, p.Meta.Seed, p.Meta.Steps)
}

// Policy returns the actor's greedy action for an observation (the
// highest logit, the lowest action on a tie). Each call returns a policy
// with its own buffers: one is not safe for concurrent use.
func (p *MMRL) Policy() func(obs []float64) int {
	inf, err := nn.NewInfer(p.actor)
	if err != nil {
		panic(fmt.Sprintf("serve: mm-rl actor: %v", err)) // NewMMRL built one
	}
	all := make([]bool, p.Meta.Actions)
	for i := range all {
		all[i] = true
	}
	return func(obs []float64) int { return nn.MaskedArgmax(inf.Forward(obs), all) }
}

// Rule returns ModServe's rule as the checkpoint was trained and judged
// with, afresh: the heuristic a server answers with until the learned
// autoscaler is promoted.
func (p *MMRL) Rule() (mmscale.Scaler, error) {
	return mmscale.NewModServe(p.Scale, p.Profile, p.Initial)
}

// NewScaler returns the learned autoscaler afresh (its rule's state and
// its clock at zero), for MMConfig.Learned.
func (p *MMRL) NewScaler() (mmscale.Scaler, error) {
	rule, err := mmscale.NewModServe(p.Scale, p.Profile, p.Initial)
	if err != nil {
		return nil, err
	}
	return &mmrlScaler{rule: rule, act: p.Policy(), scale: p.Scale, prof: p.Profile}, nil
}

// mmrlScaler is the learned autoscaler: within a period the rule acts on
// its triggers; at a period's end the rule asks, the actor picks an
// action on the period's observation, and the asks are scaled by it. Its
// clock (the observation's time of day) is the sum of the periods seen,
// from zero at its first call, as an env/mmgym episode's is from the
// start of its day.
type mmrlScaler struct {
	rule  *mmscale.ModServe
	act   func([]float64) int
	scale mmscale.Config
	prof  mmscale.Profile
	now   float64
}

func (s *mmrlScaler) Initial() mmscale.Sizes { return s.rule.Initial() }

// StartAt sets the clock to t seconds (the Scale gate's replay of an
// episode that began t seconds into the deployment's run).
func (s *mmrlScaler) StartAt(t float64) { s.now = t }

func (s *mmrlScaler) Decide(w mmscale.Window, cur mmscale.Sizes, tick bool) mmscale.Sizes {
	ask := s.rule.Decide(w, cur, tick)
	if !tick {
		return ask
	}
	s.now += w.Seconds
	return mmgym.Scale(ask, s.act(mmgym.Observe(w, cur, ask, s.now, s.prof)), s.scale)
}
