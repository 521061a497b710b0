package direct

import (
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/policies"
)

// Greedy is GreedyNet over net's single-observation forward pass
// (nn.Infer): the valid action of largest output, lowest index on ties.
// It reads net's weights at each call and keeps scratch space, so the
// Actor is not safe for concurrent use. It panics when net has layers
// nn.Infer cannot run.
func Greedy(net *nn.MLP) Actor {
	f, err := nn.NewInfer(net)
	if err != nil {
		panic(fmt.Sprintf("direct: %v", err))
	}
	return GreedyNet(f)
}

// nn.Infer is the Network a checkpoint's network runs as.
var _ Network = (*nn.Infer)(nil)

// Names of the direct policies, as checkpoints.Meta.Env and the policy
// registry spell them.
const (
	// STRNRL is STRN's learned variant: rack groups.
	STRNRL = "strn-rl"
	// SASRL is SAS's learned variant: groups by predicted load, and PS
	// load reassignment.
	SASRL = "sas-rl"
)

// Hyperparameter keys of a direct checkpoint's meta.
const (
	keyDirect   = "direct"        // 1: a direct policy (not a candidate re-ranker)
	keyGroups   = "groups"        // sched.Config.Groups
	keyLoad     = "grouping_load" // 1: sched.GroupLoad
	keyHold     = "hold"          // 1: sched.Config.Hold
	keyHoldLim  = "hold_limit_s"  // sched.Config.HoldLimit
	keyRefresh  = "refresh_s"     // sched.Config.Refresh
	keyPS       = "ps_rebalance"  // 1: sched.Config.PSRebalance
	keySyncs    = "syncs"         // number of strategies; each is sync<i>_kind, sync<i>_param
	keySyncKind = "sync%d_kind"
	keySyncPar  = "sync%d_param"
)

// Config returns the encoder settings of name (STRNRL or SASRL) with
// groups group slots and hold.
func Config(name string, groups int, hold bool) (sched.Config, error) {
	cfg := sched.Config{Groups: groups, Hold: hold}
	switch name {
	case STRNRL:
		cfg.Grouping = sched.GroupRack
	case SASRL:
		cfg.Grouping, cfg.PSRebalance = sched.GroupLoad, true
	default:
		return cfg, fmt.Errorf("direct: unknown policy %q (want %s or %s)", name, STRNRL, SASRL)
	}
	return cfg, nil
}

// PutConfig records cfg (defaults filled in) in a checkpoint's
// hyperparameters.
func PutConfig(h map[string]float64, cfg sched.Config) error {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	b := func(x bool) float64 {
		if x {
			return 1
		}
		return 0
	}
	h[keyDirect], h[keyGroups], h[keyLoad], h[keyHold] = 1, float64(cfg.Groups), b(cfg.Grouping == sched.GroupLoad), b(cfg.Hold)
	h[keyHoldLim], h[keyRefresh], h[keyPS], h[keySyncs] = cfg.HoldLimit, cfg.Refresh, b(cfg.PSRebalance), float64(len(cfg.Syncs))
	for i, s := range cfg.Syncs {
		par := 0
		switch s.Kind {
		case env.SSP:
			par = s.Staleness
		case env.LocalSGD:
			par = s.Period
		}
		h[fmt.Sprintf(keySyncKind, i)], h[fmt.Sprintf(keySyncPar, i)] = float64(s.Kind), float64(par)
	}
	return nil
}

// IsDirect reports whether a checkpoint's meta describes a direct policy.
func IsDirect(m checkpoints.Meta) bool {
	return (m.Env == STRNRL || m.Env == SASRL) && m.Hyperparams[keyDirect] == 1
}

// ConfigOf reads the encoder settings a direct checkpoint was trained
// with.
func ConfigOf(m checkpoints.Meta) (sched.Config, error) {
	if !IsDirect(m) {
		return sched.Config{}, fmt.Errorf("direct: checkpoint of %s/%s is not a direct policy", m.Env, m.Algo)
	}
	h := m.Hyperparams
	whole := func(k string, lo, hi float64) (int, error) {
		x, ok := h[k]
		if !ok || x != math.Trunc(x) || x < lo || x > hi {
			return 0, fmt.Errorf("%w: hyperparams.%s = %v, want a whole number in [%v, %v]", checkpoints.ErrCorrupt, k, x, lo, hi)
		}
		return int(x), nil
	}
	cfg := sched.Config{Grouping: sched.GroupRack}
	var err error
	if cfg.Groups, err = whole(keyGroups, 1, 64); err != nil {
		return cfg, err
	}
	if h[keyLoad] == 1 {
		cfg.Grouping = sched.GroupLoad
	}
	cfg.Hold, cfg.PSRebalance = h[keyHold] == 1, h[keyPS] == 1
	cfg.HoldLimit, cfg.Refresh = h[keyHoldLim], h[keyRefresh]
	n, err := whole(keySyncs, 1, 16)
	if err != nil {
		return cfg, err
	}
	for i := range n {
		kind, err := whole(fmt.Sprintf(keySyncKind, i), 0, float64(env.LocalSGD))
		if err != nil {
			return cfg, err
		}
		par, err := whole(fmt.Sprintf(keySyncPar, i), 0, 1<<20)
		if err != nil {
			return cfg, err
		}
		s := env.Sync{Kind: env.SyncKind(kind)}
		switch s.Kind {
		case env.SSP:
			s.Staleness = par
		case env.LocalSGD:
			s.Period = par
		}
		cfg.Syncs = append(cfg.Syncs, s)
	}
	full, err := cfg.WithDefaults()
	if err != nil {
		return cfg, fmt.Errorf("%w: %v", checkpoints.ErrCorrupt, err)
	}
	if dim := sched.ObsDim(full.Groups, len(full.Syncs)); dim != m.ObsDim || full.Actions() != m.Actions {
		return cfg, fmt.Errorf("%w: obs_dim %d, actions %d do not match the encoding (%d, %d)", checkpoints.ErrCorrupt, m.ObsDim, m.Actions, dim, full.Actions())
	}
	return cfg, nil
}

// netName is the network a direct checkpoint decides with.
func netName(m checkpoints.Meta) string {
	if slices.Contains(m.Networks, "q") {
		return "q"
	}
	return "actor"
}

// FromCheckpoint returns a constructor of fresh policies deciding with a
// loaded direct checkpoint's network (its actor, or its Q-network for
// DQN). The policies share one read-only copy of the weights, each with
// its own scratch space (nn.Infer), so building one costs little and
// policies on different goroutines do not interfere.
func FromCheckpoint(m checkpoints.Meta, nets map[string]*nn.MLP) (func() policies.Policy, error) {
	cfg, err := ConfigOf(m)
	if err != nil {
		return nil, err
	}
	name := netName(m)
	net, ok := nets[name]
	if !ok {
		return nil, fmt.Errorf("%w: no network %q", checkpoints.ErrCorrupt, name)
	}
	c := checkpoints.Build(m.ObsDim, m.Hidden, m.Actions, m.Activation)
	src := net.Params()
	if len(src) != len(c.Params()) {
		return nil, fmt.Errorf("%w: network %q has %d tensors, want %d", checkpoints.ErrCorrupt, name, len(src), len(c.Params()))
	}
	for i, p := range c.Params() {
		if len(p.Value) != len(src[i].Value) {
			return nil, fmt.Errorf("%w: network %q tensor %s has %d values, want %d", checkpoints.ErrCorrupt, name, p.Name, len(src[i].Value), len(p.Value))
		}
		copy(p.Value, src[i].Value)
	}
	if _, err := nn.NewInfer(c); err != nil {
		return nil, fmt.Errorf("%w: %v", checkpoints.ErrCorrupt, err)
	}
	return func() policies.Policy { return New(cfg, Greedy(c)) }, nil
}

// Load reads a direct policy's checkpoint directory: its meta and a
// constructor of fresh policies (serve's PolicyLoader).
func Load(dir string) (checkpoints.Meta, func() policies.Policy, error) {
	m, nets, err := checkpoints.Load(dir)
	if err != nil {
		return m, nil, err
	}
	if !IsDirect(m) {
		return m, nil, fmt.Errorf("direct: %s: a checkpoint of %s/%s, not of a direct policy (%s or %s)", dir, m.Env, m.Algo, STRNRL, SASRL)
	}
	f, err := FromCheckpoint(m, nets)
	if err != nil {
		return m, nil, fmt.Errorf("direct: %s: %w", dir, err)
	}
	return m, f, nil
}
