package kv

import (
	"errors"
	"testing"
)

// TestKVBytesPerToken works the 16-bit KV size out by hand:
// 2 (K and V) x layers x KV heads x head dim x 2 bytes.
func TestKVBytesPerToken(t *testing.T) {
	tests := []struct {
		name string
		arch Arch
		want int64
	}{
		{"llama2-70b GQA", Llama2_70B, 2 * 80 * 8 * 128 * 2},  // 327,680
		{"bloom-176b MHA", BLOOM176B, 2 * 70 * 112 * 128 * 2}, // 4,014,080
		{"qwen3-8b", Qwen3_8B, 2 * 36 * 8 * 128 * 2},          // 147,456
		{"llama3.1-8b", Llama31_8B, 2 * 32 * 8 * 128 * 2},     // 131,072
		{"llama3.1-70b", Llama31_70B, 2 * 80 * 8 * 128 * 2},   // 327,680
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.arch.KVBytesPerToken(); got != tt.want {
				t.Errorf("KVBytesPerToken = %d, want %d", got, tt.want)
			}
		})
	}
	if got := Llama2_70B.KVBytesPerToken(); got != 327_680 {
		t.Errorf("llama2-70b = %d, want 327,680", got)
	}
	if got := BLOOM176B.KVBytesPerToken(); got != 4_014_080 {
		t.Errorf("bloom-176b = %d, want 4,014,080", got)
	}
}

// paramsFromConfig counts the weights of a catalogued model from its
// config, independently of the Params constants: Llama/Qwen3 blocks (Q, K,
// V, O projections without bias, gated MLP, two RMSNorms, Qwen3's Q and K
// norms), BLOOM blocks (fused QKV and dense with biases, 4h GELU MLP with
// biases, two LayerNorms with bias), untied embeddings except BLOOM's.
func paramsFromConfig(a Arch) int64 {
	h, kv, d, in, v := int64(a.Hidden), int64(a.KVHeads), int64(a.HeadDim), int64(a.Intermediate), int64(a.Vocab)
	q := int64(a.Heads) * d
	if a.Name == "falcon-180b" {
		// Fused QKV (query heads + 2 KV heads), dense, 4h GELU MLP, no linear
		// biases; two LayerNorms (attention and MLP) per block and a final
		// one, with bias; tied embeddings.
		layer := h*(q+2*kv*d) + q*h + 2*h*in + 4*h
		return int64(a.Layers)*layer + v*h + 2*h
	}
	if a.Name == "bloom-176b" {
		layer := h*3*h + 3*h + h*h + h + h*in + in + in*h + h + 4*h
		return int64(a.Layers)*layer + v*h + 2*h + 2*h
	}
	layer := h*q + 2*h*kv*d + q*h + 3*h*in + 2*h
	if a.Name == "qwen3-8b" {
		layer += 2 * d // q_norm, k_norm
	}
	return int64(a.Layers)*layer + 2*v*h + h
}

func TestParamsFromConfig(t *testing.T) {
	for _, a := range Archs() {
		if got := paramsFromConfig(a); got != a.Params {
			t.Errorf("%s: params from config %d, catalogue %d", a.Name, got, a.Params)
		}
	}
	// BLOOM's model card states 176,247,271,424 parameters.
	if BLOOM176B.Params != 176_247_271_424 {
		t.Errorf("bloom params %d", BLOOM176B.Params)
	}
}

func TestLookupAndValidate(t *testing.T) {
	for _, name := range []string{"qwen3-8b", "llama2-70b", "bloom-176b", "llama3.1-8b", "llama3.1-70b", "falcon-180b"} {
		a, ok := Lookup(name)
		if !ok || a.Name != name || a.Source == "" {
			t.Errorf("Lookup(%q) = %+v, %v", name, a, ok)
		}
	}
	if _, ok := Lookup("gpt-5"); ok {
		t.Error("Lookup of an unknown model succeeded")
	}
	if n := len(Archs()); n != 6 {
		t.Errorf("%d archs", n)
	}
	bad := []Arch{
		{Name: "zero"},
		{Name: "gqa", Layers: 1, Heads: 6, KVHeads: 4, HeadDim: 64, DTypeBytes: 2},
		{Name: "huge", Layers: 1 << 20, Heads: 1, KVHeads: 1, HeadDim: 64, DTypeBytes: 2},
	}
	for _, a := range bad {
		if err := a.Validate(); !errors.Is(err, ErrBadArch) {
			t.Errorf("%s: Validate = %v, want ErrBadArch", a.Name, err)
		}
	}
	if g := Llama2_70B.GQAGroup(); g != 8 {
		t.Errorf("llama2-70b group %d, want 8", g)
	}
}
