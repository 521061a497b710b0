package mm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Tiling is how a model cuts an image into the tiles its vision encoder
// runs over, from its public preprocessing code.
type Tiling uint8

// The tilings.
const (
	// FixedTiling gives every image the tiles of one 896x896 image
	// (Model.ImageTokens tokens, Model.EncoderTokens patch tokens), as
	// ModServe's Table 1 counts them: the model has no per-size rule here.
	FixedTiling Tiling = iota
	// CanvasTiling is Llama-3.2-Vision's (Hugging Face
	// MllamaImageProcessor, get_optimal_tiled_canvas): of the canvases of
	// a x b tiles of TileSide pixels with a x b <= MaxTiles, the one
	// that needs the least upscaling of the image to fit, or if every
	// canvas needs downscaling the least of it; ties to the smallest
	// canvas. An image up to 560x560 is one tile; one side past 560
	// makes two or more.
	CanvasTiling
	// DynamicTiling is InternVL-2.5's (its model card's dynamic_preprocess,
	// min_num 1, max_num 12, use_thumbnail): the grid of i x j tiles of
	// TileSide pixels (1 <= i x j <= MaxTiles) whose aspect ratio is the
	// closest to the image's, a tie going to the larger grid when the
	// image's area exceeds half the grid's; a grid of more than one tile
	// gets a thumbnail tile as well.
	DynamicTiling
)

// Tiles is the tiles (a thumbnail included) model m's encoder runs over
// for a w x h image; for FixedTiling, those of an 896x896 image.
func (m *Model) Tiles(w, h int) int {
	switch m.Tiling {
	case CanvasTiling:
		return canvasTiles(w, h, m.TileSide, m.MaxTiles)
	case DynamicTiling:
		return dynamicTiles(w, h, m.TileSide, m.MaxTiles)
	}
	return m.refTiles()
}

// refTiles is the tiles of an 896x896 image (Table 1).
func (m *Model) refTiles() int {
	if m.Tiling == FixedTiling || m.TileTokens < 1 {
		return 0
	}
	return m.ImageTokens / m.TileTokens
}

// canvasTiles is Llama-3.2-Vision's get_optimal_tiled_canvas.
func canvasTiles(w, h, tile, maxTiles int) int {
	scale := func(a, b int) float64 {
		return min(float64(a*tile)/float64(w), float64(b*tile)/float64(h))
	}
	// The least upscaling if some canvas needs none down, else the least
	// downscaling.
	up, down := math.Inf(1), 0.0
	for a := 1; a <= maxTiles; a++ {
		for b := 1; a*b <= maxTiles; b++ {
			if s := scale(a, b); s >= 1 {
				up = min(up, s)
			} else {
				down = max(down, s)
			}
		}
	}
	want := up
	if math.IsInf(up, 1) {
		want = down
	}
	best := maxTiles + 1
	for a := 1; a <= maxTiles; a++ {
		for b := 1; a*b <= maxTiles; b++ {
			if scale(a, b) == want {
				best = min(best, a*b)
			}
		}
	}
	return best
}

// dynamicTiles is InternVL's dynamic_preprocess: the grids in order of
// their tile count (then by i, then j), the closest aspect ratio first.
func dynamicTiles(w, h, tile, maxTiles int) int {
	aspect := float64(w) / float64(h)
	area := float64(w) * float64(h)
	bestDiff, best := math.Inf(1), 1
	for n := 1; n <= maxTiles; n++ {
		for i := 1; i <= n; i++ {
			if n%i != 0 {
				continue
			}
			j := n / i
			d := math.Abs(aspect - float64(i)/float64(j))
			if d < bestDiff {
				bestDiff, best = d, n
			} else if d == bestDiff && area > 0.5*float64(tile)*float64(tile)*float64(n) {
				best = n
			}
		}
	}
	if best > 1 {
		best++ // the thumbnail
	}
	return best
}

// The image-size distribution the simulator draws from (Config.Images).
// ModServe (its section 3.2) reports that the production trace's images
// and ShareGPT-4o's (the images of its evaluation) have a median width
// and height of about 500 pixels and a P95 above 1,000; the Azure trace
// has no sizes. Assumption: width and height are log-normal, each with
// median ImageMedianSide and P95 ImageP95Side (1,100: "exceeding 1000"
// read as a tenth past it), made of a shared log-scale and a log aspect
// ratio (width/height) of standard deviation ImageAspectSigma (0.4: 95%
// of aspect ratios within 1:2.2 and 2.2:1, photos and screenshots alike),
// so that width and height are correlated as an image's sides are.
const (
	ImageMedianSide  = 500
	ImageP95Side     = 1100
	ImageAspectSigma = 0.4
	// ImageMinSide and ImageMaxSide bound a drawn side (pixels).
	ImageMinSide, ImageMaxSide = 16, 8192
)

// imageLogSigma is the standard deviation of log width (and log height):
// ln(P95/median) / 1.6449, the normal's 95th percentile.
var imageLogSigma = math.Log(float64(ImageP95Side)/ImageMedianSide) / 1.6448536269514722

// imageScaleSigma is the shared log-scale's deviation:
// sigma^2 = scale^2 + (aspect/2)^2.
var imageScaleSigma = math.Sqrt(imageLogSigma*imageLogSigma - ImageAspectSigma*ImageAspectSigma/4)

// ImageSize is the size (pixels) of image j of request r under seed: a
// draw from the distribution above, a function of seed, j and r's
// arrival, tokens and image count alone (not of its ID), so that it does
// not depend on routing or on the order of the run, and a router served
// one request at a time (serve's RouteMM) sees the sizes the simulation
// of the whole trace does.
func ImageSize(seed uint64, r *Request, j int) (w, h int) {
	x := splitmix(seed ^ math.Float64bits(r.Arrival))
	x = splitmix(x ^ uint64(r.Prompt)<<32 ^ uint64(r.Output))
	x = splitmix(x ^ uint64(r.Images)<<24 ^ uint64(j))
	y := splitmix(x)
	u1 := (float64(x>>11) + 0.5) / (1 << 53)
	u2 := float64(y>>11) / (1 << 53)
	rad := math.Sqrt(-2 * math.Log(u1))
	z1, z2 := rad*math.Cos(2*math.Pi*u2), rad*math.Sin(2*math.Pi*u2)
	ls := math.Log(ImageMedianSide) + imageScaleSigma*z1
	la := ImageAspectSigma * z2 / 2
	side := func(l float64) int {
		return int(min(max(math.Round(math.Exp(l)), ImageMinSide), ImageMaxSide))
	}
	return side(ls + la), side(ls - la)
}

// splitmix is SplitMix64's finaliser: a bijective mix of 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// GPT4oImageTokens is the tokens a w x h image costs in a prompt of the
// production model, read as GPT-4o's published rule for high detail
// (OpenAI's vision pricing guide): the image scaled down to fit 2048x2048,
// then its shorter side down to 768, then 85 + 170 tokens a 512x512 tile
// (a 500x500 image: 255; 896x896: 765). Assumption: the Azure trace's
// cluster serves a GPT-4o-like model (the trace does not name it); this
// is how Config.PromptHasImageTokens takes a request's images out of its
// ContextTokens.
func GPT4oImageTokens(w, h int) int {
	fw, fh := float64(w), float64(h)
	if s := 2048 / max(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	if s := 768 / min(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	return 85 + 170*int(math.Ceil(fw/512-1e-9))*int(math.Ceil(fh/512-1e-9))
}

// shapeTables fills the simulation's image shapes: their tokens and each
// pool's encode seconds, scaled from Costs.EncodePerImage (an 896x896
// image) by the encoder's FLOPs (so measured costs scale too).
func (s *Sim) shapeTables() {
	m := &s.cfg.Model
	s.fixedImg = s.cfg.Images.Fixed || m.Tiling == FixedTiling
	if s.fixedImg {
		s.shTok = []int32{int32(m.ImageTokens)}
		for p := range numPools {
			s.shEnc[p] = []float64{s.costs[p].EncodePerImage}
		}
		return
	}
	k := m.MaxTiles + 1 // a thumbnail too
	s.shTok = make([]int32, k+1)
	s.shTok[0] = int32(m.ImageTokens)
	for i := 1; i <= k; i++ {
		s.shTok[i] = int32(m.ImageTokensTiles(i))
	}
	ref := m.EncoderFLOPs()
	for p := range numPools {
		e := make([]float64, k+1)
		e[0] = s.costs[p].EncodePerImage
		for i := 1; i <= k; i++ {
			e[i] = s.costs[p].EncodePerImage * (m.EncoderFLOPsTiles(i) / ref)
		}
		s.shEnc[p] = e
	}
}

// drawImages appends the shapes of r's simulated images (at most
// Sim.maxImgs; the context cut comes later) to s.shapes and returns r's
// text prompt: r.Prompt, less its images' production-model tokens when
// Config.PromptHasImageTokens (at least one token left).
func (s *Sim) drawImages(r *Request) int {
	m := &s.cfg.Model
	n := min(r.Images, s.maxImgs)
	fixedSize := s.cfg.Images.Fixed
	sub := 0
	size := func(j int) (int, int) {
		if fixedSize {
			return 896, 896
		}
		return ImageSize(s.cfg.Images.Seed, r, j)
	}
	for j := range n {
		w, h := size(j)
		k := 0
		if !s.fixedImg {
			k = m.Tiles(w, h)
		}
		s.shapes = append(s.shapes, uint8(k))
		if s.cfg.PromptHasImageTokens && sub < r.Prompt-1 {
			sub += GPT4oImageTokens(w, h)
		}
	}
	if !s.cfg.PromptHasImageTokens {
		return r.Prompt
	}
	for j := n; j < r.Images && sub < r.Prompt-1; j++ {
		sub += GPT4oImageTokens(size(j))
	}
	text := max(1, r.Prompt-sub)
	s.fromPrm += int64(r.Prompt - text)
	return text
}

// imagesSource says where the simulation's image sizes come from.
func (s *Sim) imagesSource() string {
	m := &s.cfg.Model
	switch {
	case s.cfg.Images.Fixed:
		return "Images: assumption: every image 896x896 (ModServe's Table 1 example)"
	case m.Tiling == FixedTiling:
		return fmt.Sprintf("Images: assumption: sizes drawn (log-normal, median %d px, P95 %d px a side), but %s's tokens are those of an 896x896 image", ImageMedianSide, ImageP95Side, m.Name)
	}
	return fmt.Sprintf("Images: assumption: sizes drawn per image (log-normal width and height, median %d px, P95 %d px, aspect sigma %.1f; ModServe 3.2: median ~500 px, P95 > 1000 px), tiled by %s's rule", ImageMedianSide, ImageP95Side, ImageAspectSigma, m.Name)
}

// MedianImageEncode is the median, over the simulation's images, of the
// time one image takes to encode alone on an instance of pool p
// (Costs.Encode(1) when every image is 896x896): the "median image
// encoding latency" of ModServe's initial pool sizes.
func (s *Sim) MedianImageEncode(p Pool) float64 {
	c := &s.costs[p]
	if s.fixedImg {
		return c.Encode(1)
	}
	return c.EncodeFixed + s.shEnc[p][s.medianShape(p, s.shapes[:len(s.shapes)-1])]
}

// medianShape is the median of shapes by their encode time on pool p
// (then by their tokens), or the shape of a median-sized image when
// there are none.
func (s *Sim) medianShape(p Pool, shapes []uint8) uint8 {
	if len(shapes) == 0 {
		return uint8(s.cfg.Model.Tiles(ImageMedianSide, ImageMedianSide))
	}
	count := make([]int, len(s.shEnc[p]))
	for _, k := range shapes {
		count[k]++
	}
	order := make([]int, len(count))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.shEnc[p][a], s.shEnc[p][b]) })
	seen := 0
	for _, k := range order {
		seen += count[k]
		if 2*seen > len(shapes) {
			return uint8(k)
		}
	}
	return shapes[0]
}

// Breakdown is the mean latency of each stage of isolated requests' TTFT,
// in seconds (ModServe's Fig. 5 plots them for single requests alone on a
// monolithic instance).
type Breakdown struct {
	// Requests is how many requests the means are over.
	Requests int
	// Preprocess, Encode and Prefill are the stages' mean latencies; TTFT
	// is their sum.
	Preprocess, Encode, Prefill, TTFT float64
}

// EncodeShare is Encode / TTFT.
func (b Breakdown) EncodeShare() float64 { return b.Encode / b.TTFT }

// IsolatedBreakdown is the mean stage latencies of the simulation's
// requests with images, each alone on an idle monolithic instance of
// its configuration (Sim.IsolatedTTFT, stage by stage).
func (s *Sim) IsolatedBreakdown() Breakdown {
	var b Breakdown
	c := &s.ref
	w := s.cfg.PreprocessWorkers * s.cfg.TP[Mono]
	for i := range s.reqs {
		rs := &s.reqs[i]
		n := rs.images()
		if n == 0 {
			continue
		}
		b.Requests++
		b.Preprocess += float64((n+w-1)/w) * c.Preprocess
		b.Encode += s.encodeReq(c, Mono, rs)
		b.Prefill += c.IterFixed + s.prefillWork(c, rs)
	}
	if b.Requests > 0 {
		f := float64(b.Requests)
		b.Preprocess, b.Encode, b.Prefill = b.Preprocess/f, b.Encode/f, b.Prefill/f
	}
	b.TTFT = b.Preprocess + b.Encode + b.Prefill
	return b
}
