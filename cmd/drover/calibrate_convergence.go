package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/internal/plot"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// defaultConvergenceOut is where drover calibrate --convergence writes
// its figures unless -o says otherwise.
var defaultConvergenceOut = filepath.Join("runs", "calibrate-convergence")

// calibrateConvergence prints, per family of m, its fitted parameters
// (value, 95% interval, unit, source) and its checks against ms
// (m.Checks) with PASS/FAIL, writes dir/<family>.png, and ends with a
// summary line. ok is false when a check fails that is not a known
// disagreement (converge.Check.Known).
func calibrateConvergence(m *converge.Model, ms []converge.Measurement, dir string, stdout io.Writer) (ok bool, err error) {
	fmt.Fprintln(stdout, "== convergence model (env/converge): each fit against the measurements it was fitted to")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	checks := m.Checks(ms)
	var pass, fail, known int
	for _, name := range m.Names() {
		f := m.Families[name]
		png := filepath.Join(dir, name+".png")
		fmt.Fprintf(stdout, "\n-- %s (figure %s)\n", name, png)
		if err := printParams(stdout, f.Params()); err != nil {
			return false, err
		}
		var fam []converge.Check
		for _, c := range checks {
			if c.Family == name {
				fam = append(fam, c)
			}
		}
		p, fl, k, err := printChecks(stdout, fam)
		if err != nil {
			return false, err
		}
		pass, fail, known = pass+p, fail+fl, known+k
		panels := convergencePanels(m, f, ms)
		o := plot.Options{Title: "convergence fit: " + name, XLabel: panels.xlabel, LogX: panels.logX}
		if err := plot.WriteFile(png, func(w io.Writer) error { return plot.Fit(w, o, panels.panels) }); err != nil {
			return false, err
		}
		if sp, err := writeSwitchFigure(m, f, dir); err != nil {
			return false, err
		} else if sp != "" {
			fmt.Fprintf(stdout, "BSP-then-ASP figure: %s\n", sp)
		}
	}
	ok = fail == known
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	fmt.Fprintf(stdout, "\nsummary: %d families, %d checks: %d PASS, %d FAIL (%d of them known disagreements doc.go documents, %d unexpected): %s\n",
		len(m.Names()), len(checks), pass, fail, known, fail-known, verdict)
	return ok, nil
}

// printParams prints a family's fitted parameters as a table.
func printParams(w io.Writer, ps []converge.Param) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "parameter\tfit\t%.0f%% interval\tunit\tsource\n", 100*converge.Confidence)
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%.4g\t[%.4g, %.4g]\t%s\t%s\n", p.Name, p.Value, p.Lo, p.Hi, p.Unit, p.Source)
	}
	return tw.Flush()
}

// printChecks prints one line per check, its verdict first (PASS, FAIL,
// or "FAIL known"), then each known failure's reason once, and returns
// the counts.
func printChecks(w io.Writer, cs []converge.Check) (pass, fail, known int, err error) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "\nverdict\tcheck\tmodel\tdata\n")
	var reasons []string
	for _, c := range cs {
		verdict := "PASS"
		switch {
		case c.Pass:
			pass++
		case c.Known != "":
			fail++
			known++
			verdict = "FAIL known"
		default:
			fail++
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t[%.4g, %.4g] (%s)\n", verdict, c.Name, c.Value, c.Lo, c.Hi, c.Ref)
		if verdict == "FAIL known" && !slices.Contains(reasons, c.Known) {
			reasons = append(reasons, c.Known)
		}
	}
	if err := tw.Flush(); err != nil {
		return 0, 0, 0, err
	}
	for _, r := range reasons {
		fmt.Fprintf(w, "known disagreement: %s\n", r)
	}
	return pass, fail, known, nil
}

// familyFigure is a family's figure: its panels over a shared x axis.
type familyFigure struct {
	xlabel string
	logX   bool
	panels []plot.FitPanel
}

// convergencePanels draws what f measured: against batch size, against
// staleness, against local SGD's period, or several (one figure, batch
// panels first, then local SGD's, when a family has more than one part;
// the first part's axis then wins).
func convergencePanels(m *converge.Model, f *converge.Family, ms []converge.Measurement) familyFigure {
	var fig familyFigure
	if st := f.Staleness; st != nil {
		fig = familyFigure{xlabel: "average staleness (iterations; ASP on w workers: w-1)", panels: stalenessPanels(m, f.Name, st, ms)}
	}
	if l := f.Local; l != nil {
		fig = familyFigure{xlabel: "local SGD period H (steps between averages)", logX: true, panels: append(localPanels(m, f.Name, l, ms), fig.panels...)}
	}
	if b := f.Batch; b != nil {
		fig = familyFigure{xlabel: "global batch size (examples)", logX: true, panels: append(batchPanels(b, ms), fig.panels...)}
	}
	return fig
}

// localPanels is a local SGD family's final accuracy against the period
// H: the fit with its band (Predict at BandLow and BandHigh), the fitted
// source's runs per worker count, and the family's rows from other
// sources.
func localPanels(m *converge.Model, name string, l *converge.LocalSGDFit, ms []converge.Measurement) []plot.FitPanel {
	var xs []float64
	for h := 1; h <= 2*l.MaxPeriod; h++ {
		xs = append(xs, float64(h))
	}
	at := func(band converge.Band) []float64 {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			o, err := m.Predict(name, converge.Strategy{Kind: converge.LocalSGD, Period: int(x)}, l.Workers[0], 0, 0, band)
			if err != nil {
				o.FinalAccuracy = math.NaN()
			}
			ys[i] = o.FinalAccuracy
		}
		return ys
	}
	pn := plot.FitPanel{
		YLabel: "final test accuracy", LegendBottomLeft: true,
		Curves: []plot.Series{{Name: fmt.Sprintf("fit: %.4g - %.3g (H-1)", l.SyncFinal.Value, l.Drop.Value), X: xs, Y: at(converge.BandFit)}},
		Bands:  []plot.Band{{Name: fmt.Sprintf("%.0f%% band", 100*converge.Confidence), X: xs, Lo: at(converge.BandHigh), Hi: at(converge.BandLow)}},
	}
	for _, w := range l.Workers {
		p := plot.Points{Name: fmt.Sprintf("measured: %s, %d workers", l.Source, w)}
		for _, c := range l.Cells {
			if c.Workers != w {
				continue
			}
			for _, v := range c.Runs {
				p.X, p.Y = append(p.X, float64(c.Period)), append(p.Y, v)
			}
		}
		pn.Points = append(pn.Points, p)
	}
	others := map[string]*plot.Points{}
	var order []string
	for _, r := range ms {
		if r.Family != name || r.Source == l.Source || r.Kind != converge.KindFinal {
			continue
		}
		h, ok := converge.ParsePeriod(r.Sync)
		if !ok && r.Sync != "bsp" {
			continue
		}
		if !ok {
			h = 1
		}
		k := fmt.Sprintf("measured: %s, %d workers (other protocol)", r.Source, r.Workers)
		if others[k] == nil {
			others[k] = &plot.Points{Name: k}
			order = append(order, k)
		}
		others[k].X, others[k].Y = append(others[k].X, float64(h)), append(others[k].Y, r.Value)
	}
	for _, k := range order {
		pn.Points = append(pn.Points, *others[k])
	}
	return []plot.FitPanel{pn}
}

// batchPanels are a batch family's epochs to its target and efficiency
// against batch size: the fit with its band (Noise at the ends of its
// interval), the measured crossings (and the runs that ended below the
// target, at their last epoch), and the efficiency the measured noise
// scale gives.
func batchPanels(b *converge.BatchFit, ms []converge.Measurement) []plot.FitPanel {
	lo, hi := b.Points[0].Batch, b.Points[len(b.Points)-1].Batch
	xs := make([]float64, 41)
	floats.LogSpan(xs, float64(lo)/1.5, float64(hi)*1.5)
	curve := func(f func(int, converge.Band) float64, band converge.Band) []float64 {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = f(int(math.Round(x)), band)
		}
		return ys
	}
	reached, below := plot.Points{Name: "measured: first crossing"}, plot.Points{Name: "measured: ended below (its last epoch)"}
	for _, p := range b.Points {
		if p.Reached {
			reached.X, reached.Y = append(reached.X, float64(p.Batch)), append(reached.Y, p.Epochs)
		} else {
			below.X, below.Y = append(below.X, float64(p.Batch)), append(below.Y, b.Horizon)
		}
	}
	bandName := fmt.Sprintf("%.0f%% band (Noise in [%.4g, %.4g])", 100*converge.Confidence, b.Noise.Lo, b.Noise.Hi)
	epochs := plot.FitPanel{
		YLabel: fmt.Sprintf("epochs to %.4g%% test accuracy", b.Target),
		Curves: []plot.Series{{Name: fmt.Sprintf("fit: %.3g (1 + M/%.4g)", b.SMin.Value, b.Noise.Value), X: xs, Y: curve(b.EpochsAt, converge.BandFit)}},
		Bands:  []plot.Band{{Name: bandName, X: xs, Lo: curve(b.EpochsAt, converge.BandLow), Hi: curve(b.EpochsAt, converge.BandHigh)}},
		Points: []plot.Points{reached, below},
	}
	eff := plot.FitPanel{
		YLabel:           fmt.Sprintf("efficiency vs batch %d", b.RefBatch),
		LegendBottomLeft: true,
		Curves:           []plot.Series{{Name: "fit: (Noise + M0) / (Noise + M)", X: xs, Y: curve(b.EfficiencyAt, converge.BandFit)}},
		Bands:            []plot.Band{{Name: bandName, X: xs, Lo: curve(b.EfficiencyAt, converge.BandHigh), Hi: curve(b.EfficiencyAt, converge.BandLow)}},
	}
	if noise, ok := b.MeasuredNoise(ms); ok {
		pg := plot.Points{Name: fmt.Sprintf("from the measured noise scale (%.4g, median epoch)", noise)}
		for _, p := range b.Points {
			pg.X, pg.Y = append(pg.X, float64(p.Batch)), append(pg.Y, converge.Efficiency(noise, b.RefBatch, p.Batch))
		}
		eff.Points = []plot.Points{pg}
	}
	return []plot.FitPanel{epochs, eff}
}

// stalenessPanels are a staleness family's final accuracy and examples
// to its target (over BSP's) against average staleness: the fit with its
// band (Predict at BandLow and BandHigh, SSP(s) on s+1 workers), the BSP
// and ASP runs, and the staleness of each failed run.
func stalenessPanels(m *converge.Model, name string, st *converge.StalenessFit, ms []converge.Measurement) []plot.FitPanel {
	top := 2 * st.Staleness
	if !math.IsInf(st.Diverge.Value, 1) {
		top = max(top, st.Diverge.Value+2)
	}
	xs := make([]float64, 0, int(top)+1)
	for s := 0.0; s <= top; s++ {
		xs = append(xs, s)
	}
	at := func(band converge.Band) (acc, iters []float64) {
		for _, s := range xs {
			o, err := m.Predict(name, converge.Strategy{Kind: converge.SSP, Staleness: int(s)}, int(s)+1, 0, 0, band)
			if err != nil {
				o = converge.Outcome{FinalAccuracy: math.NaN(), IterFactor: math.NaN()}
			}
			acc, iters = append(acc, o.FinalAccuracy), append(iters, o.IterFactor)
		}
		return acc, iters
	}
	fitAcc, fitIt := at(converge.BandFit)
	loAcc, loIt := at(converge.BandLow)
	hiAcc, hiIt := at(converge.BandHigh)
	band := fmt.Sprintf("%.0f%% band", 100*converge.Confidence)
	if d := st.Diverge; !math.IsInf(d.Lo, 1) {
		band += fmt.Sprintf(" (its costly end diverges from s = %.4g)", d.Lo)
	}
	runs := func(label string, x float64, ys []float64, scale float64) plot.Points {
		p := plot.Points{Name: fmt.Sprintf("measured: %s, %d runs", label, len(ys))}
		for _, y := range ys {
			p.X, p.Y = append(p.X, x), append(p.Y, y/scale)
		}
		return p
	}
	accPanel := plot.FitPanel{
		YLabel: "final test accuracy", LegendBottomLeft: true,
		Curves: []plot.Series{{Name: fmt.Sprintf("fit: %.4g - %.3g s", st.BSPFinal.Value, st.Drop.Value), X: xs, Y: fitAcc}},
		Bands:  []plot.Band{{Name: band, X: xs, Lo: hiAcc, Hi: loAcc}},
		Points: []plot.Points{runs("BSP", 0, st.BSP, 1), runs(fmt.Sprintf("ASP on %d workers", st.Workers), st.Staleness, st.ASP, 1)},
	}
	lo, hi := slices.Min(append(slices.Clone(st.BSP), st.ASP...)), slices.Max(st.BSP)
	for _, r := range ms {
		if r.Family == name && r.Kind == converge.KindDiverged {
			s := converge.AvgStaleness(converge.Strategy{Kind: converge.ASP}, r.Workers)
			accPanel.Curves = append(accPanel.Curves, plot.Series{Name: fmt.Sprintf("measured: ASP on %d workers failed", r.Workers), X: []float64{s, s}, Y: []float64{lo, hi}})
		}
	}
	bspTo := stat.Mean(st.BSPTo, nil)
	itPanel := plot.FitPanel{
		YLabel: fmt.Sprintf("worker-batches to %.4g / BSP's", st.Target),
		Curves: []plot.Series{{Name: fmt.Sprintf("fit: 1 + %.3g s", st.Slowdown.Value), X: xs, Y: fitIt}},
		Bands:  []plot.Band{{Name: band + ", cut where an end never reaches the target", X: xs, Lo: loIt, Hi: hiIt}},
		Points: []plot.Points{runs("BSP", 0, st.BSPTo, bspTo), runs(fmt.Sprintf("ASP on %d workers", st.Workers), st.Staleness, st.ASPTo, bspTo)},
	}
	return []plot.FitPanel{accPanel, itPanel}
}

// convergenceFlags says whether drover calibrate checks the convergence
// model (conv, --convergence), and refuses flags of the other mode: the
// straggler model's with --convergence, -o/--out without it.
func convergenceFlags(fs *flag.FlagSet, conv bool) (bool, error) {
	var other []string
	fs.Visit(func(f *flag.Flag) {
		if isOut := f.Name == "out" || f.Name == "o"; f.Name != "convergence" && isOut != conv {
			other = append(other, "-"+f.Name)
		}
	})
	switch {
	case len(other) > 0 && conv:
		return false, fmt.Errorf("--convergence takes only -o/--out, not %s", strings.Join(other, ", "))
	case len(other) > 0:
		return false, fmt.Errorf("%s: only with --convergence", strings.Join(other, ", "))
	}
	return conv, nil
}

// runConvergence is drover calibrate --convergence: the embedded model
// against the embedded measurements, figures under dir.
func runConvergence(dir string, stdout io.Writer) error {
	ok, err := calibrateConvergence(converge.Default(), converge.Measurements(), dir, stdout)
	if err != nil {
		return err
	}
	if !ok {
		return errCalibrationFailed
	}
	return nil
}
