package converge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The local SGD sources and families of the default fit (doc.go, Sources).
const (
	sourceBlogCode  = "blogcode"
	sourcePaddle    = "paddle"
	sourceSlowMo    = "slowmo"
	familyBlogMNLI  = "bert-large-mnli"
	familyBlogSQuAD = "bert-large-squad"
	familyPaddleR50 = "resnet50-imagenet"
)

// localFamilies are the default fit's local SGD families and the source
// each is fitted to.
var localFamilies = []struct{ source, family string }{
	{sourceBlogCode, familyBlogMNLI}, {sourceBlogCode, familyBlogSQuAD}, {sourcePaddle, familyPaddleR50},
}

// LocalSGDFit is a family's cost of local SGD, from final accuracies
// measured at one examples budget for several averaging periods H: under
// local SGD(H) the final accuracy is SyncFinal - Drop*(H-1), where
// SyncFinal is the accuracy with averaging after every step (H = 1, the
// sources' synchronous reference).
//
// No source measures a curve, so the examples to a target are not
// measured: Model.Predict takes local SGD to reach any target its final
// accuracy reaches in BSP's examples (IterFactor 1, times the batch-size
// factor), and never to reach one above it.
type LocalSGDFit struct {
	// Family is the model family.
	Family string
	// Source is the source it was fitted to; Model.Checks compares the
	// fit with the family's rows from other sources.
	Source string
	// Workers are the measured worker counts, smallest first; SyncFinal
	// is measured at Workers[0].
	Workers []int
	// MaxPeriod is the largest measured period H.
	MaxPeriod int
	// SyncFinal is the final accuracy (fraction) averaging every step.
	SyncFinal Param
	// Drop is the loss of final accuracy per local step beyond the first
	// (per unit of H-1).
	Drop Param
	// Cells are the measured runs' final accuracies by worker count and
	// period, in that order.
	Cells []LocalCell
	// Ref says where each cell's runs come from (the first run's row).
	Ref map[[2]int]string
	// ols is set when the fit is the least-squares line over single runs
	// (one worker count); its residual variance, point count, mean and
	// spread of H-1 give the checks' prediction intervals.
	ols *olsFit
}

// LocalCell is one configuration's runs: Runs final accuracies of local
// SGD with Period on Workers workers.
type LocalCell struct {
	Workers, Period int
	Runs            []float64
}

type olsFit struct {
	sigma2, meanX, sxx, t float64
	n                     int
}

// FinalAccuracy returns the final accuracy of local SGD(h), h >= 1, with
// the fitted parameters.
func (l *LocalSGDFit) FinalAccuracy(h int) float64 {
	return l.SyncFinal.Value - l.Drop.Value*float64(h-1)
}

// syncMean returns the mean final accuracy averaging every step on w
// workers, and whether it was measured.
func (l *LocalSGDFit) syncMean(w int) (float64, bool) {
	for _, c := range l.Cells {
		if c.Workers == w && c.Period == 1 {
			return stat.Mean(c.Runs, nil), true
		}
	}
	return 0, false
}

// at returns the model's final accuracy for cell c: the measured
// synchronous mean at c.Workers (the fit's SyncFinal for a line fit) less
// Drop*(H-1).
func (l *LocalSGDFit) at(c LocalCell) float64 {
	base := l.SyncFinal.Value
	if l.ols == nil {
		base, _ = l.syncMean(c.Workers)
	}
	return base - l.Drop.Value*float64(c.Period-1)
}

// predict completes out (whose IterFactor holds the batch-size factor) for
// local SGD(h) toward target (0: none) at band.
func (l *LocalSGDFit) predict(out Outcome, h int, target float64, band Band) Outcome {
	out.FinalAccuracy = l.SyncFinal.at(band, false) - l.Drop.at(band, true)*float64(h-1)
	if target > 0 && out.FinalAccuracy < target {
		out.IterFactor, out.Reached = math.Inf(1), false
	}
	return out
}

// ParsePeriod returns H from a measurement's sync column "local(H)", and
// whether the column names local SGD.
func ParsePeriod(sync string) (int, bool) {
	s, ok := strings.CutPrefix(sync, "local(")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ")")
	if !ok {
		return 0, false
	}
	h, err := strconv.Atoi(s)
	if err != nil || h < 1 {
		return 0, false
	}
	return h, true
}

// fitLocalSGD fits a LocalSGDFit to a source's final accuracies of
// local(H) runs for one family. With repeated runs in every cell the gaps
// to H = 1 at each worker count are fitted by least squares through the
// origin on H-1 (every cell one point) and the intervals are percentile
// bootstrap over runs within cells; with single runs at one worker count
// the final accuracy is fitted by least squares on H-1 with t intervals.
func fitLocalSGD(ms []Measurement, source, family string) (*LocalSGDFit, error) {
	f := &LocalSGDFit{Family: family, Source: source, Ref: map[[2]int]string{}}
	cells := map[[2]int][]float64{}
	for _, m := range ms {
		if m.Source != source || m.Family != family || m.Kind != KindFinal {
			continue
		}
		h, ok := ParsePeriod(m.Sync)
		if !ok {
			continue
		}
		k := [2]int{m.Workers, h}
		if _, ok := f.Ref[k]; !ok {
			f.Ref[k] = m.Ref
		}
		cells[k] = append(cells[k], m.Value)
	}
	keys := make([][2]int, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	single := true
	for _, k := range keys {
		f.Cells = append(f.Cells, LocalCell{Workers: k[0], Period: k[1], Runs: cells[k]})
		if !slices.Contains(f.Workers, k[0]) {
			f.Workers = append(f.Workers, k[0])
		}
		f.MaxPeriod = max(f.MaxPeriod, k[1])
		single = single && len(cells[k]) == 1
	}
	for _, w := range f.Workers {
		if _, ok := cells[[2]int{w, 1}]; !ok {
			return nil, fmt.Errorf("converge: %s/%s: no local(1) runs at %d workers", source, family, w)
		}
	}
	if len(f.Cells) < 3 {
		return nil, fmt.Errorf("converge: %s/%s: %d local SGD configurations, need 3", source, family, len(f.Cells))
	}
	periods := fmt.Sprintf("H 1-%d", f.MaxPeriod)
	if single {
		if len(f.Workers) != 1 {
			return nil, fmt.Errorf("converge: %s/%s: single runs at %d worker counts", source, family, len(f.Workers))
		}
		return f, f.fitLine(source, periods)
	}
	for _, c := range f.Cells {
		if len(c.Runs) < 2 {
			return nil, fmt.Errorf("converge: %s/%s: %d workers, H %d: one run where the others repeat", source, family, c.Workers, c.Period)
		}
	}
	f.fitBootstrap(source, periods)
	return f, nil
}

// fitLine fits SyncFinal - Drop*(H-1) to single runs by least squares.
func (f *LocalSGDFit) fitLine(source, periods string) error {
	var xs, ys []float64
	for _, c := range f.Cells {
		xs, ys = append(xs, float64(c.Period-1)), append(ys, c.Runs[0])
	}
	a, s, cov, dof := ols(xs, ys)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(dof)}.Quantile(0.5 + Confidence/2)
	seA, seS := math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1))
	method := fmt.Sprintf("OLS of final accuracy on H-1 over %d single runs, t(%d) interval", len(xs), dof)
	src := fmt.Sprintf("%s %s, %d workers, %s, one run each", source, f.Family, f.Workers[0], periods)
	f.SyncFinal = Param{Name: f.Family + ".SyncFinal", Value: a, Lo: a - t*seA, Hi: a + t*seA, Unit: "accuracy", Method: method + " (intercept)", Source: src}
	f.Drop = Param{Name: f.Family + ".Drop", Value: -s, Lo: -s - t*seS, Hi: -s + t*seS, Unit: "accuracy/step", Method: method, Source: src}
	mx := stat.Mean(xs, nil)
	sxx := 0.0
	for _, x := range xs {
		sxx += (x - mx) * (x - mx)
	}
	rss := 0.0
	for i, x := range xs {
		r := ys[i] - (a + s*x)
		rss += r * r
	}
	f.ols = &olsFit{sigma2: rss / float64(dof), meanX: mx, sxx: sxx, t: t, n: len(xs)}
	return nil
}

// fitBootstrap fits SyncFinal (the H = 1 mean at the smallest worker
// count) and Drop (least squares through the origin of each cell's gap to
// H = 1 at its worker count, on H-1) with percentile bootstrap intervals,
// resampling runs within each cell.
func (f *LocalSGDFit) fitBootstrap(source, periods string) {
	est := func(runs [][]float64) (a0, drop float64) {
		sync := map[int]float64{}
		for i, c := range f.Cells {
			if c.Period == 1 {
				sync[c.Workers] = stat.Mean(runs[i], nil)
			}
		}
		var sxy, sxx float64
		for i, c := range f.Cells {
			if c.Period == 1 {
				continue
			}
			x := float64(c.Period - 1)
			sxy += x * (sync[c.Workers] - stat.Mean(runs[i], nil))
			sxx += x * x
		}
		return sync[f.Workers[0]], sxy / sxx
	}
	runs := make([][]float64, len(f.Cells))
	for i, c := range f.Cells {
		runs[i] = c.Runs
	}
	a0, drop := est(runs)
	rng := rand.New(rand.NewPCG(BootstrapSeed, BootstrapSeed))
	buf := make([][]float64, len(f.Cells))
	var ba, bd []float64
	for range BootstrapResamples {
		for i, c := range f.Cells {
			buf[i] = buf[i][:0]
			for range c.Runs {
				buf[i] = append(buf[i], c.Runs[rng.IntN(len(c.Runs))])
			}
		}
		x, y := est(buf)
		ba, bd = append(ba, x), append(bd, y)
	}
	qlo, qhi := (1-Confidence)/2, 1-(1-Confidence)/2
	pct := func(x []float64) (float64, float64) {
		slices.Sort(x)
		return stat.Quantile(qlo, stat.Empirical, x, nil), stat.Quantile(qhi, stat.Empirical, x, nil)
	}
	ws := make([]string, len(f.Workers))
	for i, w := range f.Workers {
		ws[i] = strconv.Itoa(w)
	}
	lo, hi := len(f.Cells[0].Runs), 0
	for _, c := range f.Cells {
		lo, hi = min(lo, len(c.Runs)), max(hi, len(c.Runs))
	}
	nruns := fmt.Sprintf("%d", lo)
	if hi > lo {
		nruns = fmt.Sprintf("%d-%d", lo, hi)
	}
	method := fmt.Sprintf("run means, percentile bootstrap over runs within each configuration (%d resamples, seed %d)", BootstrapResamples, BootstrapSeed)
	src := fmt.Sprintf("%s %s, %s workers, %s, %s runs each", source, f.Family, strings.Join(ws, " and "), periods, nruns)
	l, h := pct(ba)
	f.SyncFinal = Param{Name: f.Family + ".SyncFinal", Value: a0, Lo: l, Hi: h, Unit: "accuracy", Method: method + fmt.Sprintf(", H = 1 at %d workers", f.Workers[0]), Source: src}
	l, h = pct(bd)
	f.Drop = Param{Name: f.Family + ".Drop", Value: drop, Lo: l, Hi: h, Unit: "accuracy/step",
		Method: method + ", least squares through the origin of each configuration's gap to H = 1 on H-1", Source: src}
}

// checks compares the fit with each measured configuration (H > 1): the
// model's final accuracy against the Confidence t interval of the runs'
// mean (three runs' range would miss a perfect model's mean one time in
// four), or, for single runs, against the run widened by the line's
// Confidence prediction interval.
func (l *LocalSGDFit) checks() []Check {
	var out []Check
	for _, c := range l.Cells {
		if c.Period == 1 {
			continue
		}
		name := fmt.Sprintf("%s local(%d) on %d workers: final accuracy", l.Family, c.Period, c.Workers)
		got := l.at(c)
		if o := l.ols; o != nil {
			dx := float64(c.Period-1) - o.meanX
			half := o.t * math.Sqrt(o.sigma2*(1+1/float64(o.n)+dx*dx/o.sxx))
			out = append(out, newCheck(l.Family, name, got, c.Runs[0]-half, c.Runs[0]+half,
				fmt.Sprintf("one run, %.4g; the line's %.0f%% prediction interval", c.Runs[0], 100*Confidence)))
			continue
		}
		n := float64(len(c.Runs))
		mean, sd := stat.MeanStdDev(c.Runs, nil)
		half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.5+Confidence/2) * sd / math.Sqrt(n)
		out = append(out, newCheck(l.Family, name, got, mean-half, mean+half,
			fmt.Sprintf("%d runs in [%.4g, %.4g], their mean's %.0f%% t interval", len(c.Runs), slices.Min(c.Runs), slices.Max(c.Runs), 100*Confidence)))
	}
	return out
}

// knownLocal are the other sources' local SGD gaps a family's fit is
// checked against, and why they are known to disagree (doc.go, "What the
// data says").
var knownLocal = map[string]string{
	sourceSlowMo + "/" + familyPaddleR50: "SlowMo's ImageNet local SGD ran from the first epoch at batch 8192 with its Nesterov buffers zeroed at every average; Paddle's switched from synchronous SGD after 30 epochs (post-local SGD), so its gap is far smaller (doc.go)",
}

// crossChecks compares a family's fitted gap to H = 1 with each other
// source's measured gap between local(H) and synchronous training (bsp or
// local(1) rows of the same family, workers and batch).
func (l *LocalSGDFit) crossChecks(ms []Measurement) []Check {
	var out []Check
	for _, r := range ms {
		h, ok := ParsePeriod(r.Sync)
		if !ok || r.Family != l.Family || r.Source == l.Source || r.Kind != KindFinal || h == 1 {
			continue
		}
		for _, b := range ms {
			if b.Source != r.Source || b.Family != r.Family || b.Workers != r.Workers || b.Batch != r.Batch || b.Kind != KindFinal {
				continue
			}
			if hb, ok := ParsePeriod(b.Sync); b.Sync != "bsp" && (!ok || hb != 1) {
				continue
			}
			x := float64(h - 1)
			c := newCheck(l.Family, fmt.Sprintf("%s local(%d) on %d workers: %s's measured gap to synchronous in the fit's band", l.Family, h, r.Workers, r.Source),
				b.Value-r.Value, l.Drop.Lo*x, l.Drop.Hi*x, r.Ref)
			c.Known = knownLocal[r.Source+"/"+l.Family]
			out = append(out, c)
		}
	}
	return out
}
