package infer

import (
	"github.com/drover-sched/drover/env/infer/kv"
)

// Roofline is a latency model of one transformer iteration on TP GPUs of
// one type, derived from the GPU's datasheet (GPU) and the model's
// architecture (kv.Arch) instead of measured: an iteration takes the
// longer of its compute, FLOPs / (TP x FP16FLOPS x PrefillEfficiency), and
// its memory traffic, bytes / (TP x HBMBytesPerSec x DecodeEfficiency),
// plus, with TP > 1, its tensor-parallel all-reduces (two a layer, each a
// ring of 2 (TP - 1) steps of CollectiveLatency, carrying 2 (TP - 1) / TP
// of the activations over the GPUs' NVLink). A prefill of b prompts of p
// tokens computes 2 Params b p FLOPs for the weights and 2 Layers Hidden
// p^2 b for causal attention, and reads the weights once: compute-bound
// past a few hundred tokens. A decode step of b requests with c tokens of
// context computes 2 Params b + 4 Layers Hidden c b FLOPs and reads the
// weights and the b c tokens of KV cache: memory-bound.
//
// RooflinePerfTable tabulates it into a PerfTable; BuiltinRoofline holds
// the efficiencies fitted to SplitwiseSim's measurements (see its doc).
type Roofline struct {
	// PrefillEfficiency is the share of the datasheet's dense FP16 tensor
	// throughput the iterations' matrix products reach.
	PrefillEfficiency float64
	// DecodeEfficiency is the share of the datasheet's memory bandwidth
	// the iterations' weight and KV reads reach.
	DecodeEfficiency float64
	// CollectiveLatency is the time (s) of one step of a ring all-reduce
	// between the instance's GPUs, beyond its bytes.
	CollectiveLatency float64
}

// BuiltinRoofline is the roofline of `--perf builtin` and of drover infer's
// fallback when SplitwiseSim's table is absent. Its three constants were
// chosen by a grid search (efficiencies by 0.02, the latency by 2 us) that
// minimises the median relative error of the prompt times plus that of the
// token times over the A100 and H100 rows of SplitwiseSim's performance
// table (../shared/traces/llm/calibration/splitwise_perf_model.csv, each
// row's median over its 5 repetitions); TestRooflineFit checks that they
// are a minimum of that error and reports it per row class. Against those
// 104 rows the built-in model's prompt times are off by 13.5% at the
// median (worst 50%, llama2-70b at TP8 on H100 with 512 x 16 and 512 x 32
// tokens), its token times by 9.3% (worst 55%, llama2-70b at TP8 on H100,
// 256 x 1). By class it is closest on llama2-70b at TP2 on H100 (prompt
// 1.6%, token 0.6% at the median) and furthest on the TP8 decodes of
// H100 and of bloom-176b (token medians 33-43%, the roofline slower than
// measured) and the batched TP4 and TP8 prefills (the roofline faster).
// Two prompt rows (llama2-70b at TP2, 512 x 64 tokens on A100 and H100) are
// left out: they were measured faster than the GPUs' datasheet peak allows
// (SplitwiseSim's table records 0.8 s and 0.36 s for 4.5 PFLOP).
var BuiltinRoofline = Roofline{PrefillEfficiency: 0.50, DecodeEfficiency: 0.64, CollectiveLatency: 16e-6}

// peerBytesPerSec is one direction of a GPU type's NVLink bandwidth
// (NVIDIA's datasheets: A100 SXM NVLink 3 600 GB/s, H100 SXM NVLink 4 900
// GB/s, both directions together), which a tensor-parallel all-reduce's
// bytes cross; 0 for the other types, which then pay only the
// all-reduce's latency.
func peerBytesPerSec(gpu string) float64 {
	switch gpu {
	case "a100-80gb":
		return 300e9
	case "h100-80gb":
		return 450e9
	}
	return 0
}

// iteration is the roofline time (s) of an iteration of tokens tokens
// computing flops FLOPs and reading bytes bytes on tp GPUs of type g.
func (r Roofline) iteration(a kv.Arch, g GPU, tp int, tokens, flops, bytes float64) float64 {
	n := float64(tp)
	d := max(flops/(n*g.FP16FLOPS*r.PrefillEfficiency), bytes/(n*g.HBMBytesPerSec*r.DecodeEfficiency))
	if tp > 1 {
		steps := 2 * (n - 1)
		allReduce := steps * r.CollectiveLatency
		if bw := peerBytesPerSec(g.Name); bw > 0 {
			allReduce += steps / n * tokens * float64(a.Hidden*a.DTypeBytes) / bw
		}
		d += 2 * float64(a.Layers) * allReduce
	}
	return d
}

// PromptTime is the roofline time (s) of a prefill iteration of batch
// prompts of prompt tokens each, of model a on tp GPUs of type g.
func (r Roofline) PromptTime(a kv.Arch, g GPU, tp, prompt, batch int) float64 {
	p, b := float64(prompt), float64(batch)
	flops := 2*float64(a.Params)*b*p + 2*float64(a.Layers*a.Hidden)*p*p*b
	return r.iteration(a, g, tp, b*p, flops, float64(a.WeightBytes()))
}

// TokenTime is the roofline time (s) of a decode iteration of batch
// requests with context tokens of KV cache each, of model a on tp GPUs
// of type g.
func (r Roofline) TokenTime(a kv.Arch, g GPU, tp, context, batch int) float64 {
	c, b := float64(context), float64(batch)
	flops := 2*float64(a.Params)*b + 4*float64(a.Layers*a.Hidden)*c*b
	bytes := float64(a.WeightBytes()) + b*c*float64(a.KVBytesPerToken())
	return r.iteration(a, g, tp, b, flops, bytes)
}

// rooflineShape is one (model, GPU, TP) the built-in table holds.
type rooflineShape struct {
	model, gpu string
	tp         int
}

// rooflineShapes are the (model, GPU, TP) of SplitwiseSim's table on its
// measured A100 and H100 (its power-capped H100 left out): llama2-70b at
// TP 2, 4 and 8, bloom-176b at TP 8. These cover the presets of drover
// infer (splitwise-ha, splitwise-baseline: TP8 on both types; pd-rl: TP8,
// its A10G and V100 extrapolated from the A100 as with the measured
// table).
var rooflineShapes = []rooflineShape{
	{"llama2-70b", "a100-80gb", 2}, {"llama2-70b", "a100-80gb", 4}, {"llama2-70b", "a100-80gb", 8},
	{"llama2-70b", "h100-80gb", 2}, {"llama2-70b", "h100-80gb", 4}, {"llama2-70b", "h100-80gb", 8},
	{"bloom-176b", "a100-80gb", 8}, {"bloom-176b", "h100-80gb", 8},
}

// rooflineGrid is SplitwiseSim's measurement grid (prompt size x batch
// size; every row generates rooflineTokens tokens): one prompt of 128 to
// 8,192 tokens, and 2 to 64 prompts of 512.
var rooflineGrid = [][2]int{
	{128, 1}, {256, 1}, {512, 1}, {1024, 1}, {2048, 1}, {4096, 1}, {8192, 1},
	{512, 2}, {512, 4}, {512, 8}, {512, 16}, {512, 32}, {512, 64},
}

// rooflineTokens is the tokens each row of SplitwiseSim's table generates
// (its token_size): a row's token time is the mean decode step, whose
// context runs from prompt + 1 to prompt + 128 tokens.
const rooflineTokens = 128

// rooflineContext is the context of a row's mean decode step: the middle
// of its rooflineTokens steps, prompt + 64.
func rooflineContext(prompt int) int { return prompt + rooflineTokens/2 }

// RooflinePerfTable returns a PerfTable derived from BuiltinRoofline: for
// each (model, GPU, TP) of rooflineShapes, one row per point of
// SplitwiseSim's measurement grid (PromptTime of the row's prompts,
// TokenTime at its mean context), reduced into curves as ParsePerfTable
// reduces measured rows. Its latencies are not measurements: Derived
// reports true, and the simulator's Summary.Derived with it.
func RooflinePerfTable() *PerfTable {
	groups := map[perfKey]map[int64]*perfGroup{}
	for _, s := range rooflineShapes {
		a, _ := kv.Lookup(s.model)
		g, _ := LookupGPU(s.gpu)
		gs := map[int64]*perfGroup{}
		for _, pb := range rooflineGrid {
			p, b := pb[0], pb[1]
			x := int64(p * b)
			if gs[x] == nil {
				gs[x] = &perfGroup{}
			}
			gs[x].prompt = append(gs[x].prompt, BuiltinRoofline.PromptTime(a, g, s.tp, p, b))
			gs[x].token = append(gs[x].token, BuiltinRoofline.TokenTime(a, g, s.tp, rooflineContext(p), b))
		}
		groups[perfKey{s.model, s.gpu, s.tp}] = gs
	}
	t, err := reduceGroups(groups)
	if err != nil {
		panic("infer: " + err.Error()) // every shape has 9 batch-token values
	}
	t.derived = true
	return t
}
