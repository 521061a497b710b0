package policies

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/env"
)

// SyncRule chooses the sync strategy of the placements another policy
// made: the part after the "+" of a composed policy name
// "<placement>+<sync>" (see Registry.Factory). It separates placement from
// sync choice, so that one placement heuristic can be compared under
// several sync rules.
type SyncRule interface {
	// Assign sets ds[i].Sync for every decision of ds that places a job
	// (non-empty Nodes), taking the decisions in order (a rule may count
	// the load of the earlier ones); ds were made at v.
	Assign(v *env.View, ds []env.Decision) error
}

// SyncSwitcher is an optional ability of a SyncRule whose choice for a
// job changes while the job runs (Sync-Switch: BSP, then ASP). Switch
// returns ds with a decision appended for every running job that ds
// leaves alone and whose strategy the rule changes now: the job's own
// nodes with the new Sync (the simulator restarts it, paying the restart
// delay, as a framework restarts training from a checkpoint to change
// its synchronization).
type SyncSwitcher interface {
	Switch(v *env.View, ds []env.Decision) []env.Decision
}

// SyncRuleFactory builds a fresh sync rule for one run.
type SyncRuleFactory func(cfg Config) (SyncRule, error)

// WithSyncRule returns p with the sync strategy of every placement it
// makes set by r.
func WithSyncRule(p Policy, r SyncRule) Policy { return withSyncRule{p, r} }

type withSyncRule struct {
	p Policy
	r SyncRule
}

func (w withSyncRule) Schedule(v *env.View) ([]env.Decision, error) {
	ds, err := w.p.Schedule(v)
	if err != nil {
		return ds, err
	}
	if err := w.r.Assign(v, ds); err != nil {
		return ds, err
	}
	if s, ok := w.r.(SyncSwitcher); ok {
		ds = s.Switch(v, ds)
	}
	return ds, nil
}

// ruleKey prefixes the registry key of a sync rule. Policy names may not
// contain "+", so no policy's key starts with it.
const ruleKey = "+"

// RegisterSyncRule adds a sync rule under name, for composed names
// "<policy>+<name>". A name may be registered once, may not contain "+",
// and may not spell a fixed strategy (env.ParseSync).
func (r Registry) RegisterSyncRule(name string, f SyncRuleFactory) error {
	if name == "" || strings.Contains(name, "+") {
		return fmt.Errorf("policies: sync rule name %q: want a non-empty name without %q", name, "+")
	}
	if _, err := env.ParseSync(name); err == nil {
		return fmt.Errorf("policies: sync rule name %q spells a fixed strategy", name)
	}
	if _, ok := r[ruleKey+name]; ok {
		return fmt.Errorf("policies: sync rule %q registered twice", name)
	}
	r[ruleKey+name] = func(cfg Config) (Policy, error) {
		rule, err := f(cfg)
		if err != nil {
			return nil, err
		}
		return ruleOnly{name, rule}, nil
	}
	return nil
}

// ruleOnly is how a sync rule sits in the registry's map: a Policy that
// only a composed name unwraps.
type ruleOnly struct {
	name string
	rule SyncRule
}

func (r ruleOnly) Schedule(*env.View) ([]env.Decision, error) {
	return nil, fmt.Errorf("policies: %q is a sync rule, not a policy: name it <policy>+%s", r.name, r.name)
}

// SyncRuleNames returns the registered sync rules' names, sorted.
func (r Registry) SyncRuleNames() []string {
	var names []string
	for _, k := range r.keys() {
		if n, ok := strings.CutPrefix(k, ruleKey); ok {
			names = append(names, n)
		}
	}
	return names
}

// Syntax describes the names Factory accepts, for help texts: the
// registered policies, then the composed form with its sync choices.
func (r Registry) Syntax() string {
	return fmt.Sprintf("%s; or <policy>+<sync> with <sync> one of bsp, asp, ssp(S), local(H), %s",
		strings.Join(r.Names(), ", "), strings.Join(r.SyncRuleNames(), ", "))
}

// Factory returns the factory of a policy name: a registered policy, or a
// composed name "<policy>+<sync>": the registered policy with the sync
// strategy of every placement it makes set by <sync>, either a fixed
// strategy in its canonical spelling (bsp, asp, ssp(S), local(H), as
// env.Sync.String writes it; policies.WithSync) or a registered sync rule
// (WithSyncRule). The sync part overrides any strategy the policy chooses
// itself, so "strn+bsp" is STRN's placement under BSP. An unknown or
// malformed name returns an error wrapping ErrUnknownPolicy that says
// what is wrong.
func (r Registry) Factory(name string) (Factory, error) {
	if f, ok := r[name]; ok && !strings.HasPrefix(name, ruleKey) {
		return f, nil
	}
	base, sync, composed := strings.Cut(name, "+")
	if !composed {
		return nil, fmt.Errorf("%w %q (have %s)", ErrUnknownPolicy, name, r.Syntax())
	}
	switch {
	case base == "" || sync == "":
		return nil, fmt.Errorf("%w %q: want <policy>+<sync>", ErrUnknownPolicy, name)
	case strings.Contains(sync, "+"):
		return nil, fmt.Errorf("%w %q: one \"+\" only: <policy>+<sync>", ErrUnknownPolicy, name)
	}
	pf, ok := r[base]
	if !ok {
		return nil, fmt.Errorf("%w %q in %q (have %v)", ErrUnknownPolicy, base, name, r.Names())
	}
	if rf, ok := r[ruleKey+sync]; ok {
		return func(cfg Config) (Policy, error) {
			p, err := pf(cfg)
			if err != nil {
				return nil, err
			}
			h, err := rf(cfg)
			if err != nil {
				return nil, err
			}
			return WithSyncRule(p, h.(ruleOnly).rule), nil
		}, nil
	}
	s, err := env.ParseSync(sync)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %q is neither a sync strategy (bsp, asp, ssp(S), local(H)) nor a sync rule (%s)",
			ErrUnknownPolicy, name, sync, strings.Join(r.SyncRuleNames(), ", "))
	}
	if s.String() != sync {
		return nil, fmt.Errorf("%w %q: write the sync strategy %q as %q", ErrUnknownPolicy, name, sync, s.String())
	}
	return func(cfg Config) (Policy, error) {
		p, err := pf(cfg)
		if err != nil {
			return nil, err
		}
		return WithSync(p, s), nil
	}, nil
}
