package mm

import (
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/infer"
)

// Efficiency is the share of a GPU's datasheet peak the derived costs
// assume a kernel reaches: an assumption, stated in every output, not a
// measurement and not fitted to any result.
type Efficiency struct {
	// Compute is the share of dense FP16 tensor throughput (model FLOPs
	// utilisation) that prefill, the vision encoder and decode's matrix
	// products reach.
	Compute float64
	// Memory is the share of HBM bandwidth that reading weights and KV
	// caches reaches.
	Memory float64
}

// DefaultEfficiency is 50% of peak FLOPs and 80% of peak bandwidth, the
// usual figures of well-tuned LLM serving kernels on A100s (an assumption).
var DefaultEfficiency = Efficiency{Compute: 0.5, Memory: 0.8}

// Costs are the stage latencies of one instance type (a model on TP GPUs
// of one type), in seconds. Costs derives them from the model's shape and
// the GPU's datasheet (a roofline, each term additive); a field may be
// replaced by a measured figure, and Sources says which are which.
type Costs struct {
	// Preprocess is the CPU time to preprocess one image (decode, resize,
	// tile, normalise).
	Preprocess float64
	// EncodeFixed + b x EncodePerImage is a vision-encoder batch of b
	// images: the encoder's weights read once, then each image's FLOPs.
	EncodeFixed, EncodePerImage float64
	// IterFixed is paid by every language-model iteration: its weights
	// read from HBM once.
	IterFixed float64
	// PerToken is each token's matrix products in an iteration (a prompt
	// token of a prefill, or one decode), 2 x TextParams FLOPs.
	PerToken float64
	// PrefillAttn x n^2 is the causal self-attention of an n-token prompt
	// (2 x n^2 x Hidden FLOPs a layer).
	PrefillAttn float64
	// PerImageToken is a CrossAttention model's work per image token in
	// prefill: the cross-attention layers' K and V projections.
	PerImageToken float64
	// CrossAttn x text x image tokens is the cross-attention of a
	// CrossAttention model's prompt over its image tokens.
	CrossAttn float64
	// PerKVByte is the time to read one byte of KV cache (decode reads the
	// whole batch's caches each iteration).
	PerKVByte float64
	// Sources names, per field, where its figure comes from ("derived:
	// ..." or "measured: ...").
	Sources map[string]string
}

// EncoderTPSpeedup4to8 is how much faster a vision encoder runs at TP-8
// than at TP-4: 1.3x, ModServe's measurement for InternViT-6B (its
// section 3, Fig. 9, on NVLM-D-72B, whose encoder InternVL-2.5-26B
// shares). The paper also reports that Llama-3.2-11B's 630M encoder is
// fastest at TP-4 and slower at TP-8; one Amdahl share for both
// encoders is a simplification that favours the monolith there.
const EncoderTPSpeedup4to8 = 1.3

// EncoderSerialShare is the share of a vision encoder's single-GPU time
// that tensor parallelism does not divide (Amdahl's law), solved from
// EncoderTPSpeedup4to8: s + (1-s)/4 = 1.3 (s + (1-s)/8) gives s = 0.2258.
// An encoder batch at TP t takes its TP-1 time x (s + (1-s)/t).
var EncoderSerialShare = (1.0/4 - EncoderTPSpeedup4to8/8) / (EncoderTPSpeedup4to8*(1-1.0/8) - (1 - 1.0/4))

// DeriveCosts computes the costs of model m on tp GPUs of type g at
// efficiency e from the model card and the datasheet; preprocess is the
// CPU time per image (no GPU figure gives it).
func DeriveCosts(m Model, g infer.GPU, tp int, e Efficiency, preprocess float64) Costs {
	flops := float64(tp) * g.FP16FLOPS * e.Compute
	bw := float64(tp) * g.HBMBytesPerSec * e.Memory
	amdahl := EncoderSerialShare + (1-EncoderSerialShare)/float64(tp)
	hidden := float64(m.Hidden)
	kvDim := float64(m.KVHeads * m.HeadDim())
	c := Costs{
		Preprocess:     preprocess,
		EncodeFixed:    m.EncoderWeightBytes / (g.HBMBytesPerSec * e.Memory) * amdahl,
		EncodePerImage: m.EncoderFLOPs() / (g.FP16FLOPS * e.Compute) * amdahl,
		IterFixed:      (m.WeightBytes - m.EncoderWeightBytes) / bw,
		PerToken:       2 * m.TextParams / flops,
		PrefillAttn:    2 * hidden * float64(m.Layers) / flops,
		PerKVByte:      1 / bw,
	}
	if m.Arch == CrossAttention {
		c.PerImageToken = 2 * 2 * hidden * kvDim * float64(m.CrossLayers) / flops
		c.CrossAttn = 4 * hidden * float64(m.CrossLayers) / flops
	}
	d := fmt.Sprintf("derived: %s roofline on %d x %s at %.0f%% of peak FLOPs, %.0f%% of HBM bandwidth", m.Name, tp, g.Name, 100*e.Compute, 100*e.Memory)
	c.Sources = map[string]string{"Encode": d + fmt.Sprintf(", TP scaling by Amdahl's law fitted to the paper's measured %.1fx from TP-4 to TP-8", EncoderTPSpeedup4to8),
		"Prefill": d, "Decode": d, "Preprocess": "assumed"}
	return c
}

// Encode is the time of a vision-encoder batch of n images.
func (c *Costs) Encode(n int) float64 {
	if n <= 0 {
		return 0
	}
	return c.EncodeFixed + float64(n)*c.EncodePerImage
}

// prefillWork is one prompt's share of a prefill iteration: n tokens in
// the sequence, t text tokens, i image tokens outside it (CrossAttention).
func (c *Costs) prefillWork(n, t, i int) float64 {
	fn := float64(n)
	return c.PerToken*fn + c.PrefillAttn*fn*fn + c.PerImageToken*float64(i) + c.CrossAttn*float64(t)*float64(i)
}

func (c *Costs) validate() error {
	for _, x := range []float64{c.Preprocess, c.EncodeFixed, c.EncodePerImage, c.IterFixed, c.PerToken, c.PrefillAttn, c.PerImageToken, c.CrossAttn, c.PerKVByte} {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: costs %+v", ErrBadConfig, *c)
		}
	}
	if !(c.EncodePerImage > 0 && c.PerToken > 0) {
		return fmt.Errorf("%w: costs %+v: an image and a token must cost time", ErrBadConfig, *c)
	}
	return nil
}
