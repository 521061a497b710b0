package llm

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"slices"

	"github.com/drover-sched/drover/internal/plot"
)

// writeLMMPlot draws the digitised Azure LMM 2025 curves against the
// generated trace reqs (LMMSynth's week) in six panels and writes the PNG
// to path.
func writeLMMPlot(path string, reqs []Request) error {
	curves, err := LMM2025Curves()
	if err != nil {
		return err
	}
	var images, inImg, inTxt, outImg, outTxt []int
	var perMin [2][]float64
	perMin[0], perMin[1] = make([]float64, LMM2025Minutes), make([]float64, LMM2025Minutes)
	for _, r := range reqs {
		k := 1
		if r.Images > 0 {
			k = 0
			images, inImg, outImg = append(images, r.Images), append(inImg, r.Prompt), append(outImg, r.Output)
		} else {
			inTxt, outTxt = append(inTxt, r.Prompt), append(outTxt, r.Output)
		}
		perMin[k][min(int(r.Arrival/60), LMM2025Minutes-1)]++
	}
	// step is a digitised CDF drawn as the figure's steps.
	step := func(name, label string) plot.Series {
		c := curves[name]
		s := plot.Series{Name: label}
		prev := 0.0
		for i, x := range c.X {
			s.X, s.Y = append(s.X, x, x), append(s.Y, prev, c.Hi[i])
			prev = c.Hi[i]
		}
		return s
	}
	// emp is the empirical CDF of v on a log grid up to top.
	emp := func(v []int, label string, top float64) plot.Series {
		v = slices.Clone(v)
		slices.Sort(v)
		s := plot.Series{Name: label}
		for i := 0; i <= 400; i++ {
			x := math.Pow(top, float64(i)/400)
			n, _ := slices.BinarySearch(v, int(math.Floor(x))+1)
			s.X, s.Y = append(s.X, x), append(s.Y, float64(n)/float64(len(v)))
		}
		return s
	}
	// envelope is the digitised range of a per-minute series per column
	// and the generated counts' range over the same minutes.
	envelope := func(k int, name string) []plot.Series {
		mm := lmm.minutes[k]
		c := curves[name]
		dh, dl := plot.Series{Name: "digitised high"}, plot.Series{Name: "digitised low"}
		gh, gl := plot.Series{Name: "generated high"}, plot.Series{Name: "generated low"}
		for j := range c.X {
			a, b := mm.first[j], mm.first[j+1]
			if a >= b {
				continue
			}
			x := c.X[j] / 60
			g := perMin[k][a:b]
			dh.X, dh.Y = append(dh.X, x), append(dh.Y, c.Hi[j])
			dl.X, dl.Y = append(dl.X, x), append(dl.Y, c.Lo[j])
			gh.X, gh.Y = append(gh.X, x), append(gh.Y, slices.Max(g))
			gl.X, gl.Y = append(gl.X, x), append(gl.Y, slices.Min(g))
		}
		return []plot.Series{dh, gh, dl, gl}
	}
	// cumulative is the fraction of the week's requests arrived by each
	// hour: fitted from the digitised series, and generated.
	cumulative := func() []plot.Series {
		var out []plot.Series
		for k, what := range []string{"image", "text"} {
			d, g := plot.Series{Name: "digitised " + what}, plot.Series{Name: "generated " + what}
			var sd, sg, td, tg float64
			for m := range LMM2025Minutes {
				td += lmm.rates[k][m]
				tg += perMin[k][m]
			}
			for m := range LMM2025Minutes {
				sd += lmm.rates[k][m]
				sg += perMin[k][m]
				if (m+1)%60 == 0 {
					h := float64(m+1) / 60
					d.X, d.Y = append(d.X, h), append(d.Y, sd/td)
					g.X, g.Y = append(g.X, h), append(g.Y, sg/tg)
				}
			}
			out = append(out, d, g)
		}
		return out
	}
	const w, h = 760, 440
	panels := []struct {
		o      plot.Options
		series []plot.Series
	}{
		{plot.Options{Title: "Images per image request (CDF)", XLabel: "images", YLabel: "fraction", LogX: true},
			[]plot.Series{step(CurveImages, "digitised"), emp(images, "generated", 1e3)}},
		{plot.Options{Title: "Input (context) tokens (CDF)", XLabel: "tokens", YLabel: "fraction", LogX: true},
			[]plot.Series{step(CurveInputImage, "digitised image"), emp(inImg, "generated image", 2e5), step(CurveInputText, "digitised text"), emp(inTxt, "generated text", 2e5)}},
		{plot.Options{Title: "Generated tokens (CDF)", XLabel: "tokens", YLabel: "fraction", LogX: true},
			[]plot.Series{step(CurveOutputImage, "digitised image"), emp(outImg, "generated image", 2e4), step(CurveOutputText, "digitised text"), emp(outTxt, "generated text", 2e4)}},
		{plot.Options{Title: "Arrivals over the week (cumulative)", XLabel: "hours since 2024-10-15 12:00 UTC", YLabel: "fraction of the series"},
			cumulative()},
		{plot.Options{Title: "Image requests a minute (range per figure column)", XLabel: "hours since 2024-10-15 12:00 UTC", YLabel: "requests/minute"},
			envelope(0, CurveRateImage)},
		{plot.Options{Title: "Text requests a minute (range per figure column)", XLabel: "hours since 2024-10-15 12:00 UTC", YLabel: "requests/minute"},
			envelope(1, CurveRateText)},
	}
	out := image.NewRGBA(image.Rect(0, 0, 2*w, 3*h))
	draw.Draw(out, out.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	for i, p := range panels {
		p.o.Width, p.o.Height = w, h
		var b bytes.Buffer
		if err := plot.Lines(&b, p.o, p.series); err != nil {
			return err
		}
		m, err := png.Decode(&b)
		if err != nil {
			return err
		}
		at := image.Pt((i%2)*w, (i/2)*h)
		draw.Draw(out, m.Bounds().Add(at), m, m.Bounds().Min, draw.Src)
	}
	return plot.WriteFile(path, func(wr io.Writer) error { return png.Encode(wr, out) })
}
