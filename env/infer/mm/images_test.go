package mm

import (
	"math"
	"slices"
	"testing"
)

// TestTiles works each model's tiling rule by hand on a few sizes.
func TestTiles(t *testing.T) {
	tests := []struct {
		name string
		m    Model
		w, h int
		want int
	}{
		// Llama: the canvas that needs the least upscaling, else the least
		// downscaling; ties to the smallest.
		{"llama fits one tile", Llama32_11BVision, 500, 500, 1},
		{"llama 600x400: 2x1 upscales 1.4x, 1x1 would shrink it", Llama32_11BVision, 600, 400, 2},
		{"llama 896x896 (Table 1)", Llama32_11BVision, 896, 896, 4},
		{"llama 1000x300: 2x1 and 2x2 both 1.12x, the smaller", Llama32_11BVision, 1000, 300, 2},
		{"llama 2000x2000: all shrink, 2x2 least", Llama32_11BVision, 2000, 2000, 4},
		// InternVL: the closest aspect ratio of i x j <= 12 tiles, ties to
		// the larger grid when the image is over half its area; a
		// thumbnail with more than one tile.
		{"internvl 500x500", InternVL25_26B, 500, 500, 1},
		{"internvl 896x896 (Table 1: 4 + thumbnail)", InternVL25_26B, 896, 896, 5},
		{"internvl 1000x1000: 3x3 (area past half of 9 tiles)", InternVL25_26B, 1000, 1000, 10},
		{"internvl 500x400: aspect 1.25, closest 4:3", InternVL25_26B, 500, 400, 13},
		{"internvl 600x300: 2:1, too small for 4x2", InternVL25_26B, 600, 300, 3},
		{"llava: fixed", LLaVAOneVision7B, 300, 300, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Tiles(tt.w, tt.h); got != tt.want {
				t.Errorf("Tiles(%d, %d) = %d, want %d", tt.w, tt.h, got, tt.want)
			}
		})
	}
	for _, m := range []Model{Llama32_11BVision, InternVL25_26B} {
		if got := m.ImageTokensTiles(m.Tiles(896, 896)); got != m.ImageTokens {
			t.Errorf("%s: an 896x896 image's tokens %d, want Table 1's %d", m.Name, got, m.ImageTokens)
		}
		if a, b := m.EncoderFLOPsTiles(m.Tiles(896, 896)), m.EncoderFLOPs(); math.Abs(a-b) > 1e-9*b {
			t.Errorf("%s: encoder FLOPs of 896x896 %g, want %g", m.Name, a, b)
		}
	}
	if a, b := Llama32_11BVision.EncoderFLOPsTiles(1), Llama32_11BVision.EncoderFLOPs(); a != b {
		t.Errorf("Llama's encoder pads to 4 tiles: one tile %g FLOPs, want %g", a, b)
	}
}

// TestImageSizes: the drawn widths and heights have the stated median
// (500 px) and P95 (1,100 px: ModServe's "above 1000"), and a draw is a
// function of its seed, request and index.
func TestImageSizes(t *testing.T) {
	const n = 200000
	ws, hs := make([]float64, n), make([]float64, n)
	for i := range n {
		r := Request{ID: i, Arrival: float64(i) * 0.37, Prompt: 100 + i%977, Output: 1 + i%13, Images: 1 + i%5}
		w, h := ImageSize(7, &r, i%5)
		ws[i], hs[i] = float64(w), float64(h)
		if w2, h2 := ImageSize(7, &r, i%5); w2 != w || h2 != h {
			t.Fatalf("draw %d not deterministic", i)
		}
	}
	for _, v := range [][]float64{ws, hs} {
		slices.Sort(v)
		med, p95 := v[n/2], v[n*95/100]
		if math.Abs(med/ImageMedianSide-1) > 0.02 || math.Abs(p95/ImageP95Side-1) > 0.03 {
			t.Errorf("median %v px, P95 %v px; want %d and %d", med, p95, ImageMedianSide, ImageP95Side)
		}
	}
	r := Request{Arrival: 1, Prompt: 10, Output: 1, Images: 2}
	a, _ := ImageSize(1, &r, 0)
	b, _ := ImageSize(1, &r, 1)
	c, _ := ImageSize(2, &r, 0)
	if a == b && a == c {
		t.Errorf("image sizes %d, %d, %d: want them to change with the index and the seed", a, b, c)
	}
}

// TestGPT4oImageTokens checks OpenAI's published examples of its rule.
func TestGPT4oImageTokens(t *testing.T) {
	for _, tt := range []struct{ w, h, want int }{
		{500, 500, 255},    // one tile
		{896, 896, 765},    // to 768x768: 2x2 tiles
		{1024, 1024, 765},  // OpenAI's example
		{2048, 4096, 1105}, // OpenAI's example: 1024x2048, then 768x1536: 2x3 tiles
		{4096, 8192, 1105},
	} {
		if got := GPT4oImageTokens(tt.w, tt.h); got != tt.want {
			t.Errorf("GPT4oImageTokens(%d, %d) = %d, want %d", tt.w, tt.h, got, tt.want)
		}
	}
}

// TestImageTokensPerImage: drawn images carry their own tokens through
// the view, the results and the prompt; Fixed896 gives every image
// Model.ImageTokens and reads prompts as text.
func TestImageTokensPerImage(t *testing.T) {
	reqs := []Request{{ID: 0, Prompt: 5000, Output: 2, Images: 3}, {ID: 1, Arrival: 1, Prompt: 100, Output: 2, Images: 2}}
	for _, m := range []Model{Llama32_11BVision, InternVL25_26B} {
		s, err := New(Decoupled(m, 2, 1), reqs)
		if err != nil {
			t.Fatal(err)
		}
		v := s.View()
		var sub int64
		for i := range reqs {
			r := &reqs[i]
			tok, prod := 0, 0
			for j := range r.Images {
				w, h := ImageSize(0, r, j)
				if got, want := v.ImageTokensOf(r, j), m.ImageTokensTiles(m.Tiles(w, h)); got != want {
					t.Errorf("%s request %d image %d (%dx%d): %d tokens, want %d", m.Name, i, j, w, h, got, want)
				}
				tok += m.ImageTokensTiles(m.Tiles(w, h))
				prod += GPT4oImageTokens(w, h)
			}
			res := s.Result(i)
			text := max(1, r.Prompt-prod)
			sub += int64(r.Prompt - text)
			if int(res.ImageTokens) != tok || int(res.Prompt) != text {
				t.Errorf("%s request %d: %d image tokens, %d text; want %d, %d", m.Name, i, res.ImageTokens, res.Prompt, tok, text)
			}
		}
		if got := s.Summary().PromptImageTokens; got != sub {
			t.Errorf("%s: %d prompt tokens read as image tokens, want %d", m.Name, got, sub)
		}
		f, err := New(Decoupled(m, 2, 1).Fixed896(), reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range reqs {
			if res := f.Result(i); int(res.ImageTokens) != reqs[i].Images*m.ImageTokens || int(res.Prompt) != reqs[i].Prompt {
				t.Errorf("%s fixed, request %d: %d image tokens, prompt %d; want %d, %d", m.Name, i, res.ImageTokens, res.Prompt, reqs[i].Images*m.ImageTokens, reqs[i].Prompt)
			}
		}
	}
}

// fig5Text is the text prompt of TestFig5's requests: ShareGPT-4o's
// prompts are short questions about the image (the paper's Fig. 4 plots
// their lengths, not readable); 100 tokens with the chat template is an
// assumption.
const fig5Text = 100

// TestFig5 reproduces the setting of ModServe's Fig. 5 (isolated single
// requests of one ShareGPT-4o image on one monolithic instance at the
// default TP of its Table 1: TP-4 Llama-3.2-11B, TP-8 InternVL-2.5-26B)
// and compares the share of TTFT spent encoding with the paper's 79% and
// 25%. This is a validation of the derived costs, not a fit: nothing is
// tuned to it. Llama's holds within 10 points with drawn and with 896x896
// images; InternVL's misses by far with either (the roofline puts its
// encoder at ~3x its prefill, the paper measured ~1/3), a known miss the
// test keeps: it fails if the miss closes, so that the list is updated.
func TestFig5(t *testing.T) {
	paper := map[string]float64{Llama32_11BVision.Name: 0.79, InternVL25_26B.Name: 0.25}
	misses := map[string]bool{InternVL25_26B.Name + " drawn": true, InternVL25_26B.Name + " fixed": true}
	for _, c := range []struct {
		m  Model
		tp int
	}{{Llama32_11BVision, 4}, {InternVL25_26B, 8}} {
		for _, fixed := range []bool{false, true} {
			reqs := make([]Request, 10000)
			for i := range reqs {
				reqs[i] = Request{ID: i, Arrival: float64(i), Prompt: fig5Text, Output: 1, Images: 1}
			}
			cfg := Monolith(c.m, 1)
			cfg.TP[Mono] = c.tp
			cfg.PromptHasImageTokens = false // ShareGPT-4o's text, not the trace's
			if fixed {
				cfg = cfg.Fixed896()
			}
			s, err := New(cfg, reqs)
			if err != nil {
				t.Fatal(err)
			}
			b := s.IsolatedBreakdown()
			name := c.m.Name + map[bool]string{false: " drawn", true: " fixed"}[fixed]
			share := b.EncodeShare()
			t.Logf("%s, TP-%d: preprocess %.1f ms, encode %.1f ms, prefill %.1f ms; encode %.1f%% of TTFT (paper %.0f%%)", name, c.tp, 1000*b.Preprocess, 1000*b.Encode, 1000*b.Prefill, 100*share, 100*paper[c.m.Name])
			if b.Requests != len(reqs) || math.Abs(b.TTFT-(b.Preprocess+b.Encode+b.Prefill)) > 1e-12 {
				t.Errorf("%s: breakdown %+v", name, b)
			}
			if within := math.Abs(share-paper[c.m.Name]) <= 0.10; within == misses[name] {
				t.Errorf("%s: encode share %.1f%% against the paper's %.0f%%: known miss %v, now within 10 points %v", name, 100*share, 100*paper[c.m.Name], misses[name], within)
			}
		}
	}
}
