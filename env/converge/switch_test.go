package converge

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// switchRuns returns the final accuracies and the worker-batches to the
// family's target of the switched runs at share on workers in ms.
func switchRuns(t *testing.T, ms []Measurement, family string, workers int, share float64, target float64) (finals, to []float64) {
	t.Helper()
	curves := map[int][][2]float64{}
	var runs []int
	for _, r := range ms {
		p, ok := SwitchShare(r.Sync)
		if !ok || r.Family != family || r.Workers != workers || p != share {
			continue
		}
		switch r.Kind {
		case KindFinal:
			finals = append(finals, r.Value)
		case KindAccuracy:
			if _, seen := curves[r.Run]; !seen {
				runs = append(runs, r.Run)
			}
			curves[r.Run] = append(curves[r.Run], [2]float64{r.Progress, r.Value})
		}
	}
	slices.Sort(runs)
	for _, run := range runs {
		c := curves[run]
		p, v := []float64{c[0][0], c[1][0]}, []float64{c[0][1], c[1][1]}
		at, ok := crossing(p, v, target)
		if !ok {
			t.Fatalf("%s share %v run %d: no crossing of %v", family, share, run, target)
		}
		to = append(to, at)
	}
	if len(finals) == 0 || len(finals) != len(to) {
		t.Fatalf("%s share %v on %d workers: %d finals, %d crossings", family, share, workers, len(finals), len(to))
	}
	return finals, to
}

// The measured switched runs: every share of both families, the runs per
// share, and the share b15-a85-run4 really ran (its steps say 25%).
func TestSwitchMeasured(t *testing.T) {
	m := Default()
	tests := []struct {
		family string
		shares []float64
		runs   []int
	}{
		{familySyncSwitchR32, []float64{0.02, 0.04, 0.05, 0.0625, 0.1, 0.15, 0.2, 0.25, 0.5, 0.75}, []int{4, 8, 8, 1, 5, 3, 3, 9, 5, 4}},
		{familySyncSwitchR50, []float64{0.0625, 0.125, 0.25, 0.5}, []int{5, 5, 5, 5}},
	}
	for _, tt := range tests {
		sw := m.Families[tt.family].Switch
		var shares []float64
		var runs []int
		for _, p := range sw.Points {
			shares, runs = append(shares, p.Share), append(runs, len(p.Final))
		}
		if !slices.Equal(shares, tt.shares) || !slices.Equal(runs, tt.runs) {
			t.Errorf("%s: shares %v with %v runs, want %v with %v", tt.family, shares, runs, tt.shares, tt.runs)
		}
	}
	if got := m.Families[familySyncSwitchR32].Switch.Trained; got != 0.5 {
		t.Errorf("ResNet32 smallest share trained on 16 workers = %v, want 0.5 (cluster_16/5050_run1..3)", got)
	}
}

// Share 0 is ASP from the start and share 1 BSP throughout: PredictSwitch
// gives Predict's outcomes there, at every band and worker count.
func TestSwitchEnds(t *testing.T) {
	m := Default()
	for _, fam := range []string{familySyncSwitchR32, familySyncSwitchR50} {
		for _, w := range []int{1, 2, 8, 12, 16, 32} {
			for _, b := range []Band{BandLow, BandFit, BandHigh} {
				asp, err := m.Predict(fam, Strategy{Kind: ASP}, w, 0, 0, b)
				if err != nil {
					t.Fatal(err)
				}
				got, err := m.PredictSwitch(fam, w, 0, b)
				if err != nil {
					t.Fatal(err)
				}
				if !sameOutcome(got, asp) {
					t.Errorf("%s on %d workers, band %v: share 0 %+v, ASP %+v", fam, w, b, got, asp)
				}
				bsp, _ := m.Predict(fam, Strategy{Kind: BSP}, w, 0, 0, b)
				got, _ = m.PredictSwitch(fam, w, 1, b)
				if !sameOutcome(got, bsp) {
					t.Errorf("%s on %d workers, band %v: share 1 %+v, BSP %+v", fam, w, b, got, bsp)
				}
			}
		}
	}
}

func sameOutcome(a, b Outcome) bool {
	near := func(x, y float64) bool {
		return x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) <= 1e-12*math.Abs(y)
	}
	return near(a.IterFactor, b.IterFactor) && near(a.FinalAccuracy, b.FinalAccuracy) && near(a.Budget, b.Budget) && a.Reached == b.Reached && a.Diverged == b.Diverged
}

// On 2 workers (average staleness 1, a seventh of the measured ASP phases'
// 7) and 3% of the schedule under BSP, between the measured 2% and 4%:
// the extra examples are the mean of those two shares' Extra over 7, the
// loss of accuracy the mean of their Loss over 7, by hand from the fit.
func TestSwitchHandWorked(t *testing.T) {
	m := Default()
	sw, st := m.Families[familySyncSwitchR32].Switch, m.Families[familySyncSwitchR32].Staleness
	p2, p4 := sw.Points[0], sw.Points[1]
	if p2.Share != 0.02 || p4.Share != 0.04 {
		t.Fatalf("first shares %v, %v; want 0.02, 0.04", p2.Share, p4.Share)
	}
	got, err := m.PredictSwitch(familySyncSwitchR32, 2, 0.03, BandFit)
	if err != nil {
		t.Fatal(err)
	}
	wantX := 1 + (p2.Extra.Value+p4.Extra.Value)/2/7
	wantA := st.BSPFinal.Value - (p2.Loss.Value+p4.Loss.Value)/2/7
	if math.Abs(got.IterFactor-wantX) > 1e-12 || math.Abs(got.FinalAccuracy-wantA) > 1e-12 || !got.Reached {
		t.Errorf("2 workers, share 0.03: %+v; want factor %v, accuracy %v, reached", got, wantX, wantA)
	}
	// The fit's numbers: Extra 2.710 and 2.110, so 1 + 2.410/7 = 1.344.
	if math.Abs(got.IterFactor-1.344) > 0.001 {
		t.Errorf("2 workers, share 0.03: factor %.4f, want 1.344 (Extra 2.710 at 2%%, 2.110 at 4%%)", got.IterFactor)
	}
	// Past Reach the target is reached under BSP: factor 1.
	got, _ = m.PredictSwitch(familySyncSwitchR32, 8, sw.Reach, BandFit)
	if got.IterFactor != 1 {
		t.Errorf("share Reach = %v: factor %v, want 1", sw.Reach, got.IterFactor)
	}
}

// Leave one ResNet32 share below Reach out of the fit and predict it from
// its neighbours: the final accuracy and the worker-batches to 85% lie
// within the left-out runs' range (shares with at least 4 runs).
func TestSwitchLeaveOneOut(t *testing.T) {
	all := Measurements()
	for _, share := range []float64{0.02, 0.04, 0.05, 0.1} {
		finals, to := switchRuns(t, all, familySyncSwitchR32, 8, share, syncSwitchR32Target)
		kept := selectRows(all, func(r Measurement) bool {
			p, ok := SwitchShare(r.Sync)
			return !(ok && r.Family == familySyncSwitchR32 && p == share)
		})
		m, err := Fit(kept)
		if err != nil {
			t.Fatal(err)
		}
		o, err := m.PredictSwitch(familySyncSwitchR32, 8, share, BandFit)
		if err != nil {
			t.Fatal(err)
		}
		wb := o.IterFactor * stat.Mean(m.Families[familySyncSwitchR32].Staleness.BSPTo, nil)
		t.Logf("share %v: accuracy %.4f in [%.4f, %.4f]?; worker-batches %.0f in [%.0f, %.0f]?", share, o.FinalAccuracy, slices.Min(finals), slices.Max(finals), wb, slices.Min(to), slices.Max(to))
		if o.FinalAccuracy < slices.Min(finals) || o.FinalAccuracy > slices.Max(finals) {
			t.Errorf("share %v left out: accuracy %.4f outside the runs' [%.4f, %.4f]", share, o.FinalAccuracy, slices.Min(finals), slices.Max(finals))
		}
		if wb < slices.Min(to) || wb > slices.Max(to) {
			t.Errorf("share %v left out: %.0f worker-batches outside the runs' [%.0f, %.0f]", share, wb, slices.Min(to), slices.Max(to))
		}
	}
}

// The switched runs on 16 workers (cluster_16/5050_run1..3) are not in the
// fit: the fit on 8 workers, scaled to 16, must reproduce them within their
// spread. ASP from the start failed there, half the schedule under BSP
// trained; below the smallest share measured to train the model says it
// fails, and a family with no failure never does.
func TestSwitchSixteenWorkers(t *testing.T) {
	m := Default()
	ms := Measurements()
	finals, to := switchRuns(t, ms, familySyncSwitchR32, 16, 0.5, syncSwitchR32Target)
	var bspTo []float64
	for run := 1; run <= 3; run++ {
		var p, v []float64
		for _, r := range ms {
			if r.Family == familySyncSwitchR32 && r.Sync == "bsp" && r.Workers == 16 && r.Run == run && r.Kind == KindAccuracy {
				p, v = append(p, r.Progress), append(v, r.Value)
			}
		}
		at, ok := crossing(p, v, syncSwitchR32Target)
		if !ok {
			t.Fatalf("16-worker BSP run %d does not cross", run)
		}
		bspTo = append(bspTo, at)
	}
	o, err := m.PredictSwitch(familySyncSwitchR32, 16, 0.5, BandFit)
	if err != nil {
		t.Fatal(err)
	}
	wb := o.IterFactor * stat.Mean(bspTo, nil)
	t.Logf("16 workers, share 0.5: accuracy %.4f, runs [%.4f, %.4f]; worker-batches %.0f, runs [%.0f, %.0f]", o.FinalAccuracy, slices.Min(finals), slices.Max(finals), wb, slices.Min(to), slices.Max(to))
	if o.Diverged || o.FinalAccuracy < slices.Min(finals) || o.FinalAccuracy > slices.Max(finals) || wb < slices.Min(to) || wb > slices.Max(to) {
		t.Errorf("16 workers, share 0.5: %+v (%.0f worker-batches) outside the runs", o, wb)
	}
	for _, tt := range []struct {
		family  string
		workers int
		share   float64
		diverge bool
	}{
		{familySyncSwitchR32, 16, 0.03, true},
		{familySyncSwitchR32, 16, 0.49, true},
		{familySyncSwitchR32, 15, 0.03, false},
		{familySyncSwitchR50, 16, 0.03, false},
	} {
		o, _ := m.PredictSwitch(tt.family, tt.workers, tt.share, BandFit)
		if o.Diverged != tt.diverge || o.Reached == tt.diverge {
			t.Errorf("%s on %d workers, share %v: %+v, want diverged %v", tt.family, tt.workers, tt.share, o, tt.diverge)
		}
	}
}

// The bands order the cost at every share: the low band's factor at most
// the fit's, the fit's at most the high band's, final accuracy the other
// way round.
func TestSwitchBandsOrdered(t *testing.T) {
	m := Default()
	for _, fam := range []string{familySyncSwitchR32, familySyncSwitchR50} {
		for _, w := range []int{2, 8} {
			for p := 0.0; p <= 1; p += 0.01 {
				var o [3]Outcome
				for i, b := range []Band{BandLow, BandFit, BandHigh} {
					var err error
					if o[i], err = m.PredictSwitch(fam, w, p, b); err != nil {
						t.Fatal(err)
					}
				}
				if !(o[0].IterFactor <= o[1].IterFactor && o[1].IterFactor <= o[2].IterFactor) ||
					!(o[0].FinalAccuracy >= o[1].FinalAccuracy && o[1].FinalAccuracy >= o[2].FinalAccuracy) {
					t.Errorf("%s on %d workers, share %.2f: low/fit/high %+v", fam, w, p, o)
				}
			}
		}
	}
}

// Shares outside [0, 1] and families without switched runs are refused.
func TestPredictSwitchErrors(t *testing.T) {
	m := Default()
	for _, tt := range []struct {
		name   string
		family string
		share  float64
	}{
		{"negative share", familySyncSwitchR32, -0.01},
		{"share above 1", familySyncSwitchR32, 1.01},
		{"NaN share", familySyncSwitchR32, math.NaN()},
		{"unknown family", "bert", 0.25},
		{"no switched runs", familyTSMResNet, 0.25},
	} {
		if _, err := m.PredictSwitch(tt.family, 8, tt.share, BandFit); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestSwitchShare(t *testing.T) {
	for _, tt := range []struct {
		sync string
		p    float64
		ok   bool
	}{
		{"switch:0.25", 0.25, true},
		{"switch:0.0625", 0.0625, true},
		{"switch:0", 0, false},
		{"switch:1", 0, false},
		{"switch:x", 0, false},
		{"bsp", 0, false},
	} {
		p, ok := SwitchShare(tt.sync)
		if p != tt.p || ok != tt.ok {
			t.Errorf("SwitchShare(%q) = %v, %v; want %v, %v", tt.sync, p, ok, tt.p, tt.ok)
		}
	}
}

// A progress against BSP's examples to the target converts to a share of
// the schedule through Reach: ResNet32's BSP runs reach 0.85 at a mean of
// 7,709 worker-batches of their 64,000 (runs 1, 2, 5, 6 of
// cifar10_res32/baseline: 8,453, 7,385, 7,554 and 7,444 by the crossings
// of their rows), so 25% of the progress is 0.25 x 7,709 / 64,000 of the
// schedule.
func TestSwitchShareOf(t *testing.T) {
	m := Default()
	p, err := m.SwitchShareOf(familySyncSwitchR32, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	bspTo := m.Families[familySyncSwitchR32].Staleness.BSPTo
	if want := 0.25 * stat.Mean(bspTo, nil) / 64000; math.Abs(p-want) > 1e-15 || math.Abs(stat.Mean(bspTo, nil)-7709) > 1 {
		t.Errorf("share of 25%% progress = %v, want %v (BSP mean %v)", p, want, stat.Mean(bspTo, nil))
	}
	if p, _ := m.SwitchShareOf(familySyncSwitchR32, 20); p != 1 {
		t.Errorf("share of progress 20 = %v, want 1", p)
	}
	for _, bad := range []struct {
		fam string
		p   float64
	}{{familyTSMResNet, 0.25}, {familySyncSwitchR32, -1}, {familySyncSwitchR32, math.NaN()}} {
		if _, err := m.SwitchShareOf(bad.fam, bad.p); err == nil {
			t.Errorf("SwitchShareOf(%s, %v): no error", bad.fam, bad.p)
		}
	}
}
