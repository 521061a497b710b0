package converge

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Check is one comparison of the fitted model with a measurement: a value
// against the range it must lie in.
type Check struct {
	// Family is the model family the check belongs to.
	Family string
	// Name says what is compared; it starts with Family.
	Name string
	// Value is the compared value: the model's, except in the PGNS checks,
	// where it is the efficiency derived from the measured noise scale, and
	// in the local SGD checks against another source, where it is that
	// source's measured gap; there the range is the fit's band.
	Value float64
	// Lo and Hi bound the range (a run-to-run range, a resolution, or a
	// band); either may be infinite.
	Lo, Hi float64
	// Pass is whether Value lies in [Lo, Hi].
	Pass bool
	// Ref says where the measured range comes from.
	Ref string
	// Known, when not empty, says why a failure of this check is a
	// known disagreement between sources that doc.go documents, not an
	// error of the fit: a calibration command reports such a failure but
	// does not fail on it. It is set whether or not the check fails.
	Known string
}

// knownPGNS are the families whose PGNS-derived efficiency is known to
// disagree with the accuracy curves the batch fit follows, with the
// reason (doc.go, "What the data says").
var knownPGNS = map[string]string{
	familyTSMVGG: "Training-Sync-Mode's vgg16 gradient statistics put the efficiency above the band its accuracy curves allow; the model follows the curves (doc.go)",
}

func newCheck(family, name string, v, lo, hi float64, ref string) Check {
	return Check{Family: family, Name: name, Value: v, Lo: lo, Hi: hi, Pass: v >= lo && v <= hi, Ref: ref}
}

// Checks compares the model with the measurements it was fitted to (ms,
// normally Measurements()): per staleness family, BSP's and ASP's final
// accuracy and ASP's worker-batches to the target against the runs' range,
// and failed runs against divergence; per batch family, the epochs to the
// target at each batch size within one epoch (the evaluation interval),
// more than the run lasted where it ended below the target, and Pollux's
// efficiency from the measured noise scale (median epoch) at each batch
// size against the fit's band; per local SGD family, the final accuracy at
// each measured period and worker count against the runs' range (a single
// run against the fitted line's prediction interval), and each other
// source's measured gap between local(H) and synchronous training against
// the fit's band. drover calibrate --convergence prints these, and fails
// only on a failed check whose Known is empty: the vgg16 PGNS checks and
// SlowMo's ImageNet local SGD gap are the known disagreements.
func (m *Model) Checks(ms []Measurement) []Check {
	var out []Check
	for _, name := range m.Names() {
		f := m.Families[name]
		if st := f.Staleness; st != nil {
			for _, c := range []struct {
				sync string
				runs []float64
				s    Strategy
			}{{"bsp", st.BSP, Strategy{Kind: BSP}}, {"asp", st.ASP, Strategy{Kind: ASP}}} {
				o, _ := m.Predict(name, c.s, st.Workers, 0, 0, BandFit)
				out = append(out, newCheck(name, fmt.Sprintf("%s %s on %d workers: final accuracy", name, c.sync, st.Workers),
					o.FinalAccuracy, slices.Min(c.runs), slices.Max(c.runs), fmt.Sprintf("%d runs", len(c.runs))))
			}
			o, _ := m.Predict(name, Strategy{Kind: ASP}, st.Workers, 0, 0, BandFit)
			out = append(out, newCheck(name, fmt.Sprintf("%s asp on %d workers: worker-batches to %.4g", name, st.Workers, st.Target),
				o.IterFactor*stat.Mean(st.BSPTo, nil), slices.Min(st.ASPTo), slices.Max(st.ASPTo), fmt.Sprintf("%d runs", len(st.ASPTo))))
			for _, r := range ms {
				if r.Family != name || r.Kind != KindDiverged {
					continue
				}
				o, _ := m.Predict(name, Strategy{Kind: ASP}, r.Workers, 0, 0, BandFit)
				v := 0.0
				if o.Diverged {
					v = 1
				}
				out = append(out, newCheck(name, fmt.Sprintf("%s asp on %d workers: diverges (1 = yes)", name, r.Workers), v, 1, 1, r.Ref))
			}
		}
		if l := f.Local; l != nil {
			out = append(out, l.checks()...)
			out = append(out, l.crossChecks(ms)...)
		}
		out = append(out, m.switchChecks(name, ms)...)
		if b := f.Batch; b != nil {
			for _, p := range b.Points {
				got := b.Epochs(p.Batch)
				if p.Reached {
					out = append(out, newCheck(name, fmt.Sprintf("%s batch %d: epochs to %.4g", name, p.Batch, b.Target), got, p.Epochs-1, p.Epochs+1, "one evaluation interval"))
				} else {
					out = append(out, newCheck(name, fmt.Sprintf("%s batch %d: epochs to %.4g (run ended below)", name, p.Batch, b.Target), got, b.Horizon, math.Inf(1), fmt.Sprintf("run of %.4g epochs", b.Horizon)))
				}
			}
			med, ok := b.MeasuredNoise(ms)
			if !ok {
				continue
			}
			for _, p := range b.Points[1:] {
				c := newCheck(name, fmt.Sprintf("%s batch %d: PGNS-derived efficiency (median epoch) in the fit's band", name, p.Batch),
					efficiency(med, b.RefBatch, p.Batch), efficiency(b.Noise.Lo, b.RefBatch, p.Batch), efficiency(b.Noise.Hi, b.RefBatch, p.Batch),
					fmt.Sprintf("noise scale %.4g at batch %d", med, b.RefBatch))
				c.Known = knownPGNS[name]
				out = append(out, c)
			}
		}
	}
	return out
}
