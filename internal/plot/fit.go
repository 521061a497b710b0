package plot

import (
	"fmt"
	"image/color"
	"io"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Points is one named set of measurements, drawn as markers.
type Points struct {
	// Name labels the markers in the legend.
	Name string
	// X and Y are the coordinates; they must have the same length.
	X, Y []float64
}

// Band is a shaded region between Lo and Hi over X: a fit's confidence
// band.
type Band struct {
	// Name labels the region in the legend.
	Name string
	// X, Lo and Hi are the region's edges; they must have the same
	// length, and X must be sorted.
	X, Lo, Hi []float64
}

// FitPanel is one panel of a fit figure: fitted curves (lines, in the
// palette's order), their bands (band i in curve i's color, translucent)
// and the measurements they were fitted to or are checked against.
type FitPanel struct {
	// YLabel labels the y axis; LogY draws it on a log scale.
	YLabel string
	LogY   bool
	// LegendBottomLeft puts this panel's legend bottom left (else top
	// left).
	LegendBottomLeft bool
	Curves           []Series
	Bands            []Band
	Points           []Points
}

// glyphs are the markers of successive point sets.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.CrossGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}}

// Fit draws panels one above the other over a shared x axis (labelled
// o.XLabel under the bottom one, o.Title above the top one; o.LogX for
// all) and encodes the figure as a PNG to w: fitted curves with their
// bands against measured points. Points with a NaN or infinite
// coordinate, or a non-positive one on a log axis, are left out; a band
// is cut where either edge is left out. A panel without a curve to draw
// is an error naming it.
func Fit(w io.Writer, o Options, panels []FitPanel) error {
	if len(panels) == 0 {
		return ErrNoData
	}
	plots := make([][]*gplot.Plot, len(panels))
	for i, pn := range panels {
		po := Options{YLabel: pn.YLabel, LogX: o.LogX, LogY: pn.LogY, LegendBottomLeft: pn.LegendBottomLeft}
		if i == 0 {
			po.Title = o.Title
		}
		if i == len(panels)-1 {
			po.XLabel = o.XLabel
		}
		p, err := buildFit(po, pn)
		if err != nil {
			return fmt.Errorf("plot: panel %d (%q): %w", i, pn.YLabel, err)
		}
		plots[i] = []*gplot.Plot{p}
	}
	xmin, xmax := plots[0][0].X.Min, plots[0][0].X.Max
	for _, row := range plots {
		xmin, xmax = min(xmin, row[0].X.Min), max(xmax, row[0].X.Max)
	}
	for _, row := range plots {
		row[0].X.Min, row[0].X.Max = xmin, xmax
	}
	if o.Height <= 0 && len(panels) > 1 {
		o.Height = DefaultHeight * len(panels) * 2 / 3
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(8)}
	return encode(w, o.Width, o.Height, func(dc draw.Canvas) {
		for i, cs := range gplot.Align(plots, tiles, dc) {
			plots[i][0].Draw(cs[0])
		}
	})
}

// buildFit makes one panel: build's lines, then the bands and points.
func buildFit(o Options, pn FitPanel) (*gplot.Plot, error) {
	for _, s := range pn.Curves {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("curve %q: %d x values, %d y values", s.Name, len(s.X), len(s.Y))
		}
	}
	p, err := build(o, pn.Curves, nil, true)
	if err != nil {
		return nil, err
	}
	keep := func(x, y float64) bool { return !bad(x) && !bad(y) && (!o.LogX || x > 0) && (!o.LogY || y > 0) }
	for i, b := range pn.Bands {
		if len(b.X) != len(b.Lo) || len(b.X) != len(b.Hi) {
			return nil, fmt.Errorf("band %q: %d x, %d lo, %d hi values", b.Name, len(b.X), len(b.Lo), len(b.Hi))
		}
		var ring plotter.XYs
		for k := range b.X {
			if keep(b.X[k], b.Lo[k]) && keep(b.X[k], b.Hi[k]) {
				ring = append(ring, plotter.XY{X: b.X[k], Y: b.Lo[k]})
			}
		}
		for k := len(b.X) - 1; k >= 0; k-- {
			if keep(b.X[k], b.Lo[k]) && keep(b.X[k], b.Hi[k]) {
				ring = append(ring, plotter.XY{X: b.X[k], Y: b.Hi[k]})
			}
		}
		if len(ring) < 4 {
			continue
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, fmt.Errorf("band %q: %w", b.Name, err)
		}
		c := palette[i%len(palette)]
		poly.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40}
		poly.LineStyle.Width = 0
		p.Add(poly)
		p.Legend.Add(b.Name, poly)
	}
	for i, s := range pn.Points {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("points %q: %d x values, %d y values", s.Name, len(s.X), len(s.Y))
		}
		var xy plotter.XYs
		for k := range s.X {
			if keep(s.X[k], s.Y[k]) {
				xy = append(xy, plotter.XY{X: s.X[k], Y: s.Y[k]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, fmt.Errorf("points %q: %w", s.Name, err)
		}
		sc.GlyphStyle.Color = color.Black
		if i > 0 {
			sc.GlyphStyle.Color = palette[(len(pn.Curves)+i)%len(palette)]
		}
		sc.GlyphStyle.Shape = glyphs[i%len(glyphs)]
		sc.GlyphStyle.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(s.Name, sc)
	}
	if !o.LogY && p.Y.Max > p.Y.Min {
		p.Y.Max += 0.1 * (p.Y.Max - p.Y.Min) // room for the legend over the points
	}
	return p, nil
}
