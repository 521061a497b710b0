package converge

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestParsePeriod(t *testing.T) {
	tests := []struct {
		sync string
		h    int
		ok   bool
	}{
		{"local(1)", 1, true},
		{"local(64)", 64, true},
		{"local(0)", 0, false},
		{"local(-2)", 0, false},
		{"local(8", 0, false},
		{"local8", 0, false},
		{"bsp", 0, false},
		{"asp", 0, false},
	}
	for _, tt := range tests {
		h, ok := ParsePeriod(tt.sync)
		if h != tt.h || ok != tt.ok {
			t.Errorf("ParsePeriod(%q) = %d, %v; want %d, %v", tt.sync, h, ok, tt.h, tt.ok)
		}
	}
}

// The two estimators on tables worked by hand. Repeated runs: gaps to H = 1
// of 0.02 at H-1 = 2 and 0.04 at H-1 = 4 give a slope through the origin of
// (2*0.02 + 4*0.04) / (2*2 + 4*4) = 0.01; identical runs leave no spread,
// so both intervals collapse onto the values. Single runs on the exact line
// 0.8 - 0.01 (H-1) give intercept 0.8 and slope 0.01 with zero residual.
func TestFitLocalSGDByHand(t *testing.T) {
	row := func(src string, h, run int, v float64) Measurement {
		return Measurement{Source: src, Family: "f", Sync: fmt.Sprintf("local(%d)", h), Workers: 2, Run: run, Kind: KindFinal, Value: v, Ref: "r"}
	}
	var ms []Measurement
	for run := 1; run <= 2; run++ {
		ms = append(ms, row("rep", 1, run, 0.9), row("rep", 3, run, 0.88), row("rep", 5, run, 0.86))
	}
	ms = append(ms, row("one", 1, 1, 0.8), row("one", 2, 1, 0.79), row("one", 3, 1, 0.78))
	tests := []struct {
		src        string
		sync, drop float64
	}{{"rep", 0.9, 0.01}, {"one", 0.8, 0.01}}
	for _, tt := range tests {
		l, err := fitLocalSGD(ms, tt.src, "f")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			p    Param
			want float64
		}{{l.SyncFinal, tt.sync}, {l.Drop, tt.drop}} {
			if math.Abs(c.p.Value-c.want) > 1e-12 || math.Abs(c.p.Lo-c.want) > 1e-9 || math.Abs(c.p.Hi-c.want) > 1e-9 {
				t.Errorf("%s %s = %v [%v, %v]; want %v", tt.src, c.p.Name, c.p.Value, c.p.Lo, c.p.Hi, c.want)
			}
		}
		if got := l.FinalAccuracy(5); math.Abs(got-(tt.sync-4*tt.drop)) > 1e-12 {
			t.Errorf("%s: FinalAccuracy(5) = %v", tt.src, got)
		}
	}
	if _, err := fitLocalSGD(ms[:4], "rep", "f"); err == nil {
		t.Error("a configuration with one run among repeated ones accepted")
	}
}

// pairedGaps returns, per run number (the blogcode runs of one seed share
// it across periods), the H = 1 run's final accuracy less the local(h)
// run's, on w workers.
func pairedGaps(family string, w, h int) []float64 {
	final := func(p int) map[int]float64 {
		out := map[int]float64{}
		for _, r := range rows(func(r Measurement) bool {
			q, ok := ParsePeriod(r.Sync)
			return r.Source == sourceBlogCode && r.Family == family && r.Workers == w && r.Kind == KindFinal && ok && q == p
		}) {
			out[r.Run] = r.Value
		}
		return out
	}
	sync, local := final(1), final(h)
	var gaps []float64
	for run, v := range local {
		if s, ok := sync[run]; ok {
			gaps = append(gaps, s-v)
		}
	}
	slices.Sort(gaps)
	return gaps
}

// The published local SGD accuracy gaps at the periods of Drover's fixed
// baselines, local(4) and local(8), on 4 and 8 workers (searchivarius/
// BlogCode: BERT-large fine-tuned on MNLI and SQuAD with accelerate's
// LocalSGD, three seeds per configuration): the model's gap, Drop*(H-1),
// lies within the Confidence t interval of the mean per-seed gap to
// averaging every step (each seed's local(1) run less its local(H) run).
// Not within the seeds' range everywhere: at local(8) on 4 workers every
// seed of both tasks ended above its local(1) run (0.08-1.1 points on
// MNLI, 0.15-0.4 on SQuAD), a benefit the one-slope fit does not carry
// (doc.go, "What the data says").
func TestReproducesBlogCodeLocalSGDGaps(t *testing.T) {
	m := Default()
	for _, fam := range []string{familyBlogMNLI, familyBlogSQuAD} {
		l := m.Families[fam].Local
		for _, w := range []int{4, 8} {
			for _, h := range []int{4, 8} {
				gaps := pairedGaps(fam, w, h)
				if len(gaps) != 3 {
					t.Fatalf("%s w=%d H=%d: %d paired runs, want 3", fam, w, h, len(gaps))
				}
				got := l.Drop.Value * float64(h-1)
				mean, sd := stat.MeanStdDev(gaps, nil)
				half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 2}.Quantile(0.5+Confidence/2) * sd / math.Sqrt(3)
				t.Logf("%s local(%d) on %d workers: model gap %+.4f, per-seed gaps %+.4f, mean %+.4f +- %.4f", fam, h, w, got, gaps, mean, half)
				if got < mean-half || got > mean+half {
					t.Errorf("%s local(%d) on %d workers: model gap %.4f outside the seeds' mean gap's interval [%.4f, %.4f]", fam, h, w, got, mean-half, mean+half)
				}
			}
		}
	}
}

// PaddleFleetX's ResNet-50 on ImageNet, 32 V100s (post-local SGD after 30
// synchronous epochs): top-1 0.7579 averaging every step, 0.7429 at local
// step 16, a published gap of 1.5 points. The fitted gap at H = 16 lies
// within the fit's band, and the model's final accuracy at H = 16 within
// 0.2 points of the run (the line's residuals are below that).
func TestReproducesPaddleLocalSGDGap(t *testing.T) {
	l := Default().Families[familyPaddleR50].Local
	const published, acc16 = 0.7579 - 0.7429, 0.7429
	lo, hi := l.Drop.Lo*15, l.Drop.Hi*15
	t.Logf("gap at H=16: published %.4f, fit %.4f, band [%.4f, %.4f]", published, l.Drop.Value*15, lo, hi)
	if published < lo || published > hi {
		t.Errorf("published gap %.4f outside the fit's band [%.4f, %.4f]", published, lo, hi)
	}
	if got := l.FinalAccuracy(16); math.Abs(got-acc16) > 0.002 {
		t.Errorf("final accuracy at H=16 %.4f, run %.4f", got, acc16)
	}
}

// Predict for local SGD: H = 1 is the synchronous fit; the band orders
// the final accuracies (low cost highest); a target above the final
// accuracy is never reached, one below it is reached in BSP's examples
// times the batch factor; a family without a local SGD fit, or a period
// below 1, is refused.
func TestPredictLocalSGD(t *testing.T) {
	m := Default()
	for _, c := range localFamilies {
		l := m.Families[c.family].Local
		one, err := m.Predict(c.family, Strategy{Kind: LocalSGD, Period: 1}, l.Workers[0], 0, 0, BandFit)
		if err != nil {
			t.Fatal(err)
		}
		if one.FinalAccuracy != l.SyncFinal.Value || one.IterFactor != 1 || !one.Reached {
			t.Errorf("%s local(1): %+v, want SyncFinal %v reached", c.family, one, l.SyncFinal.Value)
		}
		var acc [3]float64
		for i, b := range []Band{BandLow, BandFit, BandHigh} {
			o, err := m.Predict(c.family, Strategy{Kind: LocalSGD, Period: 8}, l.Workers[0], 0, 0, b)
			if err != nil {
				t.Fatal(err)
			}
			acc[i] = o.FinalAccuracy
		}
		if !(acc[0] >= acc[1] && acc[1] >= acc[2]) {
			t.Errorf("%s local(8): final accuracies low/fit/high %v", c.family, acc)
		}
		fin := l.FinalAccuracy(8)
		above, _ := m.Predict(c.family, Strategy{Kind: LocalSGD, Period: 8}, l.Workers[0], 0, fin+0.001, BandFit)
		below, _ := m.Predict(c.family, Strategy{Kind: LocalSGD, Period: 8}, l.Workers[0], 0, fin-0.001, BandFit)
		if above.Reached || !math.IsInf(above.IterFactor, 1) || !below.Reached || below.IterFactor != 1 {
			t.Errorf("%s local(8) final %.4f: above %+v, below %+v", c.family, fin, above, below)
		}
	}
	if _, err := m.Predict(familySyncSwitchR32, Strategy{Kind: LocalSGD, Period: 4}, 8, 0, 0, BandFit); !errors.Is(err, ErrNotMeasured) {
		t.Errorf("local SGD for a staleness-only family: %v, want ErrNotMeasured", err)
	}
	if _, err := m.Predict(familyBlogMNLI, Strategy{Kind: LocalSGD}, 4, 0, 0, BandFit); err == nil || errors.Is(err, ErrNotMeasured) {
		t.Errorf("period 0: %v, want a bad-input error", err)
	}
}

// The SlowMo ImageNet gap (local SGD from the first epoch, tau = 12) is
// far outside the Paddle fit's band, and is the only local SGD check
// marked Known; its ImageNet and CIFAR-10 rows are the table's means as
// printed.
func TestSlowMoRows(t *testing.T) {
	got := map[string]float64{}
	for _, r := range rows(func(r Measurement) bool { return r.Source == sourceSlowMo }) {
		got[r.Family+" "+r.Sync] = r.Value
	}
	want := map[string]float64{
		"resnet50-imagenet bsp": 0.76, "resnet50-imagenet local(12)": 0.6994,
		"resnet18-cifar10 bsp": 0.9266, "resnet18-cifar10 local(12)": 0.9173,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	var known []Check
	for _, c := range Default().Checks(Measurements()) {
		if c.Family == familyPaddleR50 && c.Known != "" {
			known = append(known, c)
		}
	}
	if len(known) != 1 || known[0].Pass || math.Abs(known[0].Value-0.0606) > 1e-9 {
		t.Errorf("known local SGD checks: %+v", known)
	}
}
