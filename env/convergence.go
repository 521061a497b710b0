package env

import (
	"fmt"
	"math"
	"sync"

	"github.com/drover-sched/drover/env/converge"
)

// Convergence is how a job's synchronization strategy changes the
// iterations it needs to reach its target and the accuracy it ends with:
// the convergence model fitted to measured training curves (package
// env/converge), taken at one end of its confidence band, and the map from
// Drover's models to the families measured. The zero value is the default
// fit at its point estimates.
//
// A job's target is the accuracy at which its staleness family's cost of
// staleness was measured (converge.StalenessFit.Target: 0.85 for ResNet32
// on CIFAR-10, 0.65 for ResNet50 on CIFAR-100), and its accuracy is on
// that family's scale: under local SGD(H) it ends at its BSP accuracy less
// the loss its local-SGD family measured against H = 1. A strategy whose
// run ends below the target, or diverges, never reaches it: the job then trains for
// the measured schedule's length (converge.Outcome.Budget times BSP's
// iterations to the target, from its staleness family) and ends having
// missed it (JobResult.Reached false, its TTA +Inf). Local SGD's
// iterations to a target it reaches are BSP's: no source measures its
// curves (converge's doc).
type Convergence struct {
	// Model is the fitted model; nil means converge.Default().
	Model *converge.Model
	// Band is the end of each parameter's 95% interval the simulator uses
	// (converge.BandFit: the point estimates).
	Band converge.Band
	// Families maps a job's model (JobSpec.Model) to the measured families
	// that stand for it; nil means DefaultFamilies. A model it does not
	// name takes FallbackFamilies.
	Families map[string]Families
	// Assume, when set, answers before the fitted model does: a what-if
	// study's own outcomes (a strategy no measurement covers, a model
	// measured elsewhere). Its answers are the caller's assumptions, not
	// measurements; false leaves the question to the model.
	Assume func(model string, s Sync, w int) (SyncOutcome, bool)

	mu    sync.Mutex
	cache map[convKey]SyncOutcome
}

type convKey struct {
	model   string
	sync    Sync
	workers int
}

// Families names the measured convergence families that stand for one
// model: one for staleness (ASP, SSP) and one for local SGD; no source
// measures both for one model.
type Families struct {
	// Staleness is the family of ASP's and SSP's costs, the target and the
	// schedule's length; Local the family of local SGD's.
	Staleness, Local string
}

// DefaultFamilies maps Drover's six Pollux models to the convergence
// families measured (env/converge), by the closest measured model:
// cifar10 (Pollux's ResNet18 on CIFAR-10) takes ResNet32 on CIFAR-10
// (the same data set and residual family) for staleness; imagenet
// (ResNet50 on ImageNet) takes ResNet50 on CIFAR-100 (the same network)
// for staleness and ResNet50 on ImageNet (post-local SGD, PaddleFleetX)
// for local SGD; bert (BERT fine-tuned on SQuAD) takes BERT-large
// fine-tuned on SQuAD for local SGD. Every other pairing takes the
// fallback's.
var DefaultFamilies = map[string]Families{
	"cifar10":  {Staleness: "resnet32-cifar10"},
	"imagenet": {Staleness: "resnet50-cifar100", Local: "resnet50-imagenet"},
	"bert":     {Local: "bert-large-squad"},
}

// FallbackFamilies are the families of a model (or a part of one) no
// measurement covers: the ones whose measured costs are the larger, so
// that no strategy is credited with a gain no measurement shows. For
// staleness, ResNet32 on CIFAR-10 (ASP on 8 workers needed 4x BSP's
// examples to the target and diverged on 16); for local SGD, ResNet50 on
// ImageNet (0.09 points of final accuracy per step of period, against
// 0.03 and none for the BERT fine-tunings).
var FallbackFamilies = Families{Staleness: "resnet32-cifar10", Local: "resnet50-imagenet"}

// SyncOutcome is what a strategy does to one job, as the simulator runs it.
type SyncOutcome struct {
	// Factor multiplies the iterations to the target: +Inf when the
	// strategy never reaches it.
	Factor float64
	// Run multiplies the iterations the job trains: Factor, or the
	// measured schedule's length when the target is never reached.
	Run float64
	// Accuracy is the accuracy (a fraction) the job ends with; NaN when
	// training diverges.
	Accuracy float64
	// Reached says whether the strategy reaches the target; Diverged
	// whether training fails.
	Reached, Diverged bool
	// Loss is the final accuracy lost against the synchronous runs of the
	// same family (BSP's, or local SGD's at H = 1), and Noise half the
	// 95% interval of their mean: a loss within Noise is one the
	// measurements cannot tell from none.
	Loss, Noise float64
}

// DefaultConvergence is the default fit at its point estimates: what a
// simulator runs without Workers.Convergence, and what policies believe
// of a model that has no convergence model of its own.
var DefaultConvergence = &Convergence{}

// believer is a model with a convergence model policies can read
// (Drover.Believed).
type believer interface {
	Believed() *Convergence
}

// Believed returns the convergence model a policy weighs strategies by
// when it schedules on m (a View's Model, or a Prober): m's own
// measurements, families and assumptions at the fit's point estimates
// (Drover.Believed), or DefaultConvergence. A policy knows the fit, not
// where in its band the truth lies: the simulator may run at either end.
func Believed(m any) *Convergence {
	if b, ok := m.(believer); ok {
		if c := b.Believed(); c != nil {
			return c
		}
	}
	return DefaultConvergence
}

// families returns the families of a job's model, the fallback's where
// it names none.
func (c *Convergence) families(model string) Families {
	fams := c.Families
	if fams == nil {
		fams = DefaultFamilies
	}
	f := fams[model]
	if f.Staleness == "" {
		f.Staleness = FallbackFamilies.Staleness
	}
	if f.Local == "" {
		f.Local = FallbackFamilies.Local
	}
	return f
}

// Outcome returns what strategy s does to a job of the model on w
// workers. It is safe for concurrent use and caches its answers.
func (c *Convergence) Outcome(model string, s Sync, w int) (SyncOutcome, error) {
	k := convKey{model, s, w}
	c.mu.Lock()
	o, ok := c.cache[k]
	c.mu.Unlock()
	if ok {
		return o, nil
	}
	if c.Assume != nil {
		if o, ok := c.Assume(model, s, w); ok {
			return o, nil
		}
	}
	m := c.Model
	if m == nil {
		m = converge.Default()
	}
	fams := c.families(model)
	fam := fams.Staleness
	bad := func(err error) (SyncOutcome, error) {
		return SyncOutcome{}, fmt.Errorf("env: convergence of %s on %d workers (model %s, family %s): %w", s, w, model, fam, err)
	}
	st, err := m.Predict(fam, converge.Strategy{}, w, 0, 0, c.Band)
	if err != nil {
		return bad(err)
	}
	budget := st.Budget
	if s.Kind == LocalSGD {
		if o, err = c.localSGD(m, fams, s, w, st); err != nil {
			fam = fams.Local
			return bad(err)
		}
	} else {
		// Toward the family's own target (0).
		out, err := m.Predict(fam, converge.Strategy{Kind: converge.StrategyKind(s.Kind), Staleness: s.Staleness, Period: s.Period}, w, 0, 0, c.Band)
		if err != nil {
			return bad(err)
		}
		o = SyncOutcome{Factor: out.IterFactor, Run: out.IterFactor, Accuracy: out.FinalAccuracy, Reached: out.Reached, Diverged: out.Diverged}
		// The synchronous reference: BSP's final accuracy at the band.
		o.Loss = st.FinalAccuracy - out.FinalAccuracy
		if f := m.Families[fam]; f.Staleness != nil {
			o.Noise = (f.Staleness.BSPFinal.Hi - f.Staleness.BSPFinal.Lo) / 2
		}
	}
	if !o.Reached {
		o.Run = budget
	}
	if !(o.Run > 0) || math.IsInf(o.Run, 0) {
		return SyncOutcome{}, fmt.Errorf("env: convergence of %s on %d workers (model %s, family %s): no finite run length", s, w, model, fam)
	}
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[convKey]SyncOutcome{}
	}
	c.cache[k] = o
	c.mu.Unlock()
	return o, nil
}

// localSGD returns what local SGD does to a job whose BSP run (st, from
// its staleness family) the local-SGD family's measured loss is taken
// from: the job ends at its BSP accuracy less the loss local SGD(H) shows
// against local SGD(1) in its local family (so that a job's accuracy is
// always on its own family's scale), reaches its staleness family's
// target when that is still at or above it (in BSP's iterations: no
// source measures local SGD's curves), and misses it otherwise.
func (c *Convergence) localSGD(m *converge.Model, fams Families, s Sync, w int, st converge.Outcome) (SyncOutcome, error) {
	sf, ok := m.Families[fams.Staleness]
	if !ok || sf.Staleness == nil {
		return SyncOutcome{}, fmt.Errorf("%w: staleness (the target) for family %q", converge.ErrNotMeasured, fams.Staleness)
	}
	lf, ok := m.Families[fams.Local]
	if !ok || lf.Local == nil {
		return SyncOutcome{}, fmt.Errorf("%w: local SGD for family %q", converge.ErrNotMeasured, fams.Local)
	}
	out, err := m.Predict(fams.Local, converge.Strategy{Kind: converge.LocalSGD, Period: s.Period}, w, 0, 0, c.Band)
	if err != nil {
		return SyncOutcome{}, err
	}
	sync1, err := m.Predict(fams.Local, converge.Strategy{Kind: converge.LocalSGD, Period: 1}, w, 0, 0, c.Band)
	if err != nil {
		return SyncOutcome{}, err
	}
	loss := sync1.FinalAccuracy - out.FinalAccuracy
	o := SyncOutcome{Factor: out.IterFactor, Run: out.IterFactor, Accuracy: st.FinalAccuracy - loss, Reached: true,
		Loss: loss, Noise: (lf.Local.SyncFinal.Hi - lf.Local.SyncFinal.Lo) / 2}
	if !(o.Accuracy >= sf.Staleness.Target) {
		o.Factor, o.Reached = math.Inf(1), false
	}
	return o, nil
}

// Keeps says whether strategy s keeps a job of the model on w workers as
// accurate as the synchronous runs, as far as the measurements can tell:
// it reaches the target and its expected loss of final accuracy is within
// half the 95% interval of their mean (SyncOutcome.Noise). BSP keeps.
func (c *Convergence) Keeps(model string, s Sync, w int) bool {
	if s.Kind == BSP {
		return true
	}
	o, err := c.Outcome(model, s, w)
	return err == nil && o.Reached && !(o.Loss > o.Noise)
}

// Check returns an error when the model has no answer for strategy s on a
// job of the model (a strategy no measurement covers, such as local SGD
// while none is measured).
func (c *Convergence) Check(model string, s Sync, w int) error {
	_, err := c.Outcome(model, s, max(w, 1))
	return err
}

// Factor returns the factor by which s multiplies the iterations a job
// of the model on w workers needs to reach its target: 1 for BSP, +Inf
// for a strategy that never reaches it or that no measurement covers. It
// is what policies weigh strategies by (on Believed's model).
func (c *Convergence) Factor(model string, s Sync, w int) float64 {
	if s.Kind == BSP {
		return 1
	}
	o, err := c.Outcome(model, s, w)
	if err != nil {
		return math.Inf(1)
	}
	return o.Factor
}

// RunFactor is Factor with a strategy that never reaches the target
// counted at the length it trains (SyncOutcome.Run), finite wherever the
// model answers: what an observation can carry.
func (c *Convergence) RunFactor(model string, s Sync, w int) float64 {
	if s.Kind == BSP {
		return 1
	}
	o, err := c.Outcome(model, s, w)
	if err != nil {
		return math.Inf(1)
	}
	return o.Run
}

// atFit returns c at the fit's point estimates (c itself when it is).
func (c *Convergence) atFit() *Convergence {
	if c.Band == converge.BandFit {
		return c
	}
	return &Convergence{Model: c.Model, Families: c.Families, Assume: c.Assume}
}
