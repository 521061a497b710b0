package kv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWork works the per-format work out by hand for Qwen3-8B (36 layers,
// 32 query heads, 8 KV heads, head dim 128: 73,728 K and V elements per
// token) at 4,096 tokens.
func TestWork(t *testing.T) {
	const n = 4096
	elems := 73_728.0 * n
	// HACK, Pi = 64: 4 sinks, 4,032 closed tokens in 63 blocks, 60 open;
	// channel partition 64, so 2 groups. Per query head and layer
	// 16 x 63 x 128 + 16 x 4032 x 2 = 258,048, over 32 heads and 36 layers.
	hack := Work{
		Encode:    7 * 2 * 4032 * 128 * 8 * 36,
		Approx:    258_048 * 32 * 36,
		StepBytes: HACKPi(64).StoredBytes(Qwen3_8B, n),
	}
	noSE := HACKPi(64)
	noSE.SummationElimination = false
	noRE := HACKPi(64)
	noRE.RequantElimination = false
	tests := []struct {
		f    Format
		want Work
	}{
		{FP16(), Work{StepBytes: 576 * mib}},
		{Int8(), Work{Encode: 5 * elems, Dequant: 2 * elems, StepBytes: Int8().StoredBytes(Qwen3_8B, n), DequantBytes: 2 * 576 * mib}},
		{HACKPi(64), hack},
		// Without summation elimination both products sum 4,032 x 128
		// codes per query head and layer.
		{noSE, Work{Encode: hack.Encode, Approx: hack.Approx + 2*4032*128*32*36, StepBytes: hack.StepBytes}},
		// Without requantization elimination the 60 open tokens' K and V are
		// dequantized (4) and quantized (5) again per KV head and layer.
		{noRE, Work{Encode: hack.Encode, Approx: hack.Approx + 9*2*60*128*8*36, StepBytes: hack.StepBytes}},
		{CacheGenCodec(), Work{Encode: 15 * elems, Receive: 8 * elems, Dequant: 4.5 * elems,
			StepBytes: CacheGenCodec().StoredBytes(Qwen3_8B, n), DequantBytes: 2 * 576 * mib}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.f.Work(Qwen3_8B, n)); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", tt.f, diff)
		}
	}
	// KVQuant: 4,095 quantized tokens; 1% of K's 4095 x 1024 elements and
	// 2 x 5 of V's per token are outliers, per layer.
	kq := KVQuant2().Work(Qwen3_8B, n)
	outliers := (41_933 + 4095*10) * 36.0
	if want := 4*73_728.0*4095 + 2*outliers; kq.Dequant != want {
		t.Errorf("kvquant dequant %g, want %g", kq.Dequant, want)
	}
}

// TestWorkGrowsWithContext: every format's per-step work and bytes grow
// with the cache; HACK's approximation stays below the 2-bit baselines'
// dequantization for Pi >= 64 on every catalogued model with at most 8
// query heads per KV head (the paper's case: HACK replaces the
// dequantization by a smaller correction). Its correction terms are per
// query head, the dequantization per KV head: with Falcon-180B's 29 query
// heads per KV head the operation counts turn over, and what remains of
// the baselines' disadvantage is the traffic of their 16-bit copy
// (DequantBytes, 5 to 6 times HACK's StepBytes).
func TestWorkGrowsWithContext(t *testing.T) {
	for _, a := range Archs() {
		for _, f := range Formats() {
			prev := f.Work(a, 1000)
			for _, n := range []int{2000, 8000, 32000} {
				w := f.Work(a, n)
				if w.StepBytes <= prev.StepBytes || w.Dequant < prev.Dequant || w.Approx < prev.Approx || w.Encode < prev.Encode {
					t.Errorf("%s %s: work at %d tokens %+v not above %+v", a.Name, f, n, w, prev)
				}
				prev = w
			}
		}
		if a.GQAGroup() > 8 {
			h := HACKPi(64).Work(a, 16000)
			if b := KVQuant2().Work(a, 16000); b.DequantBytes < 5*h.StepBytes {
				t.Errorf("%s: kvquant dequant traffic %d < 5 x hack's %d", a.Name, b.DequantBytes, h.StepBytes)
			}
			continue
		}
		for _, pi := range []int{64, 128} {
			h := HACKPi(pi).Work(a, 16000)
			for _, base := range []Format{KVQuant2(), CacheGenCodec()} {
				if b := base.Work(a, 16000); h.Approx >= b.Dequant {
					t.Errorf("%s: hack-pi%d approx %g >= %s dequant %g", a.Name, pi, h.Approx, base, b.Dequant)
				}
			}
		}
	}
}
