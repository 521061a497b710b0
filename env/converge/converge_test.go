package converge

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/stat"
)

// rows returns the embedded measurements matching keep.
func rows(keep func(Measurement) bool) []Measurement { return selectRows(Measurements(), keep) }

// values returns the Value of each row.
func values(ms []Measurement) []float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = m.Value
	}
	return v
}

// Sync-Switch (Li et al., ICDCS 2021), ResNet32 on CIFAR-10 and ResNet50 on
// CIFAR-100, 8 workers: the model's final accuracy under ASP (average
// staleness 7) and BSP lies within the range of the measured runs' final
// accuracies.
func TestReproducesSyncSwitchFinalAccuracy(t *testing.T) {
	m := Default()
	for _, fam := range []string{familySyncSwitchR32, familySyncSwitchR50} {
		for _, s := range []Strategy{{Kind: BSP}, {Kind: ASP}} {
			sync := map[StrategyKind]string{BSP: "bsp", ASP: "asp"}[s.Kind]
			runs := values(rows(func(r Measurement) bool {
				return r.Family == fam && r.Sync == sync && r.Kind == KindFinal && r.Workers == 8
			}))
			out, err := m.Predict(fam, s, 8, 0, 0, BandFit)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := slices.Min(runs), slices.Max(runs)
			t.Logf("%s %s: model %.4f, %d runs in [%.4f, %.4f]", fam, sync, out.FinalAccuracy, len(runs), lo, hi)
			if !(out.FinalAccuracy >= lo && out.FinalAccuracy <= hi) {
				t.Errorf("%s %s: final accuracy %.4f outside the runs' [%.4f, %.4f]", fam, sync, out.FinalAccuracy, lo, hi)
			}
		}
	}
}

// Sync-Switch, ResNet32 on CIFAR-10, 8 workers: the worker-batches ASP
// needs to reach 85% test accuracy, computed from the model's staleness
// factor times BSP's mean, lie within the measured ASP runs' range.
func TestReproducesSyncSwitchExamplesToTarget(t *testing.T) {
	m := Default()
	for _, fam := range []string{familySyncSwitchR32, familySyncSwitchR50} {
		st := m.Families[fam].Staleness
		out, err := m.Predict(fam, Strategy{Kind: ASP}, 8, 0, 0, BandFit)
		if err != nil {
			t.Fatal(err)
		}
		got := out.IterFactor * stat.Mean(st.BSPTo, nil)
		lo, hi := slices.Min(st.ASPTo), slices.Max(st.ASPTo)
		t.Logf("%s: ASP worker-batches to %.2f: model %.0f, runs [%.0f, %.0f]; BSP mean %.0f", fam, st.Target, got, lo, hi, stat.Mean(st.BSPTo, nil))
		if !(got >= lo && got <= hi) {
			t.Errorf("%s: %.0f worker-batches outside the ASP runs' [%.0f, %.0f]", fam, got, lo, hi)
		}
	}
}

// A strategy that does not reach a target in the measurements does not
// reach it in the model: no ResNet32 ASP run ended at 91% (the best ended at
// 90.5%) while every BSP run did, and ASP at 16 workers failed to train
// (Sync-Switch's README: "No ASP because training failure").
func TestUnreachedStaysUnreached(t *testing.T) {
	m := Default()
	asp := values(rows(func(r Measurement) bool {
		return r.Family == familySyncSwitchR32 && r.Sync == "asp" && r.Kind == KindFinal && r.Workers == 8
	}))
	bsp := values(rows(func(r Measurement) bool {
		return r.Family == familySyncSwitchR32 && r.Sync == "bsp" && r.Kind == KindFinal && r.Workers == 8
	}))
	const target = 0.91
	if slices.Max(asp) >= target || slices.Min(bsp) < target {
		t.Fatalf("table changed: ASP finals %v, BSP finals %v against %.2f", asp, bsp, target)
	}
	tests := []struct {
		name     string
		s        Strategy
		workers  int
		target   float64
		reached  bool
		diverged bool
	}{
		{"bsp 8 workers 91%", Strategy{Kind: BSP}, 8, target, true, false},
		{"asp 8 workers 91%", Strategy{Kind: ASP}, 8, target, false, false},
		{"asp 8 workers 85%", Strategy{Kind: ASP}, 8, 0.85, true, false},
		{"asp 16 workers 85%", Strategy{Kind: ASP}, 16, 0.85, false, true},
		{"ssp(3) 16 workers 85%", Strategy{Kind: SSP, Staleness: 3}, 16, 0.85, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, band := range []Band{BandLow, BandFit, BandHigh} {
				out, err := m.Predict(familySyncSwitchR32, tt.s, tt.workers, 0, tt.target, band)
				if err != nil {
					t.Fatal(err)
				}
				if out.Reached != tt.reached || out.Diverged != tt.diverged {
					t.Errorf("band %s: reached %v diverged %v, want %v %v (%+v)", band, out.Reached, out.Diverged, tt.reached, tt.diverged, out)
				}
				if !out.Reached && !math.IsInf(out.IterFactor, 1) {
					t.Errorf("band %s: unreached target with finite iteration factor %g", band, out.IterFactor)
				}
			}
		})
	}
}

// Training-Sync-Mode's ResNet20 run at global batch 1024 ended its 10
// epochs at 50.65%, below the 55% target; the fit leaves it out, and the
// model must still need more than 10 epochs there.
func TestBatchCensoredPoint(t *testing.T) {
	b := Default().Families[familyTSMResNet].Batch
	for _, p := range b.Points {
		if p.Reached {
			continue
		}
		if got := b.Epochs(p.Batch); got <= b.Horizon {
			t.Errorf("batch %d: model reaches %.0f%% in %.2f epochs; the run did not within %.0f", p.Batch, b.Target, got, b.Horizon)
		}
	}
}

// Leave one batch size out of the Training-Sync-Mode fit and predict its
// epochs to target: within one evaluation interval (an epoch), the
// resolution of the measurement.
func TestBatchLeaveOneOut(t *testing.T) {
	for _, c := range []struct {
		fam    string
		target float64
		batch  int
	}{{familyTSMResNet, tsmResNetTarget, 256}, {familyTSMVGG, tsmVGGTarget, 256}, {familyTSMVGG, tsmVGGTarget, 512}} {
		full := Default().Families[c.fam].Batch
		var want float64
		for _, p := range full.Points {
			if p.Batch == c.batch {
				want = p.Epochs
			}
		}
		ms := selectRows(Measurements(), func(m Measurement) bool { return !(m.Family == c.fam && m.Batch == c.batch) })
		b, err := fitBatch(ms, sourceTrainingSync, c.fam, c.target)
		if err != nil {
			t.Fatal(err)
		}
		got := b.Epochs(c.batch)
		t.Logf("%s without batch %d: predicts %.2f epochs to %.0f%%, measured %.2f", c.fam, c.batch, got, c.target, want)
		if math.Abs(got-want) > 1 {
			t.Errorf("%s batch %d: predicted %.2f epochs, measured %.2f (more than one epoch off)", c.fam, c.batch, got, want)
		}
	}
}

// pgnsEfficiency returns Pollux's efficiency of batch m against ref from
// the noise scale measured at ref during each epoch.
func pgnsEfficiency(fam string, ref, m int) []float64 {
	var out []float64
	for _, r := range rows(func(r Measurement) bool { return r.Family == fam && r.Kind == KindPGNS && r.Batch == ref }) {
		out = append(out, efficiency(r.Value, ref, m))
	}
	slices.Sort(out)
	return out
}

// Training-Sync-Mode records the gradient noise scale (PGNS) per epoch; the
// efficiency Pollux derives from it at batch 256 and 1024 (against 64),
// taken at the median epoch, lies within the confidence band of the
// efficiency the model fits to ResNet20's accuracy curves.
func TestReproducesPGNSEfficiencyResNet20(t *testing.T) {
	b := Default().Families[familyTSMResNet].Batch
	for _, m := range []int{256, 1024} {
		e := pgnsEfficiency(familyTSMResNet, b.RefBatch, m)
		med := stat.Quantile(0.5, stat.Empirical, e, nil)
		lo, hi := efficiency(b.Noise.Lo, b.RefBatch, m), efficiency(b.Noise.Hi, b.RefBatch, m)
		t.Logf("batch %d: PGNS efficiency median %.3f (epochs %.3f-%.3f); model %.3f [%.3f, %.3f]", m, med, e[0], e[len(e)-1], b.Efficiency(m), lo, hi)
		if !(med >= lo && med <= hi) {
			t.Errorf("batch %d: PGNS-derived efficiency %.3f outside the model's [%.3f, %.3f]", m, med, lo, hi)
		}
	}
}

// For the VGG16 files the gradient statistics and the accuracy curves
// disagree: the PGNS-derived efficiency at batch 1024 is above the whole
// band the accuracy curves allow. The model follows the accuracy curves;
// this test records the disagreement so that a change in either shows.
func TestPGNSOverstatesVGG16(t *testing.T) {
	b := Default().Families[familyTSMVGG].Batch
	e := pgnsEfficiency(familyTSMVGG, b.RefBatch, 1024)
	med := stat.Quantile(0.5, stat.Empirical, e, nil)
	hi := efficiency(b.Noise.Hi, b.RefBatch, 1024)
	t.Logf("batch 1024: PGNS efficiency median %.3f, model %.3f (at most %.3f)", med, b.Efficiency(1024), hi)
	if med <= hi {
		t.Errorf("PGNS-derived efficiency %.3f now within the model's band (<= %.3f): update doc.go", med, hi)
	}
}

// Fitting twice gives the same model, bit for bit (the bootstrap is
// seeded).
func TestFitDeterministic(t *testing.T) {
	a, err := Fit(Measurements())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(Measurements())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a.Params(), b.Params()); d != "" {
		t.Errorf("two fits differ (-first +second):\n%s", d)
	}
}

// Every interval contains its value, and every parameter names its source
// and method.
func TestParamsWellFormed(t *testing.T) {
	for _, p := range Default().Params() {
		if !(p.Lo <= p.Value && p.Value <= p.Hi) {
			t.Errorf("%s: %g outside [%g, %g]", p.Name, p.Value, p.Lo, p.Hi)
		}
		if p.Source == "" || p.Method == "" || p.Unit == "" {
			t.Errorf("%s: missing source, method or unit: %+v", p.Name, p)
		}
	}
}

// The worked formulas: Pollux's efficiency for a noise scale of 192 at
// batch 256 against 64 is (192+64)/(192+256) = 4/7; the batch-size
// iteration factor is the examples ratio times 64/256.
func TestBatchFormulas(t *testing.T) {
	if got, want := efficiency(192, 64, 256), 4.0/7; math.Abs(got-want) > 1e-15 {
		t.Errorf("efficiency = %v, want %v", got, want)
	}
	b := &BatchFit{RefBatch: 64, SMin: Param{Value: 2}, Noise: Param{Value: 192}}
	m := &Model{Families: map[string]*Family{"x": {Name: "x", Batch: b}}}
	out, err := m.Predict("x", Strategy{Kind: BSP}, 1, 256, 0, BandFit)
	if err != nil {
		t.Fatal(err)
	}
	// Examples: 2(1+256/192) / 2(1+64/192) = (448/192)/(256/192) = 7/4;
	// iterations: 7/4 * 64/256 = 7/16.
	if want := 7.0 / 16; math.Abs(out.IterFactor-want) > 1e-15 {
		t.Errorf("iteration factor = %v, want %v", out.IterFactor, want)
	}
}

// Local SGD, unmeasured dimensions and bad inputs are refused, not guessed.
func TestNotMeasured(t *testing.T) {
	m := Default()
	tests := []struct {
		name    string
		family  string
		s       Strategy
		workers int
		batch   int
	}{
		{"local sgd", familySyncSwitchR32, Strategy{Kind: LocalSGD, Period: 8}, 8, 0},
		{"unknown family", "bert", Strategy{Kind: BSP}, 8, 0},
		{"staleness on a batch-only family", familyTSMResNet, Strategy{Kind: ASP}, 8, 0},
		{"batch on a staleness-only family", familySyncSwitchR32, Strategy{Kind: BSP}, 8, 512},
		{"negative batch", familyTSMResNet, Strategy{Kind: BSP}, 8, -64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := m.Predict(tt.family, tt.s, tt.workers, tt.batch, 0, BandFit); err == nil {
				t.Errorf("no error")
			}
		})
	}
}

// The bands order the cost: at average staleness 7 the low band's
// iteration factor is at most the fit's, the fit's at most the high band's,
// and final accuracy the other way round.
func TestBandsOrdered(t *testing.T) {
	m := Default()
	for _, fam := range []string{familySyncSwitchR32, familySyncSwitchR50} {
		var f [3]Outcome
		for i, b := range []Band{BandLow, BandFit, BandHigh} {
			var err error
			if f[i], err = m.Predict(fam, Strategy{Kind: ASP}, 8, 0, 0, b); err != nil {
				t.Fatal(err)
			}
		}
		if !(f[0].IterFactor <= f[1].IterFactor && f[1].IterFactor <= f[2].IterFactor) {
			t.Errorf("%s: iteration factors low/fit/high %v %v %v", fam, f[0].IterFactor, f[1].IterFactor, f[2].IterFactor)
		}
		if !(f[0].FinalAccuracy >= f[1].FinalAccuracy && f[1].FinalAccuracy >= f[2].FinalAccuracy) {
			t.Errorf("%s: final accuracies low/fit/high %v %v %v", fam, f[0].FinalAccuracy, f[1].FinalAccuracy, f[2].FinalAccuracy)
		}
	}
	for _, fam := range []string{familyTSMResNet, familyTSMVGG} {
		var f [3]float64
		for i, b := range []Band{BandLow, BandFit, BandHigh} {
			out, err := m.Predict(fam, Strategy{Kind: BSP}, 1, 1024, 0, b)
			if err != nil {
				t.Fatal(err)
			}
			f[i] = out.IterFactor
		}
		if !(f[0] <= f[1] && f[1] <= f[2]) {
			t.Errorf("%s: batch 1024 iteration factors low/fit/high %v", fam, f)
		}
	}
}

// Every check passes except the vgg16 files' PGNS-derived efficiencies,
// which the gradient statistics put above the accuracy curves' band, and
// SlowMo's ImageNet local SGD gap, far above the Paddle fit's band, and
// two ResNet32 shares of BSP-then-ASP runs whose BSP phases crossed the
// target later than the BSP baseline runs (doc.go says why); every
// failure is marked Known, so that drover calibrate --convergence exits zero on them and on nothing else.
// Every check names its family first.
func TestChecks(t *testing.T) {
	var failed, known []string
	for _, c := range Default().Checks(Measurements()) {
		t.Logf("%-5v %-75s %.4g in [%.4g, %.4g] (%s)", c.Pass, c.Name, c.Value, c.Lo, c.Hi, c.Ref)
		if !c.Pass {
			failed = append(failed, c.Name)
			if c.Known != "" {
				known = append(known, c.Name)
			}
		}
		if _, ok := Default().Families[c.Family]; !ok || !strings.HasPrefix(c.Name, c.Family+" ") {
			t.Errorf("check %q: family %q", c.Name, c.Family)
		}
	}
	if d := cmp.Diff(failed, known); d != "" {
		t.Errorf("failed checks vs failed checks marked Known (-failed +known):\n%s", d)
	}
	want := []string{
		"resnet32-cifar10 bsp 0.2 then asp on 8 workers: worker-batches to 0.85",
		"resnet32-cifar10 bsp 0.5 then asp on 8 workers: worker-batches to 0.85",
		"resnet50-imagenet local(12) on 32 workers: slowmo's measured gap to synchronous in the fit's band",
		"vgg16 batch 128: PGNS-derived efficiency (median epoch) in the fit's band",
		"vgg16 batch 256: PGNS-derived efficiency (median epoch) in the fit's band",
		"vgg16 batch 512: PGNS-derived efficiency (median epoch) in the fit's band",
		"vgg16 batch 1024: PGNS-derived efficiency (median epoch) in the fit's band",
	}
	if d := cmp.Diff(want, failed); d != "" {
		t.Errorf("failed checks (-want +got):\n%s", d)
	}
}
