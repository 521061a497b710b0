package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/internal/plot"
	"gonum.org/v1/gonum/stat"
)

// writeSwitchFigure writes dir/<family>-switch.png for a family with
// BSP-then-ASP measurements (converge.SwitchFit) and returns its path, or
// "" when the family has none: the final accuracy and the worker-batches
// to the target (over BSP's) against the share of the schedule under
// BSP, PredictSwitch on the measured worker count with its band, and the
// runs.
func writeSwitchFigure(m *converge.Model, f *converge.Family, dir string) (string, error) {
	sw, st := f.Switch, f.Staleness
	if sw == nil || st == nil {
		return "", nil
	}
	xs := make([]float64, 0, 201)
	for i := range 201 {
		xs = append(xs, float64(i)/200)
	}
	at := func(band converge.Band) (acc, iters []float64) {
		for _, p := range xs {
			o, err := m.PredictSwitch(f.Name, sw.Workers, p, band)
			if err != nil {
				return nil, nil
			}
			acc, iters = append(acc, o.FinalAccuracy), append(iters, o.IterFactor)
		}
		return acc, iters
	}
	fitAcc, fitIt := at(converge.BandFit)
	loAcc, loIt := at(converge.BandLow)
	hiAcc, hiIt := at(converge.BandHigh)
	bspTo := stat.Mean(st.BSPTo, nil)
	accRuns := plot.Points{Name: fmt.Sprintf("measured: BSP then ASP on %d workers", sw.Workers)}
	itRuns := plot.Points{Name: accRuns.Name}
	for _, pt := range sw.Points {
		for i := range pt.Final {
			accRuns.X, accRuns.Y = append(accRuns.X, pt.Share), append(accRuns.Y, pt.Final[i])
			itRuns.X, itRuns.Y = append(itRuns.X, pt.Share), append(itRuns.Y, pt.To[i]/bspTo)
		}
	}
	ends := func(ys0, ys1 []float64, scale float64) plot.Points {
		p := plot.Points{Name: "measured: ASP (share 0) and BSP (share 1)"}
		for _, y := range ys0 {
			p.X, p.Y = append(p.X, 0), append(p.Y, y/scale)
		}
		for _, y := range ys1 {
			p.X, p.Y = append(p.X, 1), append(p.Y, y/scale)
		}
		return p
	}
	band := fmt.Sprintf("%.0f%% band", 100*converge.Confidence)
	panels := []plot.FitPanel{
		{
			YLabel: "final test accuracy", LegendBottomLeft: true,
			Curves: []plot.Series{{Name: "fit: PredictSwitch, Loss interpolated", X: xs, Y: fitAcc}},
			Bands:  []plot.Band{{Name: band, X: xs, Lo: hiAcc, Hi: loAcc}},
			Points: []plot.Points{accRuns, ends(st.ASP, st.BSP, 1)},
		},
		{
			YLabel: fmt.Sprintf("worker-batches to %.4g / BSP's", st.Target),
			Curves: []plot.Series{{Name: fmt.Sprintf("fit: Extra interpolated, 0 from Reach = %.3g", sw.Reach), X: xs, Y: fitIt}},
			Bands:  []plot.Band{{Name: band, X: xs, Lo: loIt, Hi: hiIt}},
			Points: []plot.Points{itRuns, ends(st.ASPTo, st.BSPTo, bspTo)},
		},
	}
	path := filepath.Join(dir, f.Name+"-switch.png")
	o := plot.Options{Title: "BSP then ASP (Sync-Switch): " + f.Name, XLabel: "share of the schedule under BSP before the switch"}
	return path, plot.WriteFile(path, func(w io.Writer) error { return plot.Fit(w, o, panels) })
}
