package kv

import (
	"errors"
	"fmt"
	"sort"
)

// ErrBadArch is returned for an architecture no KV size can be computed for.
var ErrBadArch = errors.New("kv: bad architecture")

// Arch is a decoder-only transformer's shape: what sizes its KV cache, its
// weights and its attention work. Every catalogued value is copied from a
// public config.json or model config (Source names it).
type Arch struct {
	// Name is the catalogue key, lower case ("qwen3-8b", "llama2-70b").
	Name string
	// Layers is the number of transformer blocks (num_hidden_layers, n_layer).
	Layers int
	// Heads is the number of query heads (num_attention_heads, n_head).
	Heads int
	// KVHeads is the number of key/value heads (num_key_value_heads):
	// fewer than Heads under grouped-query attention, equal to Heads for
	// multi-head attention.
	KVHeads int
	// HeadDim is the dimension of one head (head_dim, else hidden / heads).
	HeadDim int
	// Hidden is the model dimension (hidden_size).
	Hidden int
	// Intermediate is the MLP's inner dimension (intermediate_size; 4 x
	// Hidden for BLOOM's GELU MLP).
	Intermediate int
	// Vocab is the vocabulary size (vocab_size).
	Vocab int
	// Params is the number of weights, worked out from the fields above
	// (TestParamsFromConfig recomputes it).
	Params int64
	// DTypeBytes is the size of one weight and one 16-bit KV element in the
	// model's serving dtype: 2 for FP16 and BF16.
	DTypeBytes int
	// Source says where the numbers were read.
	Source string
}

// Validate checks that a's fields are positive and consistent: KV heads
// divide the query heads.
func (a Arch) Validate() error {
	switch {
	case a.Layers <= 0 || a.Heads <= 0 || a.KVHeads <= 0 || a.HeadDim <= 0 || a.DTypeBytes <= 0:
		return fmt.Errorf("%w: %q: layers %d, heads %d, kv heads %d, head dim %d, dtype bytes %d, want all > 0",
			ErrBadArch, a.Name, a.Layers, a.Heads, a.KVHeads, a.HeadDim, a.DTypeBytes)
	case a.Heads%a.KVHeads != 0:
		return fmt.Errorf("%w: %q: %d query heads not a multiple of %d kv heads", ErrBadArch, a.Name, a.Heads, a.KVHeads)
	case a.Layers > 1<<12 || a.KVHeads > 1<<12 || a.HeadDim > 1<<14 || a.DTypeBytes > 8:
		return fmt.Errorf("%w: %q: implausibly large shape", ErrBadArch, a.Name)
	}
	return nil
}

// KVBytesPerToken is the 16-bit KV cache of one token in bytes:
// 2 (K and V) x layers x KV heads x head dim x dtype bytes.
func (a Arch) KVBytesPerToken() int64 {
	return 2 * int64(a.Layers) * int64(a.KVHeads) * int64(a.HeadDim) * int64(a.DTypeBytes)
}

// KVElementsPerToken is the number of K and V elements one token adds to
// the cache: 2 x layers x KV heads x head dim.
func (a Arch) KVElementsPerToken() int64 {
	return 2 * int64(a.Layers) * int64(a.KVHeads) * int64(a.HeadDim)
}

// WeightBytes is the size of the weights in the serving dtype.
func (a Arch) WeightBytes() int64 { return a.Params * int64(a.DTypeBytes) }

// GQAGroup is the number of query heads that share one KV head.
func (a Arch) GQAGroup() int { return a.Heads / a.KVHeads }

// The catalogued architectures. Params are worked out from the config
// (embeddings, attention, MLP, norms; untied input and output embeddings
// unless the config ties them) and agree with the published totals: Qwen3-8B
// 8.2B (model card), Llama-3.1-8B 8.03B, Llama-2-70B 68.98B, Llama-3.1-70B
// 70.55B, BLOOM 176,247,271,424 (model card).
var (
	// Qwen3_8B is Qwen/Qwen3-8B, the model of the HKVQ artifact's
	// experiments. Source: Qwen/Qwen3-8B config.json, as copied verbatim in
	// huggingface.co/thejaminator/qwen-hook-layer-9 commit 478fb720f1f3
	// ("Copy config.json from Qwen/Qwen3-8B"): num_hidden_layers 36,
	// num_attention_heads 32, num_key_value_heads 8, head_dim 128,
	// hidden_size 4096, intermediate_size 12288, vocab_size 151936,
	// tie_word_embeddings false, torch_dtype bfloat16. Agrees with the
	// artifact's BF16 size (github Zeyu-ZEYU/HKVQ@fc16e215:README.md E2:
	// 576 MiB at 4,096 tokens) and its formula (benchmarks/kv_size/kv_size.py
	// bf16_nbytes).
	Qwen3_8B = Arch{Name: "qwen3-8b", Layers: 36, Heads: 32, KVHeads: 8, HeadDim: 128, Hidden: 4096,
		Intermediate: 12288, Vocab: 151936, Params: 8_190_735_360, DTypeBytes: 2,
		Source: "Qwen/Qwen3-8B config.json (copy: huggingface.co/thejaminator/qwen-hook-layer-9@478fb720f1f3)"}

	// Llama2_70B is meta-llama/Llama-2-70b-hf (grouped-query attention, 8
	// KV heads), the model of the Splitwise calibration data. Source:
	// huggingface.co/TheBloke/Llama-2-70B-fp16 config.json @e9a40d7
	// (_name_or_path meta-llama/Llama-2-70b-hf): num_hidden_layers 80,
	// num_attention_heads 64, num_key_value_heads 8, hidden_size 8192,
	// intermediate_size 28672, vocab_size 32000. SplitwiseSim's
	// configs/model_repo/architectures/llama2-70b.yaml
	// (Mutinifni/splitwise-sim@378088013a54) has 80 layers and hidden 8192
	// too (its num_heads: 32 is not the model's).
	Llama2_70B = Arch{Name: "llama2-70b", Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128, Hidden: 8192,
		Intermediate: 28672, Vocab: 32000, Params: 68_976_648_192, DTypeBytes: 2,
		Source: "meta-llama/Llama-2-70b-hf config.json (copy: huggingface.co/TheBloke/Llama-2-70B-fp16@e9a40d7)"}

	// BLOOM176B is bigscience/bloom (multi-head attention: 112 KV heads).
	// Source: Mutinifni/splitwise-sim@378088013a54
	// configs/model_repo/architectures/bloom-176b.yaml: num_layers 70,
	// hidden_size 14336, num_heads 112 (head dim 14336/112 = 128); vocab
	// 250880 and the tied embeddings and 4 x hidden GELU MLP of BLOOM's
	// config (bigscience/bloom config.json: n_layer 70, n_head 112,
	// hidden_size 14336).
	BLOOM176B = Arch{Name: "bloom-176b", Layers: 70, Heads: 112, KVHeads: 112, HeadDim: 128, Hidden: 14336,
		Intermediate: 4 * 14336, Vocab: 250880, Params: 176_247_271_424, DTypeBytes: 2,
		Source: "Mutinifni/splitwise-sim@378088013a54:configs/model_repo/architectures/bloom-176b.yaml; bigscience/bloom config.json"}

	// Llama31_8B is meta-llama/Llama-3.1-8B. Source:
	// huggingface.co/NbAiLab/nb-llama-3.1-8B config.json @fe1be85
	// (_name_or_path meta-llama/Llama-3.1-8B): 32 layers, 32 heads, 8 KV
	// heads, head_dim 128, hidden 4096, intermediate 14336, vocab 128256.
	Llama31_8B = Arch{Name: "llama3.1-8b", Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, Hidden: 4096,
		Intermediate: 14336, Vocab: 128256, Params: 8_030_261_248, DTypeBytes: 2,
		Source: "meta-llama/Llama-3.1-8B config.json (copy: huggingface.co/NbAiLab/nb-llama-3.1-8B@fe1be85)"}

	// Llama31_70B is meta-llama/Llama-3.1-70B, the head configuration of the
	// HKVQ artifact's attention microbenchmark (64 query heads, 8 KV heads,
	// head dim 128: Zeyu-ZEYU/HKVQ@fc16e215:benchmarks/microbench/README.md).
	// Source: huggingface.co/mattshumer/Reflection-70B-Draft config.json
	// @7ec2b2e (_name_or_path meta-llama/Meta-Llama-3.1-70B-Instruct): 80
	// layers, 64 heads, 8 KV heads, hidden 8192, intermediate 28672, vocab
	// 128256.
	Llama31_70B = Arch{Name: "llama3.1-70b", Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128, Hidden: 8192,
		Intermediate: 28672, Vocab: 128256, Params: 70_553_706_496, DTypeBytes: 2,
		Source: "meta-llama/Meta-Llama-3.1-70B-Instruct config.json (copy: huggingface.co/mattshumer/Reflection-70B-Draft@7ec2b2e)"}

	// Falcon180B is tiiuae/falcon-180B, the largest model class the HACK
	// paper evaluates ("models with up to 180B parameters",
	// Zeyu-ZEYU/HKVQ@fc16e215:README.md:135; the artifact's first version
	// carried a Falcon model plugin, hkvq/exp/vllm_models_for_plugin_falcon.py
	// @9c85c518). Source: tiiuae/falcon-180B config.json as copied in
	// huggingface.co/spaces/gojiteji/LLM-Comparer commit 18c3fb5: 80 layers,
	// 232 heads, num_kv_heads 8, hidden 14848 (head dim 64), vocab 65024,
	// new_decoder_architecture (parallel attention and MLP, a 4 x hidden GELU
	// MLP, no linear biases, tied embeddings). Its parameters worked out
	// from the config are 178.6B (the model card's round figure is 180B).
	Falcon180B = Arch{Name: "falcon-180b", Layers: 80, Heads: 232, KVHeads: 8, HeadDim: 64, Hidden: 14848,
		Intermediate: 4 * 14848, Vocab: 65024, Params: 178_557_088_768, DTypeBytes: 2,
		Source: "tiiuae/falcon-180B config.json (copy: huggingface.co/spaces/gojiteji/LLM-Comparer@18c3fb5)"}
)

var catalogue = map[string]Arch{}

func init() {
	for _, a := range []Arch{Qwen3_8B, Llama2_70B, BLOOM176B, Llama31_8B, Llama31_70B, Falcon180B} {
		if err := a.Validate(); err != nil {
			panic(err)
		}
		catalogue[a.Name] = a
	}
}

// Lookup returns the catalogued architecture called name.
func Lookup(name string) (Arch, bool) {
	a, ok := catalogue[name]
	return a, ok
}

// Archs returns the catalogued architectures sorted by name.
func Archs() []Arch {
	out := make([]Arch, 0, len(catalogue))
	for _, a := range catalogue {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
