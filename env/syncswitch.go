package env

import (
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/converge"
)

// Switched returns what training a job of the model under BSP up to
// progress (the share of BSP's work to the target it has done) and under
// ASP on w workers from there does to the rest of its training:
// Sync-Switch's hybrid, converge.Model.PredictSwitch at the share of the
// schedule that progress is (converge.Model.SwitchShareOf). Factor and Run
// multiply the remaining work so that the whole run trains the switched
// run's iterations to the target, X times BSP's: (X - progress) / (1 -
// progress); a run that never reaches the target trains the schedule
// (Outcome.Budget) instead of X, and its Factor is +Inf. Accuracy is the
// switched run's final accuracy, for the whole run. A family without
// switched measurements, or an Assume that answers for ASP, gives
// Outcome's ASP answer, as if the job had trained under ASP from the
// start. progress must be in [0, 1).
func (c *Convergence) Switched(model string, w int, progress float64) (SyncOutcome, error) {
	asp := Sync{Kind: ASP}
	if !(progress >= 0 && progress < 1) {
		return SyncOutcome{}, fmt.Errorf("env: switch to ASP at progress %v, want [0, 1)", progress)
	}
	if c.Assume != nil {
		if _, ok := c.Assume(model, asp, w); ok {
			return c.Outcome(model, asp, w)
		}
	}
	m := c.Model
	if m == nil {
		m = converge.Default()
	}
	fam := c.families(model).Staleness
	if f, ok := m.Families[fam]; !ok || f.Switch == nil {
		return c.Outcome(model, asp, w)
	}
	share, err := m.SwitchShareOf(fam, progress)
	if err != nil {
		return SyncOutcome{}, err
	}
	out, err := m.PredictSwitch(fam, w, share, c.Band)
	if err != nil {
		return SyncOutcome{}, fmt.Errorf("env: BSP then ASP at progress %v on %d workers (model %s, family %s): %w", progress, w, model, fam, err)
	}
	total := out.IterFactor
	if !out.Reached {
		total = out.Budget
	}
	// PredictSwitch never answers less than the examples already spent
	// under BSP; when it answers exactly those (the target reached at the
	// switch) the rest is a vanishing amount of work, not none, so that
	// the job's rate stays finite.
	rest := max((total-progress)/(1-progress), 1e-9)
	o := SyncOutcome{Factor: rest, Run: rest, Accuracy: out.FinalAccuracy, Reached: out.Reached, Diverged: out.Diverged}
	if !out.Reached {
		o.Factor = math.Inf(1)
	}
	if bsp, err := c.Outcome(model, Sync{}, w); err == nil {
		o.Loss, o.Noise = bsp.Accuracy-o.Accuracy, bsp.Noise
	}
	if !(o.Run > 0) || math.IsInf(o.Run, 0) {
		return SyncOutcome{}, fmt.Errorf("env: BSP then ASP at progress %v on %d workers (model %s, family %s): no finite run length", progress, w, model, fam)
	}
	return o, nil
}
