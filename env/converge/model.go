package converge

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// StrategyKind is a synchronization strategy, as env.SyncKind names them.
type StrategyKind uint8

// The strategies.
const (
	// BSP is bulk-synchronous training.
	BSP StrategyKind = iota
	// ASP is asynchronous training.
	ASP
	// SSP is stale-synchronous training with a staleness bound.
	SSP
	// LocalSGD averages models every Period iterations.
	LocalSGD
)

// Strategy is a synchronization strategy with its parameter.
type Strategy struct {
	// Kind is the strategy.
	Kind StrategyKind
	// Staleness is SSP's bound s, in iterations.
	Staleness int
	// Period is local SGD's averaging period H, in iterations.
	Period int
}

// AvgStaleness returns the average staleness, in iterations, of the
// gradients a strategy applies with w workers, in env/sync.go's convention:
// 0 for BSP and local SGD, w-1 for ASP (each update was computed on
// parameters the other w-1 workers have since changed), min(s, w-1) for
// SSP(s).
func AvgStaleness(s Strategy, w int) float64 {
	switch s.Kind {
	case ASP:
		return float64(max(w-1, 0))
	case SSP:
		return float64(min(s.Staleness, max(w-1, 0)))
	}
	return 0
}

// Band picks which end of each parameter's confidence interval a
// prediction uses.
type Band uint8

// The bands. Low and High are stated as the cost to the strategy or batch
// size being judged, not as the parameters' own ends: Low takes each
// parameter at the end of its interval that costs least (a smaller
// accuracy drop and slowdown, a larger noise scale, a later divergence),
// High at the end that costs most.
const (
	BandFit Band = iota
	BandLow
	BandHigh
)

// String returns the band's name as a command line spells it.
func (b Band) String() string {
	switch b {
	case BandLow:
		return "low"
	case BandHigh:
		return "high"
	}
	return "fit"
}

// ParseBand parses "low", "fit" or "high".
func ParseBand(v string) (Band, error) {
	switch v {
	case "fit", "":
		return BandFit, nil
	case "low":
		return BandLow, nil
	case "high":
		return BandHigh, nil
	}
	return BandFit, fmt.Errorf("converge: unknown band %q (want low, fit or high)", v)
}

// at returns p at band b, where costUp says whether a larger value costs
// more.
func (p Param) at(b Band, costUp bool) float64 {
	switch {
	case b == BandLow && costUp, b == BandHigh && !costUp:
		return p.Lo
	case b == BandHigh && costUp, b == BandLow && !costUp:
		return p.Hi
	}
	return p.Value
}

// ErrNotMeasured is returned by Model.Predict for a strategy, family or
// batch size that no measurement in the table covers.
var ErrNotMeasured = errors.New("converge: not measured")

// Outcome is what the model predicts for a training run.
type Outcome struct {
	// IterFactor is the iterations to the target relative to BSP at the
	// family's reference batch size: +Inf when the run never reaches it.
	IterFactor float64
	// FinalAccuracy is the accuracy (fraction) the run ends with, NaN
	// when it diverges or when the family's final accuracy is not
	// measured.
	FinalAccuracy float64
	// Reached says whether the run reaches the target.
	Reached bool
	// Diverged says whether training fails.
	Diverged bool
	// Budget is what a run that never reaches the target spends, as a
	// factor of BSP's iterations to it: the measured schedule's length
	// (StalenessFit.Budget); NaN for a family with no staleness fit.
	Budget float64
}

// Family is a model family's fitted convergence behaviour. Any part may be
// nil: no source measures more than one for one model.
type Family struct {
	// Name is the family's name.
	Name string
	// Batch is the statistical efficiency against batch size, nil if not
	// measured.
	Batch *BatchFit
	// Staleness is the cost of stale gradients, nil if not measured.
	Staleness *StalenessFit
	// Local is the cost of local SGD's averaging period, nil if not
	// measured.
	Local *LocalSGDFit
	// Switch is what training under BSP and then ASP does (Sync-Switch's
	// hybrid), nil if not measured; it needs Staleness.
	Switch *SwitchFit
}

// Params returns the family's fitted parameters, batch first.
func (f *Family) Params() []Param {
	var ps []Param
	if f.Batch != nil {
		ps = append(ps, f.Batch.SMin, f.Batch.Noise)
	}
	if f.Staleness != nil {
		s := f.Staleness
		ps = append(ps, s.BSPFinal, s.Drop, s.Slowdown, s.Diverge, s.Budget)
	}
	if l := f.Local; l != nil {
		ps = append(ps, l.SyncFinal, l.Drop)
	}
	if f.Switch != nil {
		ps = append(ps, f.Switch.Params()...)
	}
	return ps
}

// Model is the fitted convergence model: one Family per measured model
// family.
type Model struct {
	// Families maps family names to their fits.
	Families map[string]*Family
}

// Names returns the family names in order.
func (m *Model) Names() []string {
	names := make([]string, 0, len(m.Families))
	for n := range m.Families {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Params returns every fitted parameter, by family name.
func (m *Model) Params() []Param {
	var ps []Param
	for _, n := range m.Names() {
		ps = append(ps, m.Families[n].Params()...)
	}
	return ps
}

// Predict returns the outcome of training family with strategy s on
// workers workers at global batch size batch (0 for the family's reference
// batch) toward target accuracy (a fraction; 0 for the family's own
// staleness target, or no target for local SGD), with the parameters at
// band. The iteration factor multiplies the batch-size factor (examples to
// target over the reference batch's, times reference batch over batch)
// and the staleness factor. Local SGD(H) ends at LocalSGDFit's final
// accuracy for H and reaches a target at or below it in BSP's examples
// (factor 1: only final accuracies are measured), never one above it.
// Local SGD, staleness or batch sizes a family has no fit for return
// ErrNotMeasured. The target matters only to the staleness and local SGD
// parts: a batch-size fit was measured at one target and is applied at
// every one.
func (m *Model) Predict(family string, s Strategy, workers, batch int, target float64, band Band) (Outcome, error) {
	if batch < 0 || workers < 0 || math.IsNaN(target) {
		return Outcome{}, fmt.Errorf("converge: bad prediction input: workers %d, batch %d, target %v", workers, batch, target)
	}
	f, ok := m.Families[family]
	if !ok {
		return Outcome{}, fmt.Errorf("%w: family %q", ErrNotMeasured, family)
	}
	if s.Kind == LocalSGD && s.Period < 1 {
		return Outcome{}, fmt.Errorf("converge: bad prediction input: local SGD period %d", s.Period)
	}
	if s.Kind == LocalSGD && f.Local == nil {
		return Outcome{}, fmt.Errorf("%w: local SGD for family %q", ErrNotMeasured, family)
	}
	out := Outcome{IterFactor: 1, FinalAccuracy: math.NaN(), Reached: true, Budget: math.NaN()}
	if b := f.Batch; batch != 0 {
		if b == nil {
			return Outcome{}, fmt.Errorf("%w: batch size for family %q", ErrNotMeasured, family)
		}
		smin, noise := b.SMin.Value, b.Noise.at(band, false)
		out.IterFactor *= b.epochs(batch, smin, noise) / b.epochs(b.RefBatch, smin, noise) * float64(b.RefBatch) / float64(batch)
	}
	if s.Kind == LocalSGD {
		return f.Local.predict(out, s.Period, target, band), nil
	}
	sbar := AvgStaleness(s, workers)
	st := f.Staleness
	if st == nil {
		if sbar > 0 {
			return Outcome{}, fmt.Errorf("%w: staleness for family %q", ErrNotMeasured, family)
		}
		return out, nil
	}
	if target == 0 {
		target = st.Target
	}
	a0 := st.BSPFinal.at(band, false)
	drop, slow, div := st.Drop.at(band, true), st.Slowdown.at(band, true), st.Diverge.at(band, false)
	out.FinalAccuracy = st.finalAccuracy(sbar, a0, drop, div)
	out.Diverged = math.IsNaN(out.FinalAccuracy)
	out.IterFactor *= st.examplesFactor(sbar, target, a0, drop, slow, div)
	out.Budget = st.Budget.at(band, true)
	out.Reached = !math.IsInf(out.IterFactor, 1)
	return out, nil
}

// The targets and sources of the default fits. Batch targets are percent
// (the Training-Sync-Mode files record percent), staleness targets
// fractions (Sync-Switch records fractions).
const (
	tsmResNetTarget     = 55
	tsmVGGTarget        = 75
	syncSwitchR32Target = 0.85
	syncSwitchR50Target = 0.65
	syncSwitchWorkers   = 8
	sourceTrainingSync  = "tsm"
	sourceSyncSwitch    = "syncswitch"
	familyTSMResNet     = "resnet20"
	familyTSMVGG        = "vgg16"
	familySyncSwitchR32 = "resnet32-cifar10"
	familySyncSwitchR50 = "resnet50-cifar100"
)

// Fit fits the model to a measurement table laid out like the embedded one.
func Fit(ms []Measurement) (*Model, error) {
	m := &Model{Families: map[string]*Family{}}
	for _, c := range []struct {
		fam    string
		target float64
	}{{familyTSMResNet, tsmResNetTarget}, {familyTSMVGG, tsmVGGTarget}} {
		b, err := fitBatch(ms, sourceTrainingSync, c.fam, c.target)
		if err != nil {
			return nil, err
		}
		m.Families[c.fam] = &Family{Name: c.fam, Batch: b}
	}
	for _, c := range []struct {
		fam    string
		target float64
	}{{familySyncSwitchR32, syncSwitchR32Target}, {familySyncSwitchR50, syncSwitchR50Target}} {
		s, err := fitStaleness(ms, sourceSyncSwitch, c.fam, syncSwitchWorkers, c.target)
		if err != nil {
			return nil, err
		}
		m.Families[c.fam] = &Family{Name: c.fam, Staleness: s, Switch: fitSwitch(ms, sourceSyncSwitch, s)}
	}
	for _, c := range localFamilies {
		l, err := fitLocalSGD(ms, c.source, c.family)
		if err != nil {
			return nil, err
		}
		if f := m.Families[c.family]; f != nil {
			f.Local = l
			continue
		}
		m.Families[c.family] = &Family{Name: c.family, Local: l}
	}
	return m, nil
}

var (
	defaultOnce  sync.Once
	defaultModel *Model
)

// Default returns the model fitted to the embedded measurements. It is
// fitted once; callers must not modify it.
func Default() *Model {
	defaultOnce.Do(func() {
		m, err := Fit(Measurements())
		if err != nil {
			panic("converge: default fit: " + err.Error())
		}
		defaultModel = m
	})
	return defaultModel
}
