package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"github.com/drover-sched/drover/internal/atomicfile"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Default figure size in pixels.
const (
	// DefaultWidth is the image width when Options.Width is 0.
	DefaultWidth = 900
	// DefaultHeight is the image height when Options.Height is 0.
	DefaultHeight = 560
)

// dpi is the resolution the canvas is drawn at: 72, so one point of the
// plotting library is one pixel and the image has exactly the asked size.
const dpi = 72

// ErrNoData is returned when no series has a point that can be drawn.
var ErrNoData = errors.New("plot: no data")

// Options sets a figure's text and axes.
type Options struct {
	// Title is drawn above the plot.
	Title string
	// XLabel and YLabel label the axes.
	XLabel, YLabel string
	// Width and Height are the image size in pixels (0: DefaultWidth x
	// DefaultHeight).
	Width, Height int
	// LogX and LogY draw the axis on a log scale; points with a
	// non-positive coordinate on a log axis are left out.
	LogX, LogY bool
	// LegendBottomLeft puts the legend bottom left, where falling lines
	// (a latency tail) leave room; otherwise Lines puts it top left and
	// CDF bottom right.
	LegendBottomLeft bool
}

// Sample is one named set of values whose empirical CDF CDF draws.
type Sample struct {
	// Name labels the line in the legend.
	Name string
	// Values are the observations; NaN and infinite ones are left out.
	Values []float64
}

// Series is one named line: Y against X, in the given order.
type Series struct {
	// Name labels the line in the legend.
	Name string
	// X and Y are the coordinates; they must have the same length.
	X, Y []float64
}

// palette is a fixed, print-friendly set of line colors (Tableau 10).
var palette = [...]color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
	{0x17, 0xbe, 0xcf, 0xff},
}

// dashes are cycled after the palette runs out, so lines stay distinct.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

// CDF draws the empirical CDF of each sample (a step from 0 to 1 at the
// sorted values) and encodes it as a PNG to w. The y axis is the fraction
// of the sample at or below x. It returns ErrNoData when no sample has a
// finite value (positive, with LogX).
func CDF(w io.Writer, o Options, samples []Sample) error {
	series := make([]Series, 0, len(samples))
	for _, s := range samples {
		xs := make([]float64, 0, len(s.Values))
		for _, v := range s.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && (!o.LogX || v > 0) {
				xs = append(xs, v)
			}
		}
		slices.Sort(xs)
		n := float64(len(xs))
		pts := Series{Name: s.Name, X: make([]float64, 0, 2*len(xs)), Y: make([]float64, 0, 2*len(xs))}
		for i, x := range xs {
			pts.X = append(pts.X, x, x)
			pts.Y = append(pts.Y, float64(i)/n, float64(i+1)/n)
		}
		series = append(series, pts)
	}
	if o.YLabel == "" {
		o.YLabel = "fraction"
	}
	return draw1(w, o, series, &[2]float64{0, 1}, false)
}

// Lines draws each series as a line and encodes the figure as a PNG to w.
// Points with a NaN or infinite coordinate are left out. It returns an
// error naming the series when X and Y differ in length, and ErrNoData
// when nothing can be drawn.
func Lines(w io.Writer, o Options, series []Series) error {
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: series %d (%q): %d x values, %d y values", i, s.Name, len(s.X), len(s.Y))
		}
	}
	return draw1(w, o, series, nil, true)
}

// draw1 draws the figure build makes and encodes it as a PNG to w.
func draw1(w io.Writer, o Options, series []Series, yRange *[2]float64, legendTopLeft bool) error {
	p, err := build(o, series, yRange, legendTopLeft)
	if err != nil {
		return err
	}
	return encode(w, o.Width, o.Height, func(dc draw.Canvas) { p.Draw(dc) })
}

// build makes the figure; yRange, when set, fixes the y axis, and the
// legend goes top left or bottom right (where a CDF has no lines).
func build(o Options, series []Series, yRange *[2]float64, legendTopLeft bool) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = o.Title
	p.Title.TextStyle.Font.Size = vg.Points(15)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(13)
		a.Tick.Label.Font.Size = vg.Points(11)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(12)
	p.X.Label.Text = o.XLabel
	p.Y.Label.Text = o.YLabel
	if o.LogX {
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	}
	if o.LogY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = legendTopLeft, legendTopLeft
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-12), vg.Points(12)
	if legendTopLeft {
		p.Legend.XOffs, p.Legend.YOffs = vg.Points(12), vg.Points(-8)
	}
	if o.LegendBottomLeft {
		p.Legend.Top, p.Legend.Left = false, true
		p.Legend.XOffs, p.Legend.YOffs = vg.Points(12), vg.Points(12)
	}
	p.Legend.Padding = vg.Points(2)
	drawn := 0
	for i, s := range series {
		xy := make(plotter.XYs, 0, len(s.X))
		for k := range s.X {
			x, y := s.X[k], s.Y[k]
			if bad(x) || bad(y) || (o.LogX && x <= 0) || (o.LogY && y <= 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: x, Y: y})
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plot: series %q: %w", s.Name, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.8)
		l.Dashes = dashes[(i/len(palette))%len(dashes)]
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoData
	}
	// A log axis over one value would be widened by gonum to include 0,
	// which a log scale cannot draw (it panics): widen it by a decade
	// each way instead.
	for _, a := range []struct {
		log bool
		ax  *gplot.Axis
	}{{o.LogX, &p.X}, {o.LogY, &p.Y}} {
		if a.log && a.ax.Min >= a.ax.Max && a.ax.Min > 0 {
			a.ax.Min, a.ax.Max = a.ax.Min/10, a.ax.Max*10
		}
	}
	if yRange != nil {
		p.Y.Min, p.Y.Max = yRange[0], yRange[1]
	} else if !o.LogY && p.Y.Max > p.Y.Min {
		// Headroom above the highest line for the top-left legend.
		p.Y.Max += 0.15 * (p.Y.Max - p.Y.Min)
	}
	return p, nil
}

// encode draws on a white canvas of wd x ht pixels (0: the defaults),
// inside a margin, and encodes it as a PNG to w.
func encode(w io.Writer, wd, ht int, drawOn func(draw.Canvas)) error {
	if wd <= 0 {
		wd = DefaultWidth
	}
	if ht <= 0 {
		ht = DefaultHeight
	}
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(wd), vg.Length(ht)), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	m := vg.Points(10) // margin
	drawOn(draw.Crop(draw.New(c), m, -m, m, -m))
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("plot: encode png: %w", err)
	}
	return nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// WriteFile writes the PNG that encode produces to path atomically: to a
// temporary file in the same directory, then renamed over path, so a
// failure never leaves a half-written figure.
func WriteFile(path string, encode func(io.Writer) error) error {
	if err := atomicfile.Write(path, encode); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
