package plot

import (
	"fmt"
	"io"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
)

// Panel is one plot of a stack: its lines and the y axis's label (and
// scale: LogY).
type Panel struct {
	YLabel string
	LogY   bool
	Series []Series
}

// Stack draws panels one above the other over a shared x axis (the
// same range in each, labelled o.XLabel under the bottom one; o.Title
// above the top one) and encodes the figure as a PNG to w: several
// quantities over the same time, each on its own scale. Lines' rules
// apply to each panel; a panel with nothing to draw is an error naming
// it.
func Stack(w io.Writer, o Options, panels []Panel) error {
	if len(panels) == 0 {
		return ErrNoData
	}
	plots := make([][]*gplot.Plot, len(panels))
	xmin, xmax := 0.0, 0.0
	for i, pn := range panels {
		for k, s := range pn.Series {
			if len(s.X) != len(s.Y) {
				return fmt.Errorf("plot: panel %d (%q), series %d (%q): %d x values, %d y values", i, pn.YLabel, k, s.Name, len(s.X), len(s.Y))
			}
		}
		po := Options{YLabel: pn.YLabel, LogX: o.LogX, LogY: pn.LogY}
		if i == 0 {
			po.Title = o.Title
		}
		if i == len(panels)-1 {
			po.XLabel = o.XLabel
		}
		p, err := build(po, pn.Series, nil, true)
		if err != nil {
			return fmt.Errorf("plot: panel %d (%q): %w", i, pn.YLabel, err)
		}
		if i == 0 || p.X.Min < xmin {
			xmin = p.X.Min
		}
		if i == 0 || p.X.Max > xmax {
			xmax = p.X.Max
		}
		plots[i] = []*gplot.Plot{p}
	}
	for _, row := range plots {
		row[0].X.Min, row[0].X.Max = xmin, xmax
	}
	if o.Height <= 0 {
		o.Height = DefaultHeight * len(panels) / 2
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1}
	return encode(w, o.Width, o.Height, func(dc draw.Canvas) {
		for i, cs := range gplot.Align(plots, tiles, dc) {
			plots[i][0].Draw(cs[0])
		}
	})
}
