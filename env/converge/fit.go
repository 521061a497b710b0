package converge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the coverage of every interval the fits report.
const Confidence = 0.95

// BootstrapResamples is the number of bootstrap resamples behind the
// staleness intervals, and BootstrapSeed seeds them (PCG with both words
// equal to the seed), so the intervals are the same on every run.
const (
	BootstrapResamples = 4000
	BootstrapSeed      = 33
)

// Param is one fitted parameter: its value and Confidence interval, and
// where it comes from.
type Param struct {
	// Name is the parameter's name, prefixed by its family.
	Name string
	// Value is the fitted value.
	Value float64
	// Lo and Hi bound the Confidence interval.
	Lo, Hi float64
	// Unit is Value's unit.
	Unit string
	// Method says how Value and its interval were computed.
	Method string
	// Source names the measurements it was fitted to.
	Source string
}

// BatchPoint is one batch size's measured epochs to a family's target.
type BatchPoint struct {
	// Batch is the global batch size.
	Batch int
	// Epochs is the first crossing of the target, interpolated linearly
	// between evaluated epochs; meaningful only when Reached.
	Epochs float64
	// Reached is false when the run ended (after Horizon epochs) below
	// the target.
	Reached bool
}

// BatchFit is a family's statistical efficiency against the global batch
// size: the examples needed to reach Target grow as 1 + M/Noise (McCandlish
// et al. 2018's gradient-noise-scale law, which Pollux's efficiency also
// follows), so the epochs to Target at global batch M are
// SMin.Value * (1 + M/Noise.Value).
type BatchFit struct {
	// Family is the model family.
	Family string
	// Target is the test accuracy (percent) the epochs are counted to.
	Target float64
	// RefBatch is the smallest measured batch, against which
	// Efficiency is relative.
	RefBatch int
	// Horizon is how many epochs each measured run lasted.
	Horizon float64
	// SMin is the epochs to Target in the small-batch limit.
	SMin Param
	// Noise is the gradient noise scale B_noise, in examples.
	Noise Param
	// Points are the measurements the fit used (the reached ones) and
	// those it must not contradict (the ones that ended below Target).
	Points []BatchPoint
}

// Epochs returns the epochs to Target at global batch m with the fitted
// parameters.
func (b *BatchFit) Epochs(m int) float64 { return b.epochs(m, b.SMin.Value, b.Noise.Value) }

func (b *BatchFit) epochs(m int, smin, noise float64) float64 {
	return smin * (1 + float64(m)/noise)
}

// Efficiency returns the statistical efficiency of global batch m relative
// to RefBatch: the examples RefBatch needs to reach Target over those m
// needs, (Noise + RefBatch) / (Noise + m), Pollux's efficiency for a noise
// scale Noise.
func (b *BatchFit) Efficiency(m int) float64 { return efficiency(b.Noise.Value, b.RefBatch, m) }

func efficiency(noise float64, ref, m int) float64 {
	return (noise + float64(ref)) / (noise + float64(m))
}

// fitBatch fits a BatchFit to a family's per-epoch accuracy curves (rows of
// kind acc, unit epoch, one run per batch size).
func fitBatch(ms []Measurement, source, family string, target float64) (*BatchFit, error) {
	rows := selectRows(ms, func(m Measurement) bool {
		return m.Source == source && m.Family == family && m.Kind == KindAccuracy && m.Unit == "epoch"
	})
	if len(rows) == 0 {
		return nil, fmt.Errorf("converge: no accuracy curves for %s/%s", source, family)
	}
	byBatch := map[int][]Measurement{}
	for _, r := range rows {
		byBatch[r.Batch] = append(byBatch[r.Batch], r)
	}
	batches := make([]int, 0, len(byBatch))
	for b := range byBatch {
		batches = append(batches, b)
	}
	slices.Sort(batches)
	f := &BatchFit{Family: family, Target: target, RefBatch: batches[0]}
	var xs, ys []float64
	for _, b := range batches {
		c := byBatch[b]
		slices.SortFunc(c, func(x, y Measurement) int { return cmpFloat(x.Progress, y.Progress) })
		p, v := make([]float64, len(c)), make([]float64, len(c))
		for i, r := range c {
			p[i], v[i] = r.Progress, r.Value
		}
		f.Horizon = max(f.Horizon, p[len(p)-1])
		at, ok := crossing(p, v, target)
		f.Points = append(f.Points, BatchPoint{Batch: b, Epochs: at, Reached: ok})
		if ok {
			xs, ys = append(xs, float64(b)), append(ys, at)
		}
	}
	if len(xs) < 3 {
		return nil, fmt.Errorf("converge: %s/%s: %d batch sizes reach %.4g, need 3", source, family, len(xs), target)
	}
	a, s, cov, dof := ols(xs, ys)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(dof)}.Quantile(0.5 + Confidence/2)
	noise := a / s
	// Delta method for a/s.
	ga, gs := 1/s, -a/(s*s)
	seNoise := math.Sqrt(ga*ga*cov.At(0, 0) + gs*gs*cov.At(1, 1) + 2*ga*gs*cov.At(0, 1))
	seA := math.Sqrt(cov.At(0, 0))
	method := fmt.Sprintf("OLS of epochs-to-target on batch over %d batch sizes, t(%d) interval", len(xs), dof)
	src := fmt.Sprintf("%s %s curves, batch %d-%d", source, family, batches[0], batches[len(batches)-1])
	// SMin cannot be negative; its interval is cut at 0. The noise scale's
	// interval is taken on log(Noise) (se(log Noise) = se(Noise)/Noise), so
	// that it stays positive: a ratio's interval is skewed.
	f.SMin = Param{Name: family + ".SMin", Value: a, Lo: max(a-t*seA, 0), Hi: a + t*seA, Unit: "epochs", Method: method + ", cut at 0", Source: src}
	k := math.Exp(t * seNoise / noise)
	f.Noise = Param{Name: family + ".Noise", Value: noise, Lo: noise / k, Hi: noise * k, Unit: "examples", Method: method + ", delta method for intercept/slope on the log scale", Source: src}
	return f, nil
}

// ols fits y = a + s*x by least squares and returns the coefficients, their
// covariance (residual variance times (X'X)^-1) and the residual degrees of
// freedom.
func ols(xs, ys []float64) (a, s float64, cov *mat.SymDense, dof int) {
	n := len(xs)
	X := mat.NewDense(n, 2, nil)
	for i, x := range xs {
		X.Set(i, 0, 1)
		X.Set(i, 1, x)
	}
	y := mat.NewVecDense(n, ys)
	var beta mat.VecDense
	if err := beta.SolveVec(X, y); err != nil {
		panic("converge: ols: " + err.Error())
	}
	a, s = beta.AtVec(0), beta.AtVec(1)
	rss := 0.0
	for i, x := range xs {
		r := ys[i] - (a + s*x)
		rss += r * r
	}
	dof = n - 2
	var xtx mat.SymDense
	xtx.SymOuterK(1, X.T())
	var inv mat.Dense
	if err := inv.Inverse(&xtx); err != nil {
		panic("converge: ols: " + err.Error())
	}
	cov = mat.NewSymDense(2, nil)
	sigma2 := rss / float64(dof)
	for i := range 2 {
		for j := i; j < 2; j++ {
			cov.SetSym(i, j, sigma2*inv.At(i, j))
		}
	}
	return a, s, cov, dof
}

// StalenessFit is a family's cost of stale gradients, from repeated BSP and
// ASP runs of one schedule at one worker count: under an average staleness
// of sbar iterations the final accuracy is BSPFinal - Drop*sbar, the
// examples to Target are 1 + Slowdown*sbar times BSP's, and training fails
// from an average staleness of Diverge on.
type StalenessFit struct {
	// Family is the model family.
	Family string
	// Workers is the worker count of the measured ASP runs.
	Workers int
	// Staleness is their average staleness, Workers-1.
	Staleness float64
	// Target is the test accuracy (fraction) the examples are counted to.
	Target float64
	// BSPFinal is BSP's final test accuracy (fraction).
	BSPFinal Param
	// Drop is the loss of final accuracy per iteration of average
	// staleness.
	Drop Param
	// Slowdown is the extra fraction of examples to Target per iteration
	// of average staleness.
	Slowdown Param
	// Diverge is the average staleness from which training fails: Value
	// and Hi the smallest measured failing staleness, Lo the largest
	// measured one that trained, plus one. +Inf when no failure was
	// measured.
	Diverge Param
	// Budget is the examples of the measured schedule over BSP's examples
	// to Target: what a run that never reaches the target spends before
	// its schedule ends (the measured ASP runs were given as many
	// worker-batches as BSP's, and ran them all).
	Budget Param
	// BSP and ASP are the runs' final accuracies; BSPTo and ASPTo the
	// worker-batches to Target of the runs whose curves cross it; BSPEnd
	// the worker-batches of the BSP runs' whole schedules.
	BSP, ASP, BSPTo, ASPTo, BSPEnd []float64
}

// FinalAccuracy returns the final test accuracy at average staleness sbar,
// NaN where training diverges.
func (s *StalenessFit) FinalAccuracy(sbar float64) float64 {
	return s.finalAccuracy(sbar, s.BSPFinal.Value, s.Drop.Value, s.Diverge.Value)
}

func (s *StalenessFit) finalAccuracy(sbar, a0, drop, diverge float64) float64 {
	if sbar >= diverge {
		return math.NaN()
	}
	return a0 - drop*sbar
}

// ExamplesFactor returns the examples to Target at average staleness sbar
// relative to BSP's, +Inf where the final accuracy stays below Target or
// training diverges.
func (s *StalenessFit) ExamplesFactor(sbar float64) float64 {
	return s.examplesFactor(sbar, s.Target, s.BSPFinal.Value, s.Drop.Value, s.Slowdown.Value, s.Diverge.Value)
}

func (s *StalenessFit) examplesFactor(sbar, target, a0, drop, slow, diverge float64) float64 {
	acc := s.finalAccuracy(sbar, a0, drop, diverge)
	if math.IsNaN(acc) || acc < target {
		return math.Inf(1)
	}
	return max(1+slow*sbar, 0)
}

// fitStaleness fits a StalenessFit to a family's final accuracies and
// target crossings at one worker count, and the diverged rows at others.
func fitStaleness(ms []Measurement, source, family string, workers int, target float64) (*StalenessFit, error) {
	fam := selectRows(ms, func(m Measurement) bool { return m.Source == source && m.Family == family })
	f := &StalenessFit{Family: family, Workers: workers, Staleness: float64(workers - 1), Target: target}
	type key struct {
		sync string
		run  int
	}
	curves := map[key][][2]float64{}
	for _, m := range fam {
		if m.Workers != workers {
			continue
		}
		switch m.Kind {
		case KindFinal:
			switch m.Sync {
			case "bsp":
				f.BSP = append(f.BSP, m.Value)
				f.BSPEnd = append(f.BSPEnd, m.Progress)
			case "asp":
				f.ASP = append(f.ASP, m.Value)
			}
		case KindAccuracy:
			k := key{m.Sync, m.Run}
			curves[k] = append(curves[k], [2]float64{m.Progress, m.Value})
		}
	}
	keys := make([]key, 0, len(curves))
	for k := range curves {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.sync != b.sync {
			if a.sync < b.sync {
				return -1
			}
			return 1
		}
		return a.run - b.run
	})
	for _, k := range keys {
		c := curves[k]
		slices.SortFunc(c, func(a, b [2]float64) int { return cmpFloat(a[0], b[0]) })
		p, v := make([]float64, len(c)), make([]float64, len(c))
		for i := range c {
			p[i], v[i] = c[i][0], c[i][1]
		}
		at, ok := crossing(p, v, target)
		if !ok {
			continue
		}
		switch k.sync {
		case "bsp":
			f.BSPTo = append(f.BSPTo, at)
		case "asp":
			f.ASPTo = append(f.ASPTo, at)
		}
	}
	if len(f.BSP) < 2 || len(f.ASP) < 2 || len(f.BSPTo) < 2 || len(f.ASPTo) < 2 {
		return nil, fmt.Errorf("converge: %s/%s: too few runs at %d workers", source, family, workers)
	}
	sbar := f.Staleness
	est := func(bsp, asp, bspTo, aspTo []float64) (a0, drop, slow float64) {
		a0 = stat.Mean(bsp, nil)
		drop = (a0 - stat.Mean(asp, nil)) / sbar
		slow = (stat.Mean(aspTo, nil)/stat.Mean(bspTo, nil) - 1) / sbar
		return a0, drop, slow
	}
	a0, drop, slow := est(f.BSP, f.ASP, f.BSPTo, f.ASPTo)
	budget := stat.Mean(f.BSPEnd, nil) / stat.Mean(f.BSPTo, nil)
	rng := rand.New(rand.NewPCG(BootstrapSeed, BootstrapSeed))
	resample := func(x, buf []float64) []float64 {
		buf = buf[:0]
		for range x {
			buf = append(buf, x[rng.IntN(len(x))])
		}
		return buf
	}
	var ba, bd, bs, bb []float64
	var b1, b2, b3, b4, b5 []float64
	for range BootstrapResamples {
		b1, b2 = resample(f.BSP, b1), resample(f.ASP, b2)
		b3, b4 = resample(f.BSPTo, b3), resample(f.ASPTo, b4)
		x, y, z := est(b1, b2, b3, b4)
		ba, bd, bs = append(ba, x), append(bd, y), append(bs, z)
	}
	// Budget's resamples come after the others', so that adding it left
	// their intervals as they were.
	for range BootstrapResamples {
		b3, b5 = resample(f.BSPTo, b3), resample(f.BSPEnd, b5)
		bb = append(bb, stat.Mean(b5, nil)/stat.Mean(b3, nil))
	}
	lo, hi := (1-Confidence)/2, 1-(1-Confidence)/2
	pct := func(x []float64) (float64, float64) {
		slices.Sort(x)
		return stat.Quantile(lo, stat.Empirical, x, nil), stat.Quantile(hi, stat.Empirical, x, nil)
	}
	method := fmt.Sprintf("run means, percentile bootstrap over runs (%d resamples, seed %d)", BootstrapResamples, BootstrapSeed)
	src := fmt.Sprintf("%s %s, %d BSP and %d ASP runs at %d workers", source, family, len(f.BSP), len(f.ASP), workers)
	l, h := pct(ba)
	f.BSPFinal = Param{Name: family + ".BSPFinal", Value: a0, Lo: l, Hi: h, Unit: "accuracy", Method: method, Source: src}
	l, h = pct(bd)
	f.Drop = Param{Name: family + ".Drop", Value: drop, Lo: l, Hi: h, Unit: "accuracy/staleness", Method: method, Source: src}
	l, h = pct(bs)
	f.Slowdown = Param{Name: family + ".Slowdown", Value: slow, Lo: l, Hi: h, Unit: "1/staleness",
		Method: method + fmt.Sprintf(", examples to %.4g", target), Source: fmt.Sprintf("%s %s, %d BSP and %d ASP curves crossing %.4g at %d workers", source, family, len(f.BSPTo), len(f.ASPTo), target, workers)}
	l, h = pct(bb)
	f.Budget = Param{Name: family + ".Budget", Value: budget, Lo: l, Hi: h, Unit: "x examples to target", Method: method + fmt.Sprintf(", schedule over examples to %.4g", target),
		Source: fmt.Sprintf("%s %s, %d BSP schedules and %d BSP curves crossing %.4g at %d workers", source, family, len(f.BSPEnd), len(f.BSPTo), target, workers)}
	f.Diverge = Param{Name: family + ".Diverge", Value: math.Inf(1), Lo: math.Inf(1), Hi: math.Inf(1), Unit: "staleness", Method: "no failed run measured", Source: src}
	for _, m := range fam {
		if m.Kind == KindDiverged && m.Sync == "asp" {
			s := float64(m.Workers - 1)
			if s > sbar && s < f.Diverge.Value {
				f.Diverge = Param{Name: family + ".Diverge", Value: s, Lo: sbar + 1, Hi: s, Unit: "staleness",
					Method: fmt.Sprintf("bracketed: ASP trained at %d workers, failed at %d (%s)", workers, m.Workers, m.Ref), Source: fmt.Sprintf("%s %s, ASP at %d and %d workers", source, family, workers, m.Workers)}
			}
		}
	}
	return f, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
