package llm

import (
	"bytes"
	_ "embed" // the digitised curves
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

//go:generate go run lmm2025_digitise.go -in ../../../shared/traces/llm/azure_lmm_2025 -out lmm2025_digitised.csv

// lmm2025CSV holds the curves digitised from the Azure LMM 2025 trace's
// published figures by lmm2025_digitise.go (how: its header and
// docs/results/multimodal.md).
//
//go:embed lmm2025_digitised.csv
var lmm2025CSV []byte

// The digitised curves of the Azure LMM inference trace 2025 (the names in
// lmm2025_digitised.csv).
const (
	// CurveImages is the CDF of NumImages over requests with an image
	// (images_per_request_cdf.png).
	CurveImages = "images_per_request"
	// CurveInputImage and CurveInputText are the CDFs of ContextTokens of
	// image and text-only requests (input_tokens_cdf.png). An image
	// request's ContextTokens count its images' tokens in the production
	// model (ModServe 3.2: image requests' prompts are longer "due to
	// image tokens"; the image curve starts at 244-255 tokens, one GPT-4o
	// tile): env/infer/mm reads them so (Config.PromptHasImageTokens).
	CurveInputImage = "input_tokens_image"
	CurveInputText  = "input_tokens_text"
	// CurveOutputImage and CurveOutputText are the CDFs of
	// GeneratedTokens (generated_tokens_cdf.png).
	CurveOutputImage = "generated_tokens_image"
	CurveOutputText  = "generated_tokens_text"
	// CurveRateImage and CurveRateText are the requests a minute over the
	// week, as the range [Lo, Hi] each pixel column of
	// invocations_per_minute.png spans.
	CurveRateImage = "invocations_per_minute_image"
	CurveRateText  = "invocations_per_minute_text"
)

// LMM2025Requests is the number of requests in the Azure LMM 2025 trace:
// 1,000,000 sampled over LMM2025Minutes.
const LMM2025Requests = 1_000_000

// LMM2025Minutes is the trace's span, 2024-10-15 12:00 to 10-22 12:00 UTC:
// one week.
const LMM2025Minutes = 7 * 24 * 60

// LMMCurve is one curve digitised from the Azure LMM 2025 figures. For a
// CDF, X is a value (images, tokens) at a pixel column's centre and Lo =
// Hi the fraction of requests at or below it, non-decreasing to 1, kept
// only where it changes. For a per-minute series, X is the minute since
// the week's start at a column's centre and [Lo, Hi] the requests a minute
// the line spans in that column.
type LMMCurve struct {
	// Name is one of the Curve* constants.
	Name string
	// X, Lo and Hi are the points, in the figure's order.
	X, Lo, Hi []float64
}

// lmm holds the parsed curves and the generator's tables, built once.
var lmm struct {
	once    sync.Once
	curves  map[string]*LMMCurve
	dists   map[string]*intDist
	minutes [2]*minutes  // the image and text series' columns
	rates   [2][]float64 // expected requests a minute of the image and text series, fitted (burst)
	burst   float64      // the within-column exponent p: rate = Lo + (Hi-Lo) U^p
	err     error
}

// load parses the embedded curves and builds the generator's tables.
func load() error {
	lmm.once.Do(func() {
		lmm.curves, lmm.err = parseCurves(lmm2025CSV)
		if lmm.err != nil {
			return
		}
		lmm.dists = map[string]*intDist{}
		for _, n := range []string{CurveImages, CurveInputImage, CurveInputText, CurveOutputImage, CurveOutputText} {
			d, err := newIntDist(lmm.curves[n])
			if err != nil {
				lmm.err = fmt.Errorf("llm: digitised curve %s: %w", n, err)
				return
			}
			lmm.dists[n] = d
		}
		lmm.minutes = [2]*minutes{newMinutes(lmm.curves[CurveRateImage]), newMinutes(lmm.curves[CurveRateText])}
		lmm.burst, lmm.rates, lmm.err = fitRates(lmm.minutes)
	})
	return lmm.err
}

// LMM2025Curves returns the digitised curves by name (the Curve*
// constants). They are shared: do not modify them.
func LMM2025Curves() (map[string]*LMMCurve, error) {
	if err := load(); err != nil {
		return nil, err
	}
	return lmm.curves, nil
}

// parseCurves reads lmm2025_digitised.csv: '#' comment lines, the header
// curve,x,lo,hi, then points.
func parseCurves(data []byte) (map[string]*LMMCurve, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = 4
	out := map[string]*LMMCurve{}
	for i := 0; ; i++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("llm: digitised curves: %w", err)
		}
		if i == 0 {
			continue
		}
		var v [3]float64
		for k := range v {
			if v[k], err = strconv.ParseFloat(rec[k+1], 64); err != nil {
				return nil, fmt.Errorf("llm: digitised curves: %w", err)
			}
		}
		c := out[rec[0]]
		if c == nil {
			c = &LMMCurve{Name: rec[0]}
			out[rec[0]] = c
		}
		c.X, c.Lo, c.Hi = append(c.X, v[0]), append(c.Lo, v[1]), append(c.Hi, v[2])
	}
	for _, n := range []string{CurveImages, CurveInputImage, CurveInputText, CurveOutputImage, CurveOutputText, CurveRateImage, CurveRateText} {
		if c := out[n]; c == nil || len(c.X) < 2 {
			return nil, fmt.Errorf("llm: digitised curves: %s missing", n)
		}
	}
	return out, nil
}

// intDist is the distribution of a positive integer (images, tokens) that
// a digitised CDF gives. A pixel column i of the figure spans the values
// [X_i 10^(-w/2), X_i 10^(w/2)) (w: one column in decades) and its CDF
// rises by m_i = F_i - F_{i-1} there. The integers k whose k+0.5 falls in
// the column (the curve is read half an integer past k, away from the
// vertical line matplotlib draws at k) share m_i equally; a column too
// narrow to hold one gives m_i to the next integer. So P(N <= k) is the
// curve's height at k + 0.5 wherever a column holds at most one integer,
// and linear within the wider columns, where the figure shows nothing
// finer.
type intDist struct {
	lo, hi []int     // integers of column i
	cum    []float64 // CDF after column i (the last is 1)
	max    int       // the largest integer
}

// newIntDist builds the distribution of c (a CDF curve).
func newIntDist(c *LMMCurve) (*intDist, error) {
	if len(c.X) < 2 {
		return nil, errors.New("fewer than two points")
	}
	// One column in decades: the smallest step between kept columns.
	w := math.Inf(1)
	for i := 1; i < len(c.X); i++ {
		if !(c.X[i] > c.X[i-1]) || c.Hi[i] < c.Hi[i-1] {
			return nil, fmt.Errorf("point %d: not increasing", i)
		}
		w = min(w, math.Log10(c.X[i]/c.X[i-1]))
	}
	last := c.Hi[len(c.Hi)-1]
	if !(last > 0.99 && last <= 1) {
		return nil, fmt.Errorf("ends at %v, want 1", last)
	}
	d := &intDist{}
	prev := 0.0
	half := math.Pow(10, w/2)
	for i, x := range c.X {
		m := c.Hi[i] - prev
		if m <= 0 {
			continue
		}
		prev = c.Hi[i]
		lo := max(int(math.Ceil(x/half-0.5)), 1)
		hi := max(int(math.Ceil(x*half-0.5))-1, lo)
		d.lo, d.hi, d.cum = append(d.lo, lo), append(d.hi, hi), append(d.cum, c.Hi[i]/last)
		d.max = max(d.max, hi)
	}
	d.cum[len(d.cum)-1] = 1
	return d, nil
}

// draw maps u in [0, 1) to an integer: the column whose CDF step holds u,
// and within it the integer at u's place in the step.
func (d *intDist) draw(u float64) int {
	i, _ := slices.BinarySearch(d.cum, u)
	for i < len(d.cum)-1 && d.cum[i] <= u {
		i++
	}
	below := 0.0
	if i > 0 {
		below = d.cum[i-1]
	}
	n := d.hi[i] - d.lo[i] + 1
	k := d.lo[i] + int(float64(n)*(u-below)/(d.cum[i]-below))
	return min(k, d.hi[i])
}

// cdf returns P(N <= k) for k = 0..d.max.
func (d *intDist) cdf() []float64 {
	pmf := make([]float64, d.max+2)
	below := 0.0
	for i := range d.cum {
		m := (d.cum[i] - below) / float64(d.hi[i]-d.lo[i]+1)
		below = d.cum[i]
		pmf[d.lo[i]] += m
		pmf[d.hi[i]+1] -= m
	}
	out := make([]float64, d.max+1)
	run, cum := 0.0, 0.0
	for k := range out {
		run += pmf[k]
		cum += run
		out[k] = min(cum, 1)
	}
	out[d.max] = 1
	return out
}

// minutes maps the week's minutes to the pixel columns of a per-minute
// curve.
type minutes struct {
	col   []int     // minute -> column (the column its centre m + 0.5 falls in)
	first []int     // column -> its first minute; first[len] = LMM2025Minutes
	c     *LMMCurve // the curve
}

// newMinutes maps the week's minutes to c's columns, which are evenly
// spaced.
func newMinutes(c *LMMCurve) *minutes {
	n := len(c.X)
	step := (c.X[n-1] - c.X[0]) / float64(n-1)
	mm := &minutes{col: make([]int, LMM2025Minutes), first: make([]int, n+1), c: c}
	for j := range mm.first {
		mm.first[j] = LMM2025Minutes
	}
	for m := LMM2025Minutes - 1; m >= 0; m-- {
		j := min(max(int(math.Round((float64(m)+0.5-c.X[0])/step)), 0), n-1)
		mm.col[m], mm.first[j] = j, m
	}
	for j := n - 1; j >= 0; j-- { // a column no minute's centre falls in is empty
		mm.first[j] = min(mm.first[j], mm.first[j+1])
	}
	return mm
}

// fitRates turns the per-minute curves into expected requests a minute
// for each minute of the week. Of a column's minutes, one (drawn) takes
// the column's Hi and another its Lo (the line reaches both there), and
// the others rates Lo + (Hi - Lo) U^p, U uniform: a burst reaches Hi, and
// the rate stays near Lo otherwise. The exponent p is fitted so that the
// week's expected total is the trace's LMM2025Requests.
func fitRates(series [2]*minutes) (float64, [2][]float64, error) {
	var rates [2][]float64
	fill := func(p float64) float64 {
		s := 0.0
		for k, mm := range series {
			c := mm.c
			rates[k] = make([]float64, LMM2025Minutes)
			for m := range rates[k] {
				j := mm.col[m]
				n := float64(mm.first[j+1] - mm.first[j])
				r := c.Lo[j] + (c.Hi[j]-c.Lo[j])/(p+1)
				if n >= 2 {
					r = (c.Lo[j] + c.Hi[j] + (n-2)*r) / n
				}
				rates[k][m] = r
				s += r
			}
		}
		return s
	}
	lo, hi := 0.0, 100.0
	if !(fill(lo) >= LMM2025Requests && fill(hi) <= LMM2025Requests) {
		return 0, rates, fmt.Errorf("llm: digitised rates: the week's total %.0f..%.0f does not bracket %d", fill(hi), fill(lo), LMM2025Requests)
	}
	for range 60 {
		mid := (lo + hi) / 2
		if fill(mid) > LMM2025Requests {
			lo = mid
		} else {
			hi = mid
		}
	}
	p := (lo + hi) / 2
	fill(p)
	return p, rates, nil
}

// ErrBadLMMSynth is wrapped by the error for an LMMSynth that cannot
// generate.
var ErrBadLMMSynth = errors.New("llm: bad multimodal synth config")

// LMMSynth generates a multimodal request trace fitted to the Azure LMM
// inference trace 2025's published figures (the curves of LMM2025Curves).
// Each minute of the week has an image and a text-only series; a minute's
// rate is drawn within its figure column's range (one minute of the column
// at Hi, one at Lo, the others Lo + (Hi-Lo) U^p with p fitted so that the
// week holds LMM2025Requests), scaled to Requests, and its requests are a
// Poisson count at uniform times in the minute. An
// image request draws its images, context and generated tokens from the
// image curves, a text request its tokens from the text curves, each by
// inverse transform of the digitised CDF (see LMM2025Fit); the draws are
// independent, as the figures give no joint law.
type LMMSynth struct {
	// Requests is the expected number of requests over the whole week,
	// LMM2025Requests when 0, at most 2^27; the rates scale with it (a
	// window holds its share).
	Requests int
	// Start is the first minute (since 2024-10-15 12:00 UTC) of the
	// window generated, and Minutes its length, to the week's end when 0.
	Start, Minutes int
}

// window returns the window's first minute and its end.
func (s LMMSynth) window() (int, int, error) {
	end := LMM2025Minutes
	if s.Minutes > 0 {
		end = s.Start + s.Minutes
	}
	if s.Requests < 0 || s.Requests > 1<<27 || s.Start < 0 || s.Minutes < 0 || end > LMM2025Minutes || s.Start >= end {
		return 0, 0, fmt.Errorf("%w: requests %d, minutes %d + %d: want requests 0..%d within a week of %d minutes", ErrBadLMMSynth, s.Requests, s.Start, s.Minutes, 1<<27, LMM2025Minutes)
	}
	return s.Start, end, nil
}

// Generate returns the window's requests, drawn from src: the same src
// state gives the same requests, bit for bit. Arrivals are seconds since
// the window's start; requests are sorted by arrival, numbered and valid.
// An image request has Images >= 1, a text request 0.
func (s LMMSynth) Generate(src rand.Source) ([]Request, error) {
	if err := load(); err != nil {
		return nil, err
	}
	start, end, err := s.window()
	if err != nil {
		return nil, err
	}
	scale := 1.0
	if s.Requests > 0 {
		scale = float64(s.Requests) / LMM2025Requests
	}
	rng := rand.New(src)
	pois := distuv.Poisson{Src: src}
	d := lmm.dists
	reqs := make([]Request, 0, int(1.01*s.expected(start, end)*scale)+64)
	var col, hiAt, loAt [2]int // the series' current column and its minutes at Hi and Lo
	col[0], col[1] = -1, -1
	for m := start; m < end; m++ {
		first := len(reqs)
		for k, mm := range lmm.minutes {
			c, j := mm.c, mm.col[m]
			if j != col[k] {
				col[k] = j
				a, b := mm.first[j], mm.first[j+1]
				hiAt[k], loAt[k] = a+rng.IntN(b-a), -1
				if b-a >= 2 {
					loAt[k] = a + rng.IntN(b-a-1)
					if loAt[k] >= hiAt[k] {
						loAt[k]++
					}
				}
			}
			rate := c.Lo[j] + (c.Hi[j]-c.Lo[j])*math.Pow(rng.Float64(), lmm.burst)
			switch m {
			case hiAt[k]:
				rate = c.Hi[j]
			case loAt[k]:
				rate = c.Lo[j]
			}
			pois.Lambda = scale * rate
			n := 0
			if pois.Lambda > 0 {
				n = int(pois.Rand())
			}
			for range n {
				r := Request{Arrival: 60 * (float64(m-start) + rng.Float64())}
				if k == 0 {
					r.Images = d[CurveImages].draw(rng.Float64())
					r.Prompt = d[CurveInputImage].draw(rng.Float64())
					r.Output = d[CurveOutputImage].draw(rng.Float64())
				} else {
					r.Prompt = d[CurveInputText].draw(rng.Float64())
					r.Output = d[CurveOutputText].draw(rng.Float64())
				}
				reqs = append(reqs, r)
			}
		}
		minute := reqs[first:]
		slices.SortStableFunc(minute, func(a, b Request) int { return cmpFloat(a.Arrival, b.Arrival) })
	}
	if len(reqs) == 0 {
		return nil, ErrEmpty
	}
	for i := range reqs {
		reqs[i].ID = i
		if err := reqs[i].Validate(); err != nil {
			return nil, err
		}
	}
	return reqs, nil
}

// cmpFloat orders two finite floats.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// expected is the fitted requests of minutes [start, end) at the trace's
// rate, both series.
func (s LMMSynth) expected(start, end int) float64 {
	t := 0.0
	for m := start; m < end; m++ {
		t += lmm.rates[0][m] + lmm.rates[1][m]
	}
	return t
}

// LMMFit is how close a generated trace is to one digitised curve.
type LMMFit struct {
	// Curve is the curve's name (a Curve* constant).
	Curve string
	// N is the number of generated values compared.
	N int
	// KS is the Kolmogorov-Smirnov distance: the largest gap between the
	// generated sample's CDF and the digitised one.
	KS float64
}

// Fit returns the KS distance of reqs (s's window of LMMSynth's trace,
// or a real trace's) to each digitised curve. For the five CDFs the
// reference is the integer distribution the curve gives (P(N <= k) is the
// curve's height at k + 0.5, linear within a pixel column holding several
// integers) and the distance is taken over every integer. For the two
// per-minute series the sample is the arrival times of image (text)
// requests and the reference the fitted expected rate integrated over the
// window (uniform within a minute): the diurnal and weekly shape.
func (s LMMSynth) Fit(reqs []Request) ([]LMMFit, error) {
	if err := load(); err != nil {
		return nil, err
	}
	start, end, err := s.window()
	if err != nil {
		return nil, err
	}
	var images, inImg, inTxt, outImg, outTxt []int
	var tImg, tTxt []float64
	for _, r := range reqs {
		if r.Images > 0 {
			images, inImg, outImg = append(images, r.Images), append(inImg, r.Prompt), append(outImg, r.Output)
			tImg = append(tImg, r.Arrival)
		} else {
			inTxt, outTxt = append(inTxt, r.Prompt), append(outTxt, r.Output)
			tTxt = append(tTxt, r.Arrival)
		}
	}
	var fits []LMMFit
	for _, c := range []struct {
		name string
		v    []int
	}{{CurveImages, images}, {CurveInputImage, inImg}, {CurveInputText, inTxt}, {CurveOutputImage, outImg}, {CurveOutputText, outTxt}} {
		fits = append(fits, LMMFit{Curve: c.name, N: len(c.v), KS: ksInt(c.v, lmm.dists[c.name].cdf())})
	}
	for k, c := range []struct {
		name string
		t    []float64
	}{{CurveRateImage, tImg}, {CurveRateText, tTxt}} {
		fits = append(fits, LMMFit{Curve: c.name, N: len(c.t), KS: ksTime(c.t, lmm.rates[k][start:end])})
	}
	return fits, nil
}

// ksInt is the KS distance of sample v to the integer CDF ref (ref[k] =
// P(N <= k), 1 past its end), over every integer; 1 for an empty sample.
func ksInt(v []int, ref []float64) float64 {
	if len(v) == 0 {
		return 1
	}
	top := len(ref) - 1
	for _, x := range v {
		top = max(top, x)
	}
	count := make([]int, top+1)
	for _, x := range v {
		if x >= 0 {
			count[x]++
		}
	}
	d, cum := 0.0, 0
	for k := range count {
		cum += count[k]
		f := 1.0
		if k < len(ref) {
			f = ref[k]
		}
		d = max(d, math.Abs(float64(cum)/float64(len(v))-f))
	}
	return d
}

// ksTime is the one-sample KS distance of the arrival times t (seconds
// since the window's start) to the CDF of the per-minute rates (uniform
// within a minute); 1 for an empty sample.
func ksTime(t []float64, rates []float64) float64 {
	if len(t) == 0 {
		return 1
	}
	cum := make([]float64, len(rates)+1)
	for m, r := range rates {
		cum[m+1] = cum[m] + r
	}
	total := cum[len(rates)]
	t = slices.Clone(t)
	slices.Sort(t)
	n := float64(len(t))
	d := 0.0
	for i, x := range t {
		m := min(max(int(x/60), 0), len(rates)-1)
		f := (cum[m] + rates[m]*min(max(x/60-float64(m), 0), 1)) / total
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	return d
}
