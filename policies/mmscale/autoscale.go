package mmscale

import (
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/infer/mm/autoscale"
)

// The simulator's side of autoscaling (what a scaler observes and
// returns, the rule's settings, the driver that starts and drains
// instances) lives in env/infer/mm/autoscale, where env/mmgym reaches it
// too; these names keep the rules' callers as they were.
type (
	// Sizes is autoscale.Sizes: a deployment's pool sizes.
	Sizes = autoscale.Sizes
	// Profile is autoscale.Profile: one instance's offline capacities.
	Profile = autoscale.Profile
	// Window is autoscale.Window: what a scaler observes.
	Window = autoscale.Window
	// Rates is autoscale.Rates: loads a second.
	Rates = autoscale.Rates
	// Scaler is autoscale.Scaler: what the driver calls.
	Scaler = autoscale.Scaler
	// Config is autoscale.Config: the scaling rule's settings.
	Config = autoscale.Config
	// Objective is autoscale.Objective: a request's TTFT objective.
	Objective = autoscale.Objective
	// Sample is autoscale.Sample: one monitoring window's state.
	Sample = autoscale.Sample
	// Outcome is autoscale.Outcome: a driven run's result.
	Outcome = autoscale.Outcome
	// Driver is autoscale.Driver: Run's loop stepped by the caller.
	Driver = autoscale.Driver
)

// MaxTarget bounds Config.Target (autoscale.MaxTarget).
const MaxTarget = autoscale.MaxTarget

// ErrBadConfig is returned for a scaler's invalid settings or profile
// (autoscale.ErrBadConfig).
var ErrBadConfig = autoscale.ErrBadConfig

// DefaultConfig is ModServe's rule (autoscale.DefaultConfig).
func DefaultConfig() Config { return autoscale.DefaultConfig() }

// Run drives s, the simulation of reqs, to its end under router r and
// scaler sc (autoscale.Run).
func Run(s *mm.Sim, reqs []mm.Request, r mm.Router, sc Scaler, cfg Config) (Outcome, error) {
	return autoscale.Run(s, reqs, r, sc, cfg)
}

// NewDriver returns a driver of s, the simulation of reqs, under router
// r, with the pools set to initial (autoscale.NewDriver).
func NewDriver(s *mm.Sim, reqs []mm.Request, r mm.Router, cfg Config, initial Sizes) (*Driver, error) {
	return autoscale.NewDriver(s, reqs, r, cfg, initial)
}

// scaled returns p with its capacities times f.
func scaled(p Profile, f float64) Profile {
	p.ImageTokensPerSec *= f
	p.TextTokensPerSec *= f
	p.MonoRequestsPerSec *= f
	return p
}
