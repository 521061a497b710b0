package converge

import (
	"math"
	"testing"
)

// The band curves agree with the fit at BandFit, order as the band says
// (BandHigh costs more epochs and less efficiency), and MeasuredNoise is
// the median of resnet20's ten per-epoch noise scales at batch 64:
// sorted, 104.7 162.4 224.3 277.0 408.7 414.3 445.5 534.5 545.1 581.4
// (measurements.csv), of which stat.Empirical's 0.5 quantile is the
// fifth.
func TestBandCurves(t *testing.T) {
	m := Default()
	for _, name := range []string{familyTSMResNet, familyTSMVGG} {
		b := m.Families[name].Batch
		for _, batch := range []int{64, 256, 1024} {
			if got, want := b.EpochsAt(batch, BandFit), b.Epochs(batch); got != want {
				t.Errorf("%s batch %d: EpochsAt(fit) %v, Epochs %v", name, batch, got, want)
			}
			if got, want := b.EfficiencyAt(batch, BandFit), b.Efficiency(batch); got != want {
				t.Errorf("%s batch %d: EfficiencyAt(fit) %v, Efficiency %v", name, batch, got, want)
			}
			lo, hi := b.EpochsAt(batch, BandLow), b.EpochsAt(batch, BandHigh)
			if !(lo <= b.Epochs(batch) && b.Epochs(batch) <= hi) {
				t.Errorf("%s batch %d: epochs low/fit/high %v %v %v", name, batch, lo, b.Epochs(batch), hi)
			}
			if el, eh := b.EfficiencyAt(batch, BandLow), b.EfficiencyAt(batch, BandHigh); el < eh {
				t.Errorf("%s batch %d: efficiency low %v < high %v", name, batch, el, eh)
			}
		}
	}
	noise, ok := m.Families[familyTSMResNet].Batch.MeasuredNoise(Measurements())
	if !ok || math.Abs(noise-408.7314269903118) > 1e-9 {
		t.Errorf("resnet20 MeasuredNoise = %v, %v; want 408.7314269903118", noise, ok)
	}
	if got, want := Efficiency(noise, 64, 1024), (noise+64)/(noise+1024); got != want {
		t.Errorf("Efficiency = %v, want %v", got, want)
	}
}
