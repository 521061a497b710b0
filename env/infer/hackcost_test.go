package infer

import (
	"testing"

	"github.com/drover-sched/drover/env/infer/kv"
)

// TestHACKCosts prices HACK by hand, as TestKVFormat prices INT8: Qwen3-8B
// on one H100 x 8 prefill and one decode instance (the hand curves: a
// 0.1 s prompt iteration, 19.01 ms decode iterations), a 1e9 B/s link,
// one request of 1,000 prompt and 3 output tokens. With the quantized
// prefill (hack-pi64-qp) the prompt's attention, its share of the dense
// prefill's FLOPs (kv.PrefillFLOPs) of the 0.1 s, is scaled by the
// kernel's products over the dense attention's (INT8 operations at
// 1,979 TOPS over FP16's 989 TFLOPS, and the 16-bit products with the
// sinks and the open block), and its elementwise work joins the encoding
// at 8 x 67e12 ops/s. Each decode step adds the kernel's approximation:
// Approx at 8 x 67e12 ops/s and ApproxINT8 at 8 x 1,979e12. The
// operation counts are package kv's (Work); the sums are this test's. The
// artifact's default HACK (quantized prefill off) keeps the dense prompt
// time and only encodes.
func TestHACKCosts(t *testing.T) {
	a := kv.Qwen3_8B
	const ops, int8, fp16, prompt = 8 * 67e12, 8 * 1979e12, 8 * 989e12, 0.1
	for _, f := range []kv.Format{kv.HACKPi(64), func() kv.Format { f := kv.HACKPi(64); f.QuantizedPrefill = true; return f }()} {
		c := handConfig(t, Prefill, Decode)
		c.Model = ModelOf(a)
		c.Model.Name, c.Model.WeightBytes = "m", 1<<30
		c.Link = LinkConfig{BytesPerSec: 1e9}
		s, err := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(fixed{Prefill: 0, Decode: 1, Format: f}); err != nil {
			t.Fatal(err)
		}
		w := f.Work(a, 1000)
		encode := (w.Encode + w.PrefillVector) / ops
		var attn float64
		if f.QuantizedPrefill {
			if w.PrefillAttn <= 0 || w.PrefillINT8 <= 0 {
				t.Fatalf("%s prices no quantized prefill: %+v", f, w)
			}
			share := w.PrefillAttn / kv.PrefillFLOPs(a, 1000)
			attn = prompt * share * ((w.PrefillINT8/int8+w.PrefillFP16/fp16)/(w.PrefillAttn/fp16) - 1)
		}
		step := func(ctx int) float64 {
			w := f.Work(a, ctx)
			return w.Approx/ops + w.ApproxINT8/int8
		}
		xfer := float64(f.TransferBytes(a, 1000)) / 1e9
		r := s.Results()[0]
		wantTTFT := prompt + attn + encode
		wantE2E := wantTTFT + xfer + 2*0.01901 + step(1001) + step(1002)
		if !near(r.TTFT(), wantTTFT) || !near(r.E2E(), wantE2E) {
			t.Errorf("%s: TTFT %v E2E %v; want %v %v", f, r.TTFT(), r.E2E(), wantTTFT, wantE2E)
		}
		if want := encode + step(1001) + step(1002); !near(r.FormatTime, want) {
			t.Errorf("%s: FormatTime %v, want %v", f, r.FormatTime, want)
		}
		if step(1001) <= 0 || (f.QuantizedPrefill && attn == 0) {
			t.Errorf("%s costs nothing: step %v, attention change %v", f, step(1001), attn)
		}
	}
}
