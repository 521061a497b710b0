package checkpoints

import (
	"fmt"
	"math"
	"strings"
)

// MMRLEnv is the environment name of a learned multimodal autoscaler's
// checkpoint (mm-rl: PPO over env/mmgym), whose Meta carries an MMScale.
const MMRLEnv = "mm-rl"

// MMScale is an mm-rl checkpoint's setting (Meta.MM, meta.json's "mm";
// docs/format/checkpoint.md): what the actor observes and what its
// actions do, the rule whose asks it scales, how it was trained, and the
// gate's verdict against that rule on held-out days. A server rebuilds
// the trained autoscaler from it alone: the rule's profile, objective and
// initial sizes are the training's, not the server's.
type MMScale struct {
	// Model is the served model's env/infer/mm catalogue name.
	Model string `json:"model"`
	// Observation names the ObsDim inputs in order (env/mmgym.Observe's
	// layout); a reader refuses a layout it does not compute.
	Observation []string `json:"observation"`
	// Factors are what an action multiplies the rule's ask for a pool by:
	// action a scales the image pool by Factors[a / len(Factors)] and the
	// text pool by Factors[a % len(Factors)], so Actions is
	// len(Factors)^2. RuleAction is the action that keeps both asks.
	Factors    []float64 `json:"factors"`
	RuleAction int       `json:"rule_action"`
	// Profile is the offline profile the rule sizes pools with and the
	// observation is scaled by.
	Profile MMProfile `json:"profile"`
	// Rule is ModServe's rule as trained with.
	Rule MMRule `json:"rule"`
	// Training says what the policy trained on.
	Training MMTraining `json:"training"`
	// Gate is the verdict against the rule on held-out days.
	Gate MMGate `json:"gate"`
}

// MMProfile is an offline profile of one instance of each kind
// (env/infer/mm/autoscale.Profile).
type MMProfile struct {
	// ImageTokensPerSec and TextTokensPerSec are an Image and a Text
	// Instance's capacities within the objective, MonoRequestsPerSec a
	// monolithic instance's; EncodeSeconds one image's median encode.
	ImageTokensPerSec  float64 `json:"image_tokens_per_sec"`
	TextTokensPerSec   float64 `json:"text_tokens_per_sec"`
	MonoRequestsPerSec float64 `json:"mono_requests_per_sec"`
	EncodeSeconds      float64 `json:"encode_seconds"`
}

// MMRule is ModServe's autoscaling rule's settings
// (env/infer/mm/autoscale.Config) and the pools' initial sizes.
type MMRule struct {
	// Period and Monitor are the seconds between scaling decisions and of
	// a monitoring window; Threshold the attainment below which a window
	// rescales.
	Period    float64 `json:"period"`
	Monitor   float64 `json:"monitor"`
	Threshold float64 `json:"threshold"`
	// Min and Max bound a pool (Max 0: no bound).
	Min int `json:"min"`
	Max int `json:"max"`
	// SLOFactor, SLOText and SLOImage are the TTFT objective: the factor
	// and the text-only and image references (s).
	SLOFactor float64 `json:"slo_factor"`
	SLOText   float64 `json:"slo_text"`
	SLOImage  float64 `json:"slo_image"`
	// Target is the share of the profiled capacity pools are sized for;
	// Stabilize the periods a scale-in waits for.
	Target    float64 `json:"target"`
	Stabilize int     `json:"stabilize"`
	// InitialImage and InitialText are the pools' sizes at the start.
	InitialImage int `json:"initial_image"`
	InitialText  int `json:"initial_text"`
}

// MMTraining describes mm-rl's training episodes.
type MMTraining struct {
	// Requests is the synthetic week's requests (0: the trace's 1,000,000);
	// HistorySeed the seed of the history week the profile and initial
	// sizes came from.
	Requests    int    `json:"requests"`
	HistorySeed uint64 `json:"history_seed"`
	// Router is the decoupled pools' router in the episodes
	// (policies/modserve's name).
	Router string `json:"router"`
	// Images is how the episodes and the profile sized images: "drawn"
	// (per image, env/infer/mm's default) or "fixed896" (every image
	// 896x896, mm.Config.Fixed896).
	Images string `json:"images"`
	// TrainDays and TestDays are the days of the week trained on and
	// held out; Hours an episode's length.
	TrainDays []int   `json:"train_days"`
	TestDays  []int   `json:"test_days"`
	Hours     float64 `json:"hours"`
	// Penalty is the GPU-hours a missed request costs; RewardScale
	// divides the reward.
	Penalty     float64 `json:"penalty"`
	RewardScale float64 `json:"reward_scale"`
}

// MMGate is the gate's verdict (policies/gate) on mm-rl against the rule
// on held-out episodes, cost = GPU-hours + Penalty x missed requests, and
// the means it was judged on.
type MMGate struct {
	// Baseline names the rule judged against ("modserve").
	Baseline string `json:"baseline"`
	// Episodes, MeanGain, Lower and Converged are the verdict
	// (gate.Verdict); Margin and Confidence its settings.
	Episodes   int     `json:"episodes"`
	MeanGain   float64 `json:"mean_gain"`
	Lower      float64 `json:"lower"`
	Margin     float64 `json:"margin"`
	Confidence float64 `json:"confidence"`
	Converged  bool    `json:"converged"`
	// GPUHours and Attainment are mm-rl's means over the held-out
	// episodes; RuleGPUHours and RuleAttainment the rule's.
	GPUHours       float64 `json:"gpu_hours"`
	Attainment     float64 `json:"attainment"`
	RuleGPUHours   float64 `json:"rule_gpu_hours"`
	RuleAttainment float64 `json:"rule_attainment"`
}

// maxMMPool bounds the pool sizes an mm-rl checkpoint may name (initial
// sizes, Min, Max), as env/infer/mm bounds a pool.
const maxMMPool = 1 << 16

// validate checks an mm-rl setting's structure against its Meta: each
// problem is named by its meta.json field (mm.profile.encode_seconds).
// What the fields mean to a server (a model it knows, an observation it
// computes) the server checks.
func (s *MMScale) validate(m Meta) error {
	bad := func(field string, format string, args ...any) error {
		return fmt.Errorf("mm.%s: %s", field, fmt.Sprintf(format, args...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if m.Env != MMRLEnv {
		return fmt.Errorf("mm: present in a checkpoint of env %q, want %q", m.Env, MMRLEnv)
	}
	if strings.TrimSpace(s.Model) == "" {
		return bad("model", "empty")
	}
	if len(s.Observation) != m.ObsDim {
		return bad("observation", "%d names for obs_dim %d", len(s.Observation), m.ObsDim)
	}
	for i, n := range s.Observation {
		if strings.TrimSpace(n) == "" {
			return bad(fmt.Sprintf("observation[%d]", i), "empty")
		}
	}
	if len(s.Factors) == 0 || len(s.Factors)*len(s.Factors) != m.Actions {
		return bad("factors", "%d factors for %d actions, want actions = factors^2", len(s.Factors), m.Actions)
	}
	for i, f := range s.Factors {
		if !(f > 0) || !finite(f) {
			return bad(fmt.Sprintf("factors[%d]", i), "%v, want a finite factor > 0", f)
		}
	}
	if s.RuleAction < 0 || s.RuleAction >= m.Actions {
		return bad("rule_action", "%d, want 0..%d", s.RuleAction, m.Actions-1)
	}
	p := s.Profile
	for _, f := range []struct {
		name string
		x    float64
	}{{"image_tokens_per_sec", p.ImageTokensPerSec}, {"text_tokens_per_sec", p.TextTokensPerSec}, {"mono_requests_per_sec", p.MonoRequestsPerSec}, {"encode_seconds", p.EncodeSeconds}} {
		if !(f.x > 0) || !finite(f.x) {
			return bad("profile."+f.name, "%v, want a finite value > 0", f.x)
		}
	}
	r := s.Rule
	switch {
	case !(r.Period > 0) || !finite(r.Period):
		return bad("rule.period", "%v, want a finite period > 0 s", r.Period)
	case !(r.Monitor > 0) || r.Monitor > r.Period:
		return bad("rule.monitor", "%v, want a window in (0, period %v] s", r.Monitor, r.Period)
	case !(r.Threshold >= 0 && r.Threshold <= 1):
		return bad("rule.threshold", "%v, want an attainment in [0, 1]", r.Threshold)
	case r.Min < 0 || r.Min > maxMMPool:
		return bad("rule.min", "%d, want 0..%d", r.Min, maxMMPool)
	case r.Max < 0 || r.Max > maxMMPool || (r.Max > 0 && r.Max < r.Min):
		return bad("rule.max", "%d, want 0 (no bound) or min %d..%d", r.Max, r.Min, maxMMPool)
	case !(r.SLOFactor > 0) || !finite(r.SLOFactor):
		return bad("rule.slo_factor", "%v, want a finite factor > 0", r.SLOFactor)
	case !(r.SLOText >= 0) || !finite(r.SLOText):
		return bad("rule.slo_text", "%v, want a finite reference >= 0 s", r.SLOText)
	case !(r.SLOImage >= 0) || !finite(r.SLOImage):
		return bad("rule.slo_image", "%v, want a finite reference >= 0 s", r.SLOImage)
	case !(r.Target > 0) || !finite(r.Target):
		return bad("rule.target", "%v, want a finite share > 0", r.Target)
	case r.Stabilize < 1 || r.Stabilize > 1<<10:
		return bad("rule.stabilize", "%d, want 1..1024 periods", r.Stabilize)
	case r.InitialImage < 0 || r.InitialImage > maxMMPool:
		return bad("rule.initial_image", "%d, want 0..%d", r.InitialImage, maxMMPool)
	case r.InitialText < 0 || r.InitialText > maxMMPool:
		return bad("rule.initial_text", "%d, want 0..%d", r.InitialText, maxMMPool)
	}
	tr := s.Training
	switch {
	case tr.Requests < 0:
		return bad("training.requests", "%d, want >= 0", tr.Requests)
	case tr.Images != "drawn" && tr.Images != "fixed896":
		return bad("training.images", "%q, want drawn or fixed896", tr.Images)
	case !(tr.Hours > 0 && tr.Hours <= 7*24):
		return bad("training.hours", "%v, want (0, 168]", tr.Hours)
	case !(tr.Penalty >= 0) || !finite(tr.Penalty):
		return bad("training.penalty", "%v, want a finite cost >= 0", tr.Penalty)
	case !(tr.RewardScale > 0) || !finite(tr.RewardScale):
		return bad("training.reward_scale", "%v, want a finite scale > 0", tr.RewardScale)
	}
	for _, d := range []struct {
		name string
		days []int
	}{{"train_days", tr.TrainDays}, {"test_days", tr.TestDays}} {
		for i, x := range d.days {
			if x < 0 || x > 6 {
				return bad(fmt.Sprintf("training.%s[%d]", d.name, i), "%d, want a day 0..6", x)
			}
		}
	}
	g := s.Gate
	switch {
	case g.Episodes < 0:
		return bad("gate.episodes", "%d, want >= 0", g.Episodes)
	case g.Converged != m.Converged:
		return bad("gate.converged", "%v, but the checkpoint's converged is %v", g.Converged, m.Converged)
	case g.Converged && g.Episodes == 0:
		return bad("gate.converged", "true with no held-out episodes")
	}
	for _, f := range []struct {
		name string
		x    float64
	}{{"mean_gain", g.MeanGain}, {"lower", g.Lower}, {"margin", g.Margin}, {"confidence", g.Confidence},
		{"gpu_hours", g.GPUHours}, {"attainment", g.Attainment}, {"rule_gpu_hours", g.RuleGPUHours}, {"rule_attainment", g.RuleAttainment}} {
		if !finite(f.x) {
			return bad("gate."+f.name, "%v, want a finite number", f.x)
		}
	}
	return nil
}
