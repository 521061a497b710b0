package converge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// switchSyncPrefix starts the sync column of a switched run's rows:
// "switch:0.25" is a run that trained under BSP for the first 25% of its
// schedule's worker-batches and under ASP for the rest.
const switchSyncPrefix = "switch:"

// SwitchShare returns the BSP share of a switched run's sync label
// ("switch:0.25" gives 0.25); ok is false for any other label.
func SwitchShare(sync string) (share float64, ok bool) {
	v, found := strings.CutPrefix(sync, switchSyncPrefix)
	if !found {
		return 0, false
	}
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || !(p > 0 && p < 1) {
		return 0, false
	}
	return p, true
}

// SwitchPoint is what the switched runs at one BSP share did, against the
// family's BSP runs at the same worker count.
type SwitchPoint struct {
	// Share is the share of the schedule's worker-batches trained under
	// BSP before the switch to ASP.
	Share float64
	// Loss is the final accuracy the switched runs lost against BSP's:
	// BSP's mean final accuracy minus theirs.
	Loss Param
	// Extra is the extra worker-batches the switched runs needed to
	// reach the target, as a fraction of BSP's: their mean worker-batches
	// to the target over BSP's, minus 1. Only where Share is below
	// SwitchFit.Reach (its Name is empty elsewhere): from Reach on, BSP
	// has reached the target before the switch and the runs' crossings
	// measure BSP's own run-to-run spread, not the switch.
	Extra Param
	// Final and To are the switched runs' final accuracies and
	// worker-batches to the target (every measured switched run reaches
	// it).
	Final, To []float64
}

// SwitchFit is what Sync-Switch's hybrid does to a family: a run that
// trains under BSP for a share p of its schedule and under ASP for the
// rest, measured at a few shares on Workers workers. At share 0 it is
// ASP from the start and at share 1 BSP throughout, both taken from the
// family's StalenessFit. The loss of final accuracy is interpolated
// linearly between the measured shares. The extra examples to the target
// are interpolated linearly between ASP's (share 0), the measured shares
// below Reach and none at Reach, the share at which BSP alone has reached
// the target; from Reach on the run reaches it under BSP, before the
// switch. On other worker counts both scale with the ASP phase's average
// staleness, as the staleness fit's do: by (w-1)/(Workers-1).
type SwitchFit struct {
	// Family is the model family.
	Family string
	// Workers is the worker count the switched runs were measured at.
	Workers int
	// Staleness is the ASP phases' average staleness there, Workers-1.
	Staleness float64
	// Target is the test accuracy (fraction) the examples are counted to.
	Target float64
	// Reach is the share of the schedule BSP spends to reach Target:
	// BSP's mean worker-batches to Target over its schedule's, the
	// inverse of StalenessFit.Budget's fitted value.
	Reach float64
	// Points are the measured shares, in increasing order.
	Points []SwitchPoint
	// Trained is the smallest BSP share measured to train on a worker
	// count where ASP from the start fails (+Inf when none was measured):
	// below it a switched run on such a worker count is taken to fail as
	// ASP does.
	Trained float64
	// TrainedRef says where Trained was measured.
	TrainedRef string
}

// Params returns the fitted parameters of the measured shares: each
// share's Loss, then its Extra.
func (s *SwitchFit) Params() []Param {
	var ps []Param
	for _, p := range s.Points {
		ps = append(ps, p.Loss)
		if p.Extra.Name != "" {
			ps = append(ps, p.Extra)
		}
	}
	return ps
}

// fitSwitch fits a SwitchFit to a family's switched runs (rows whose sync
// is switch:<share>) at st's worker count, against the BSP runs st was
// fitted to, and reads Trained from the switched runs on worker counts
// where the staleness fit has ASP diverge. It returns nil when the family
// has no switched run at that worker count.
func fitSwitch(ms []Measurement, source string, st *StalenessFit) *SwitchFit {
	type run struct {
		share   float64
		workers int
		run     int
	}
	finals := map[run]float64{}
	curves := map[run][][2]float64{}
	var order []run
	for _, m := range ms {
		p, ok := SwitchShare(m.Sync)
		if m.Source != source || m.Family != st.Family || !ok {
			continue
		}
		k := run{p, m.Workers, m.Run}
		if _, seen := curves[k]; !seen {
			if _, seen := finals[k]; !seen {
				order = append(order, k)
			}
		}
		switch m.Kind {
		case KindFinal:
			finals[k] = m.Value
		case KindAccuracy:
			curves[k] = append(curves[k], [2]float64{m.Progress, m.Value})
		}
	}
	f := &SwitchFit{Family: st.Family, Workers: st.Workers, Staleness: st.Staleness, Target: st.Target, Trained: math.Inf(1)}
	f.Reach = 1 / st.Budget.Value
	byShare := map[float64]*SwitchPoint{}
	slices.SortFunc(order, func(a, b run) int {
		if c := cmpFloat(a.share, b.share); c != 0 {
			return c
		}
		if a.workers != b.workers {
			return a.workers - b.workers
		}
		return a.run - b.run
	})
	for _, k := range order {
		fin, okFinal := finals[k]
		c := curves[k]
		slices.SortFunc(c, func(a, b [2]float64) int { return cmpFloat(a[0], b[0]) })
		p, v := make([]float64, len(c)), make([]float64, len(c))
		for i := range c {
			p[i], v[i] = c[i][0], c[i][1]
		}
		to, okTo := crossing(p, v, st.Target)
		if !okFinal || !okTo {
			continue
		}
		if k.workers != st.Workers {
			// A switched run that trained where ASP from the start fails.
			if float64(k.workers-1) >= st.Diverge.Value && k.share < f.Trained {
				f.Trained = k.share
				f.TrainedRef = fmt.Sprintf("%s %s, BSP for %.4g of the schedule then ASP, trained on %d workers", source, st.Family, k.share, k.workers)
			}
			continue
		}
		pt := byShare[k.share]
		if pt == nil {
			pt = &SwitchPoint{Share: k.share}
			byShare[k.share] = pt
		}
		pt.Final, pt.To = append(pt.Final, fin), append(pt.To, to)
	}
	if len(byShare) == 0 {
		return nil
	}
	shares := make([]float64, 0, len(byShare))
	for p := range byShare {
		shares = append(shares, p)
	}
	slices.Sort(shares)
	est := func(bsp, bspTo, final, to []float64) (loss, extra float64) {
		return stat.Mean(bsp, nil) - stat.Mean(final, nil), stat.Mean(to, nil)/stat.Mean(bspTo, nil) - 1
	}
	rng := rand.New(rand.NewPCG(BootstrapSeed, BootstrapSeed))
	resample := func(x, buf []float64) []float64 {
		buf = buf[:0]
		for range x {
			buf = append(buf, x[rng.IntN(len(x))])
		}
		return buf
	}
	lo, hi := (1-Confidence)/2, 1-(1-Confidence)/2
	pct := func(x []float64) (float64, float64) {
		slices.Sort(x)
		return stat.Quantile(lo, stat.Empirical, x, nil), stat.Quantile(hi, stat.Empirical, x, nil)
	}
	method := fmt.Sprintf("run means against BSP's, percentile bootstrap over runs (%d resamples, seed %d)", BootstrapResamples, BootstrapSeed)
	var b1, b2, b3, b4 []float64
	for _, share := range shares {
		pt := byShare[share]
		loss, extra := est(st.BSP, st.BSPTo, pt.Final, pt.To)
		bl, be := make([]float64, 0, BootstrapResamples), make([]float64, 0, BootstrapResamples)
		for range BootstrapResamples {
			b1, b2 = resample(st.BSP, b1), resample(st.BSPTo, b2)
			b3, b4 = resample(pt.Final, b3), resample(pt.To, b4)
			l, e := est(b1, b2, b3, b4)
			bl, be = append(bl, l), append(be, e)
		}
		name := fmt.Sprintf("%s.Switch(%.4g)", st.Family, share)
		src := fmt.Sprintf("%s %s, %d BSP-then-ASP runs at %.4g and %d BSP runs, at %d workers", source, st.Family, len(pt.Final), share, len(st.BSP), st.Workers)
		l, h := pct(bl)
		pt.Loss = Param{Name: name + ".Loss", Value: loss, Lo: l, Hi: h, Unit: "accuracy", Method: method, Source: src}
		l, h = pct(be)
		if share >= f.Reach {
			f.Points = append(f.Points, *pt)
			continue
		}
		pt.Extra = Param{Name: name + ".Extra", Value: extra, Lo: l, Hi: h, Unit: "x BSP examples", Method: method + fmt.Sprintf(", examples to %.4g", st.Target),
			Source: fmt.Sprintf("%s %s, %d BSP-then-ASP curves at %.4g and %d BSP curves crossing %.4g, at %d workers", source, st.Family, len(pt.To), share, len(st.BSPTo), st.Target, st.Workers)}
		f.Points = append(f.Points, *pt)
	}
	return f
}

// PredictSwitch returns the outcome of training family on workers workers
// under BSP for the share bspShare of the run's schedule and under ASP for
// the rest (Sync-Switch's hybrid), at band: IterFactor is the whole run's
// examples to the family's target over BSP's, FinalAccuracy what the run
// ends with, Budget the schedule's length, as Predict's (what a run that
// never reaches the target trains). bspShare 0 is ASP from the start (Predict's ASP outcome) and 1
// is BSP throughout; between the shares measured (SwitchFit.Points) the
// loss of final accuracy and the extra examples are interpolated linearly,
// each end of the band from the same end of its neighbours' intervals, and
// scaled to the ASP phase's average staleness on workers. A share outside
// [0, 1], or a family without switched measurements, is an error
// (ErrNotMeasured for the latter).
//
// The share is of the schedule, as Sync-Switch counts it; SwitchShareOf
// converts a progress against BSP's examples to the target.
func (m *Model) PredictSwitch(family string, workers int, bspShare float64, band Band) (Outcome, error) {
	if workers < 0 || !(bspShare >= 0 && bspShare <= 1) {
		return Outcome{}, fmt.Errorf("converge: bad switch prediction input: workers %d, BSP share %v (want 0 to 1)", workers, bspShare)
	}
	f, ok := m.Families[family]
	if !ok {
		return Outcome{}, fmt.Errorf("%w: family %q", ErrNotMeasured, family)
	}
	st, sw := f.Staleness, f.Switch
	if st == nil || sw == nil {
		return Outcome{}, fmt.Errorf("%w: BSP-then-ASP switch for family %q", ErrNotMeasured, family)
	}
	sbar := AvgStaleness(Strategy{Kind: ASP}, workers)
	a0 := st.BSPFinal.at(band, false)
	out := Outcome{Reached: true, Budget: st.Budget.at(band, true)}
	if sbar >= st.Diverge.at(band, false) && bspShare < sw.Trained {
		out.FinalAccuracy, out.IterFactor, out.Diverged, out.Reached = math.NaN(), math.Inf(1), true, false
		return out, nil
	}
	loss, extra := sw.at(st, bspShare, band)
	k := sbar / sw.Staleness
	out.FinalAccuracy = a0 - loss*k
	// Before Reach the target was not reached under BSP: the run needs
	// at least the examples it spent there.
	out.IterFactor = max(1+extra*k, min(bspShare/sw.Reach, 1))
	if out.FinalAccuracy < st.Target {
		out.IterFactor, out.Reached = math.Inf(1), false
	}
	return out, nil
}

// at returns the loss of final accuracy and the extra examples at the
// measured staleness for BSP share p at band, each interpolated linearly
// between its nodes: ASP (share 0) from st, the measured shares, and for
// the loss BSP (share 1), for the extra examples Reach, both 0.
func (s *SwitchFit) at(st *StalenessFit, p float64, band Band) (loss, extra float64) {
	lossX, lossY := []float64{0}, []float64{st.Drop.at(band, true) * s.Staleness}
	extraX, extraY := []float64{0}, []float64{st.Slowdown.at(band, true) * s.Staleness}
	for _, pt := range s.Points {
		lossX, lossY = append(lossX, pt.Share), append(lossY, pt.Loss.at(band, true))
		if pt.Extra.Name != "" {
			extraX, extraY = append(extraX, pt.Share), append(extraY, pt.Extra.at(band, true))
		}
	}
	lossX, lossY = append(lossX, 1), append(lossY, 0)
	extraX, extraY = append(extraX, s.Reach), append(extraY, 0)
	return interp(lossX, lossY, p), interp(extraX, extraY, p)
}

// interp interpolates (xs, ys), xs increasing, linearly at x, holding the
// last value past the last x.
func interp(xs, ys []float64, x float64) float64 {
	if x >= xs[len(xs)-1] {
		return ys[len(ys)-1]
	}
	i := 1
	for xs[i] < x {
		i++
	}
	t := (x - xs[i-1]) / (xs[i] - xs[i-1])
	return ys[i-1] + t*(ys[i]-ys[i-1])
}

// knownSwitchBSP is why the examples to the target of switched runs that
// switch after BSP's mean crossing may fall outside their runs' range
// (doc.go, "What the data says").
const knownSwitchBSP = "these runs crossed the target under BSP, before their switch, later than the BSP baseline runs did (ResNet32: median 9,906 worker-batches to 0.85 over 21 such runs against 7,385-8,453 for the 4 baseline runs); the model counts BSP's examples as the baseline's (doc.go)"

// switchChecks compares PredictSwitch with a family's switched runs: at
// each measured share on the fit's worker count, the final accuracy and the
// worker-batches to the target (the examples factor times BSP's mean)
// against the runs' range (Known where the share is at least Reach:
// knownSwitchBSP); on other worker counts (the ResNet32 runs on 16
// workers, where ASP from the start fails), whether the run trains, its
// final accuracy and its worker-batches to the target against BSP's mean
// on those workers, each against the runs' range.
func (m *Model) switchChecks(name string, ms []Measurement) []Check {
	f := m.Families[name]
	st, sw := f.Staleness, f.Switch
	if st == nil || sw == nil {
		return nil
	}
	var out []Check
	bspTo := stat.Mean(st.BSPTo, nil)
	for _, pt := range sw.Points {
		o, _ := m.PredictSwitch(name, sw.Workers, pt.Share, BandFit)
		label := fmt.Sprintf("%s bsp %.4g then asp on %d workers", name, pt.Share, sw.Workers)
		ref := fmt.Sprintf("%d runs", len(pt.Final))
		to := newCheck(name, fmt.Sprintf("%s: worker-batches to %.4g", label, st.Target), o.IterFactor*bspTo, slices.Min(pt.To), slices.Max(pt.To), ref)
		if pt.Share >= sw.Reach {
			to.Known = knownSwitchBSP
		}
		out = append(out, newCheck(name, label+": final accuracy", o.FinalAccuracy, slices.Min(pt.Final), slices.Max(pt.Final), ref), to)
	}
	// Runs on other worker counts: the switched runs, and BSP's crossings
	// there to scale the examples by.
	type key struct {
		share   float64
		workers int
	}
	finals := map[key][]float64{}
	curves := map[[3]int][][2]float64{}
	shares := map[[3]int]float64{}
	for _, r := range ms {
		if r.Source != sourceSyncSwitch || r.Family != name || r.Workers == sw.Workers {
			continue
		}
		p, isSwitch := SwitchShare(r.Sync)
		if !isSwitch && r.Sync != "bsp" {
			continue
		}
		switch r.Kind {
		case KindFinal:
			if isSwitch {
				finals[key{p, r.Workers}] = append(finals[key{p, r.Workers}], r.Value)
			}
		case KindAccuracy:
			kind := 0
			if isSwitch {
				kind = 1
			}
			k := [3]int{r.Workers, kind, r.Run}
			curves[k] = append(curves[k], [2]float64{r.Progress, r.Value})
			shares[k] = p
		}
	}
	toBy := map[key][]float64{}
	ck := make([][3]int, 0, len(curves))
	for k := range curves {
		ck = append(ck, k)
	}
	slices.SortFunc(ck, func(a, b [3]int) int {
		for i := range a {
			if a[i] != b[i] {
				return a[i] - b[i]
			}
		}
		return 0
	})
	for _, k := range ck {
		c := curves[k]
		slices.SortFunc(c, func(a, b [2]float64) int { return cmpFloat(a[0], b[0]) })
		p, v := make([]float64, len(c)), make([]float64, len(c))
		for i := range c {
			p[i], v[i] = c[i][0], c[i][1]
		}
		if at, ok := crossing(p, v, st.Target); ok {
			kk := key{-1, k[0]} // BSP
			if k[1] == 1 {
				kk = key{shares[k], k[0]}
			}
			toBy[kk] = append(toBy[kk], at)
		}
	}
	keys := make([]key, 0, len(finals))
	for k := range finals {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.workers != b.workers {
			return a.workers - b.workers
		}
		return cmpFloat(a.share, b.share)
	})
	for _, k := range keys {
		o, _ := m.PredictSwitch(name, k.workers, k.share, BandFit)
		label := fmt.Sprintf("%s bsp %.4g then asp on %d workers", name, k.share, k.workers)
		ref := fmt.Sprintf("%d runs", len(finals[k]))
		trained := 1.0
		if o.Diverged {
			trained = 0
		}
		out = append(out,
			newCheck(name, label+": trains (1 = yes)", trained, 1, 1, ref),
			newCheck(name, label+": final accuracy", o.FinalAccuracy, slices.Min(finals[k]), slices.Max(finals[k]), ref))
		bsp, to := toBy[key{-1, k.workers}], toBy[k]
		if len(bsp) > 0 && len(to) > 0 {
			out = append(out, newCheck(name, fmt.Sprintf("%s: worker-batches to %.4g", label, st.Target), o.IterFactor*stat.Mean(bsp, nil), slices.Min(to), slices.Max(to),
				fmt.Sprintf("%d runs; BSP's mean of %d runs on %d workers", len(to), len(bsp), k.workers)))
		}
	}
	return out
}

// SwitchShareOf converts a job's progress at its switch, as a fraction of
// BSP's examples to the family's target (what a simulator that charges
// strategies against BSP's examples counts), to the share of the schedule
// PredictSwitch takes: progress times SwitchFit.Reach, capped at 1. A
// progress of 1 is the share at which BSP reaches the target (ResNet32:
// 0.12, so a switch at 25% of the progress is one at 3% of the
// schedule).
func (m *Model) SwitchShareOf(family string, progress float64) (float64, error) {
	f, ok := m.Families[family]
	if !ok || f.Switch == nil {
		return 0, fmt.Errorf("%w: BSP-then-ASP switch for family %q", ErrNotMeasured, family)
	}
	if !(progress >= 0) {
		return 0, fmt.Errorf("converge: bad progress %v", progress)
	}
	return min(progress*f.Switch.Reach, 1), nil
}
