package converge

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

// The curves a calibration figure draws: each fit at either end of its
// band, as Predict uses it.

// EpochsAt returns the epochs to Target at global batch m with Noise at
// band's end and SMin at its fit, as Predict uses them: BandHigh, the
// smaller noise scale, needs more epochs.
func (b *BatchFit) EpochsAt(m int, band Band) float64 {
	return b.epochs(m, b.SMin.Value, b.Noise.at(band, false))
}

// EfficiencyAt returns the efficiency of global batch m relative to
// RefBatch with Noise at band's end.
func (b *BatchFit) EfficiencyAt(m int, band Band) float64 {
	return efficiency(b.Noise.at(band, false), b.RefBatch, m)
}

// MeasuredNoise returns the median over epochs of the gradient noise
// scale measured at RefBatch in ms (rows of kind pgns of b's family), the
// noise scale Checks compares with the fit; ok is false when ms has none.
func (b *BatchFit) MeasuredNoise(ms []Measurement) (noise float64, ok bool) {
	var xs []float64
	for _, r := range ms {
		if r.Family == b.Family && r.Kind == KindPGNS && r.Batch == b.RefBatch {
			xs = append(xs, r.Value)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	slices.Sort(xs)
	return stat.Quantile(0.5, stat.Empirical, xs, nil), true
}

// Efficiency returns Pollux's statistical efficiency of global batch m
// relative to batch ref for a gradient noise scale noise (in examples):
// (noise + ref) / (noise + m).
func Efficiency(noise float64, ref, m int) float64 { return efficiency(noise, ref, m) }
