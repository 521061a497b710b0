//go:build ignore

// lmm2025_digitise reads the published figures of the Azure LMM inference
// trace 2025 (../shared/traces/llm/azure_lmm_2025/*.png, decoded from the
// dataset's analysis notebook) and writes the curves the synthetic
// generator (LMM2025) is fitted to, as lmm2025_digitised.csv. How each
// figure is read is written into the CSV's header and
// docs/results/multimodal.md; run it from datasets/llm:
//
//	go run lmm2025_digitise.go -in ../../../shared/traces/llm/azure_lmm_2025 -out lmm2025_digitised.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// rgb is a colour.
type rgb struct{ r, g, b float64 }

// Matplotlib's default colours C0 (blue) and C1 (orange).
var (
	blue   = rgb{31, 119, 180}
	orange = rgb{255, 127, 14}
)

// near reports whether the pixel at (x, y) is within tol of c (Euclidean,
// 0-255 per channel): the line's core, not its anti-aliased edge.
func near(img image.Image, x, y int, c rgb, tol float64) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	dr, dg, db := float64(r>>8)-c.r, float64(g>>8)-c.g, float64(b>>8)-c.b
	return dr*dr+dg*dg+db*db <= tol*tol
}

// axis maps pixels to data along one axis by a least-squares line through
// gridline pixels and their values (log10 of the value on a log axis).
type axis struct {
	a, b float64 // value = a + b*pixel (log10 value on a log axis)
	log  bool
}

// fit fits the axis through the gridline pixels px of values v.
func fit(px, v []float64, log bool) axis {
	if log {
		w := make([]float64, len(v))
		for i := range v {
			w[i] = math.Log10(v[i])
		}
		v = w
	}
	n := float64(len(px))
	var sx, sy, sxx, sxy float64
	for i := range px {
		sx, sy, sxx, sxy = sx+px[i], sy+v[i], sxx+px[i]*px[i], sxy+px[i]*v[i]
	}
	b := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return axis{a: (sy - b*sx) / n, b: b, log: log}
}

// at is the value at pixel p.
func (a axis) at(p float64) float64 {
	v := a.a + a.b*p
	if a.log {
		return math.Pow(10, v)
	}
	return v
}

// cdf is one curve of a CDF figure.
type cdf struct {
	name  string
	file  string
	color rgb
	x     axis
	// x0, x1 bound the plot's interior columns; skip is the legend's box
	// (columns < skipX and rows < skipY are ignored).
	x0, x1, skipX, skipY int
}

// series is one curve of a per-minute figure.
type series struct {
	name   string
	file   string
	color  rgb
	x0, x1 int // the columns of the week's first and last minute
}

const (
	tol = 70 // colour distance of a line's core
	hw  = 0  // a line core is one pixel (two where its centre falls between rows): its top row is its centre
)

func main() {
	in := flag.String("in", "../../../shared/traces/llm/azure_lmm_2025", "folder of the figures")
	out := flag.String("out", "lmm2025_digitised.csv", "CSV to write")
	flag.Parse()
	// The CDF figures share the y axis: gridlines 0, 20, ..., 100 % at
	// rows 384, 317, 250, 183, 116, 48; the plot's frame is columns 66
	// and 562.
	yCDF := fit([]float64{384, 317, 250, 183, 116, 48}, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, false)
	xImages := fit([]float64{88, 202, 315, 429, 542}, []float64{1, 10, 100, 1000, 10000}, true)
	xInput := fit([]float64{104, 209, 313, 417, 521}, []float64{10, 100, 1000, 10000, 100000}, true)
	xGen := fit([]float64{88, 195, 302, 409, 516}, []float64{1, 10, 100, 1000, 10000}, true)
	cdfs := []cdf{
		{"images_per_request", "images_per_request_cdf.png", blue, xImages, 67, 561, 0, 0},
		{"input_tokens_image", "input_tokens_cdf.png", blue, xInput, 67, 561, 220, 110},
		{"input_tokens_text", "input_tokens_cdf.png", orange, xInput, 67, 561, 220, 110},
		{"generated_tokens_image", "generated_tokens_cdf.png", blue, xGen, 67, 561, 220, 110},
		{"generated_tokens_text", "generated_tokens_cdf.png", orange, xGen, 67, 561, 220, 110},
	}
	// invocations_per_minute.png: gridlines 0, 100, ..., 400 requests a
	// minute at rows 381, 302, 224, 146, 67; the date ticks 2024-10-16 ...
	// 10-22 (midnight) at columns 222, 405, 589, 773, 957, 1140, 1324.
	yInv := fit([]float64{381, 302, 224, 146, 67}, []float64{0, 100, 200, 300, 400}, false)
	xInv := fit([]float64{222, 405, 589, 773, 957, 1140, 1324}, []float64{1, 2, 3, 4, 5, 6, 7}, false) // days since 10-15 00:00
	ser := []series{
		{"invocations_per_minute_image", "invocations_per_minute.png", blue, 0, 0},
		{"invocations_per_minute_text", "invocations_per_minute.png", orange, 0, 0},
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# Curves digitised from the Azure LMM inference trace 2025's published figures\n")
	fmt.Fprintf(w, "# (../shared/traces/llm/azure_lmm_2025/*.png) by datasets/llm/lmm2025_digitise.go; see docs/results/multimodal.md.\n")
	fmt.Fprintf(w, "# CDF curves: x is the value at a pixel column's centre (log axis fitted through the decade gridlines),\n")
	fmt.Fprintf(w, "# lo = hi the CDF (0-1) at the top of the curve's line core in that column (linear axis through the\n")
	fmt.Fprintf(w, "# 0..100%% gridlines), made non-decreasing; only columns where the CDF changes are kept.\n")
	fmt.Fprintf(w, "# Per-minute curves: x is the minute (since 2024-10-15 12:00 UTC) at a pixel column's centre,\n")
	fmt.Fprintf(w, "# lo and hi the lowest and highest requests a minute the series' line core reaches in that column\n")
	fmt.Fprintf(w, "# (a column spans %.2f minutes).\n", 1440*xInv.b)
	fmt.Fprintf(w, "curve,x,lo,hi\n")
	imgs := map[string]image.Image{}
	load := func(name string) image.Image {
		if m, ok := imgs[name]; ok {
			return m
		}
		fh, err := os.Open(filepath.Join(*in, name))
		if err != nil {
			log.Fatal(err)
		}
		defer fh.Close()
		m, err := png.Decode(fh)
		if err != nil {
			log.Fatal(err)
		}
		imgs[name] = m
		return m
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, c := range cdfs {
		img := load(c.file)
		prev, kept := -1.0, 0
		for x := c.x0; x <= c.x1; x++ {
			top := -1
			for y := 40; y < 400; y++ {
				if x < c.skipX && y < c.skipY {
					continue
				}
				if near(img, x, y, c.color, tol) {
					top = y
					break
				}
			}
			if top < 0 {
				continue // hidden or absent: the CDF carries over
			}
			v := min(max(yCDF.at(float64(top)+hw), 0), 1)
			if v <= prev+1e-9 {
				continue
			}
			prev = v
			fmt.Fprintf(w, "%s,%s,%s,%s\n", c.name, g(c.x.at(float64(x))), g(v), g(v))
			kept++
		}
		log.Printf("%s: %d points, last %.4f", c.name, kept, prev)
	}
	for _, s := range ser {
		img := load(s.file)
		// The week runs from 2024-10-15 12:00 (0.5 days) to 10-22 12:00.
		start := (0.5 - xInv.a) / xInv.b
		end := (7.5 - xInv.a) / xInv.b
		missing := 0
		plo, phi := 0.0, 0.0
		for x := int(math.Ceil(start)); x <= int(math.Floor(end)); x++ {
			top, bot := -1, -1
			for y := 10; y < 398; y++ {
				if x >= 1310 && y <= 63 { // the legend box (its frame from column 1312, to row 62)
					continue
				}
				if near(img, x, y, s.color, tol) {
					if top < 0 {
						top = y
					}
					bot = y
				}
			}
			lo, hi := plo, phi
			if top >= 0 {
				hi = max(yInv.at(float64(top)+hw), 0)
				lo = max(yInv.at(float64(bot)-hw), 0)
			} else {
				missing++
			}
			plo, phi = lo, hi
			minute := (xInv.at(float64(x)) - 0.5) * 1440
			fmt.Fprintf(w, "%s,%s,%s,%s\n", s.name, g(math.Round(minute*10)/10), g(math.Round(lo*10)/10), g(math.Round(hi*10)/10))
		}
		log.Printf("%s: columns %.1f..%.1f, %d without the colour (previous kept)", s.name, start, end, missing)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
