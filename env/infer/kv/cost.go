package kv

import "math"

// Work is the work a KV format adds to one request, beyond what the dense
// cache costs, in elementary GPU operations (one per arithmetic operation,
// comparison, shift, mask or table lookup; a multiply-add is 2). The
// simulator turns operations into time with a GPU's throughput and bytes
// into time with its memory bandwidth.
type Work struct {
	// Encode is done once on the prefill instance: quantizing (and for
	// CacheGen entropy coding) the prompt's K and V.
	Encode float64
	// Receive is done once on the decode instance when the KV arrives:
	// CacheGen's entropy decoding.
	Receive float64
	// Dequant is done at every decode step: dequantizing the stored K and V
	// to 16 bits before attention (INT8, KVQuant, CacheGen). HACK has none.
	Dequant float64
	// Approx is the non-tensor work HACK does at every decode step, counted
	// from the artifact's decode kernel (hack/kernels/decode.py tile_scores
	// and block_values, which paged.py's attn_decode_paged runs on every
	// closed block): unpacking the codes to INT8, quantizing Q (scaled by
	// each block's channel scales) and the softmax weights (scaled by its
	// token scales) to INT8 per partition, the correction terms of both
	// products and the online softmax; without summation elimination also
	// summing the codes, without requantization elimination also
	// requantizing the open block.
	Approx float64
	// ApproxINT8 is the tensor-core work of HACK's two products at every
	// decode step, in INT8 operations (a multiply-add is 2): the kernel
	// multiplies Q's codes, laid out block-diagonally per channel partition
	// (NP = head dim / channel partition rows per query row, at least 16
	// rows a product as tl.dot needs), by every closed block's codes, and
	// the weights' codes by the block's V codes: 4 x max(NP G, 16) x head
	// dim x Pi per block and KV head, G the query heads per KV head.
	ApproxINT8 float64
	// PrefillAttn, PrefillINT8, PrefillFP16 and PrefillVector price HACK's
	// quantized prefill (Format.QuantizedPrefill; zero otherwise). It
	// replaces the prompt's 16-bit attention (PrefillAttn FLOPs: Q K^T and
	// P V, causal, as FlashAttention computes them) by the attn_prefill
	// kernel (hack/kernels/prefill.py): the same block products as the
	// decode kernel's on the prompt's closed blocks, 64 query rows a
	// program (PrefillINT8 tensor operations in INT8, PrefillVector
	// elementwise ones), and 16-bit products with the sinks and the open
	// block, each done twice by dot_with_half (PrefillFP16 FLOPs).
	PrefillAttn, PrefillINT8, PrefillFP16, PrefillVector float64
	// StepBytes is the KV read at every decode step: the stored cache.
	StepBytes int64
	// DequantBytes is the memory traffic of dequantization at every decode
	// step beyond reading the stored cache (StepBytes): the formats that
	// dequantize (INT8, KVQuant, CacheGen) write a 16-bit copy of the cache
	// and attention reads it back, as the artifact's baselines do
	// (hack/baselines: dequantize returns the dense K and V). As one fused
	// kernel that is twice the dense cache's bytes; with TorchDequant it is
	// every pass of the artifact's PyTorch dequantization (TorchPasses),
	// 15 to 19 times that. Zero for the dense cache and for HACK, whose
	// attention reads only StepBytes.
	DequantBytes int64
}

// Operations per element, counted from the artifact's PyTorch reference
// code (Zeyu-ZEYU/HKVQ@fc16e215: hack/quant.py, hack/cache.py,
// hack/attention_ref.py, hack/baselines); modelling constants, not
// measurements. HKVQMicrobench holds the artifact's kernel timings to
// calibrate them against.
const (
	// OpsQuantize quantizes one element against its partition's range:
	// minimum and maximum (2), subtract, scale, round.
	OpsQuantize = 5
	// OpsDequantAffine dequantizes one packed code: shift and mask (2),
	// convert, multiply-add (2) less the fused convert: 4.
	OpsDequantAffine = 4
	// OpsDequantInt8 dequantizes one byte: convert and multiply-add.
	OpsDequantInt8 = 2
	// OpsDequantLUT dequantizes one KVQuant code: shift and mask, a lookup
	// of the non-uniform level, multiply-add.
	OpsDequantLUT = 4
	// OpsScatterOutlier writes one KVQuant 16-bit outlier back: index
	// arithmetic and store.
	OpsScatterOutlier = 2
	// OpsEntropy codes or decodes one rANS symbol: slot mask, table lookup,
	// state update (multiply-add), renormalization test and shift, about 8.
	OpsEntropy = 8
	// OpsHACKCorrection is one term of HACK's product per partition:
	// a product of scales and a multiply-add (Eq. 4 of the paper; four
	// terms per output and partition).
	OpsHACKCorrection = 2
)

// Work is what format f adds to a request of a's whose cache holds tokens
// tokens: once at the prefill and on arrival of the tokens' KV, and per
// decode step over a cache of that length. It panics if f.Check(a) fails or
// tokens < 0.
func (f Format) Work(a Arch, tokens int) Work {
	f.mustCheck(a, tokens)
	var k consts
	p := newPair(&f, &a, &k, true)
	if f.TorchDequant {
		var t torchTallies
		t.init(&f, &a)
		p.t = &t
	}
	return p.work(tokens)
}

// work is Work of p's format and architecture: a decode step's fields
// (step) and those done once.
func (p pair) work(tokens int) Work {
	var w Work
	w.StepBytes, w.DequantBytes, w.Dequant, w.Approx, w.ApproxINT8 = p.step(tokens)
	f, a := p.f, p.a
	perToken := p.k.kvElements // K and V, all layers and KV heads
	n := float64(tokens)
	switch f.Kind {
	case INT8:
		w.Encode = OpsQuantize * perToken * n
	case KVQuant:
		// Encode: normalize (2), bucketize against 3 midpoints (2), pack,
		// and a top-k pass for the value outliers (about 3 per element).
		s := float64(min(f.SinkTokens, tokens))
		q := perToken * (n - s)
		w.Encode = (OpsQuantize + 3) * q
	case CacheGen:
		// Every element is a symbol: quantized (as a delta to its anchor
		// for K), packed and entropy coded; decoded on arrival (and
		// dequantized at every step, step).
		w.Encode = (OpsQuantize + 2 + OpsEntropy) * perToken * n
		w.Receive = OpsEntropy * perToken * n
	case HACK:
		w.Encode = p.hackEncode(tokens)
		if f.QuantizedPrefill {
			w.PrefillAttn = PrefillFLOPs(*a, tokens) - prefillLinear(*a, tokens)
			w.PrefillINT8, w.PrefillFP16, w.PrefillVector = p.hackPrefillWork(tokens)
		}
	}
	return w
}

// step is the part of Work a decode step does, field by field (StepBytes,
// DequantBytes, Dequant, Approx, ApproxINT8). It returns them as values,
// not as a Work: the simulator calls it for every request in every decode
// iteration (Bound.Step), and building, zeroing and copying the nine
// fields of a Work was most of its time (the package doc's "Bound:
// checked once").
func (p pair) step(tokens int) (stepBytes, dequantBytes int64, dequant, approx, approxINT8 float64) {
	f, a := p.f, p.a
	stepBytes = p.storedBytes(tokens)
	perToken := p.k.kvElements // K and V, all layers and KV heads
	n := float64(tokens)
	if f.Kind == INT8 || f.Kind == KVQuant || f.Kind == CacheGen {
		dequantBytes = 2 * p.k.kvBytes * int64(tokens)
		if f.TorchDequant {
			dequantBytes = p.torchPasses(tokens).Bytes()
		}
	}
	switch f.Kind {
	case INT8:
		dequant = OpsDequantInt8 * perToken * n
	case KVQuant:
		s := float64(min(f.SinkTokens, tokens))
		q := perToken * (n - s)
		outliers := float64(kvquantOutliers(a, tokens-int(s)))
		dequant = OpsDequantLUT*q + OpsScatterOutlier*outliers
	case CacheGen:
		// Dequantized at every step (K adds its anchor back).
		dequant = (OpsDequantAffine + 0.5) * perToken * n
	case HACK:
		approx, approxINT8 = p.hackWork(tokens)
	}
	return stepBytes, dequantBytes, dequant, approx, approxINT8
}

// PrefillFLOPs is the dense prefill of a prompt of tokens tokens through a,
// in FLOPs (a multiply-add is 2): its linear layers, 2 x (parameters less
// the input embedding, a lookup) a token, and its attention, Q K^T and P V
// over the causal pairs (2 x head dim x (tokens + 1) x tokens per query
// head and layer). The simulator apportions a prompt's measured prefill
// time by it. It is 0 for an architecture without its parameters.
func PrefillFLOPs(a Arch, tokens int) float64 {
	if a.Params <= int64(a.Vocab)*int64(a.Hidden) {
		return 0
	}
	n := float64(tokens)
	attn := 2 * float64(a.HeadDim) * (n + 1) * n * float64(a.Heads) * float64(a.Layers)
	return prefillLinear(a, tokens) + attn
}

// prefillLinear is PrefillFLOPs' linear layers.
func prefillLinear(a Arch, tokens int) float64 {
	return 2 * float64(a.Params-int64(a.Vocab)*int64(a.Hidden)) * float64(tokens)
}

// kvquantOutliers is the number of 16-bit outliers of n quantized tokens
// over all layers (see kvquantBytes).
func kvquantOutliers(a *Arch, n int) int64 {
	wd := int64(a.KVHeads) * int64(a.HeadDim)
	k := int64(KVQuantOutlierFraction*float64(int64(n)*wd) + 0.5)
	v := int64(n) * 2 * int64(float64(wd)*KVQuantOutlierFraction/2+0.5)
	return (k + v) * int64(a.Layers)
}

// hackBlock is the work of HACK's kernels (hack/kernels/decode.py
// tile_scores, softmax_step and block_values) on one closed block of Pi
// tokens and one KV head for rows query rows (the G query heads of the KV
// head times the query tokens of a program), with head dim d and np
// channel partitions. Elementwise operations (vector), counted per element
// of the kernels' tiles:
//
//   - per channel, 6 d: converting the block's K scales and minima, V's
//     code sums and the column weights of the 2-bit fields;
//   - per query row and channel, (15 + 11 np) rows d: Q times K's channel
//     scales, its minimum and maximum per partition, quantizing it to INT8
//     (subtract, scale, round, two clamps, shift, convert, sum: 8), the
//     block-diagonal copy (np), Q times K's minima and its sum (2); the
//     product's conversion (np), field weights (3 np), correction terms
//     (4 np), selection of each channel's partition and its sum (2 np); the
//     accumulator's decay (2);
//   - per code, 5 Pi d: unpacking K (shift, mask, convert) and V (flip,
//     mask) to INT8;
//   - per query row and token, (5 + 18 np) rows Pi: the scores' conversion
//     and corrections (5 np) and K's minima (1); the online softmax (4);
//     the weights times V's token scales, their minimum and maximum,
//     quantizing to INT8 and the weights times V's minima (13 np);
//   - per token and partition, 3 Pi np: K's sums and V's scales and minima.
//
// The tensor work is the two products, 4 x max(np rows, 16) x d x Pi INT8
// operations. Without summation elimination the kernels sum both blocks'
// codes (4 Pi d more).
func hackBlock(rows, d, pi, np float64, sums bool) (vector, int8 float64) {
	vector = 6*d + (15+11*np)*rows*d + 5*pi*d + (5+18*np)*rows*pi + 3*pi*np
	if !sums {
		vector += 4 * pi * d
	}
	return vector, 4 * max(np*rows, 16) * d * pi
}

// hackWork counts HACK's per-step approximation work: at every decode
// step the kernels' work on every closed block of every KV head and layer
// (hackBlock with the G query heads of a KV head as rows); without
// requantization elimination each step also dequantizes and requantizes
// the open block's K and V (9 operations per element per KV head). The
// sinks and the open block are attended in 16 bits, as dense tokens (their
// bytes are in StepBytes).
//
// Its block's work (hackBlock) is the same at every call and worked out
// once (consts.block).
func (p pair) hackWork(tokens int) (approx, int8 float64) {
	f, a := p.f, p.a
	_, _, open, nb := p.hackSplit(tokens)
	d := float64(a.HeadDim)
	blocks := float64(nb)
	v, i8 := p.k.block.vector, p.k.block.int8
	heads := float64(a.KVHeads) * float64(a.Layers)
	approx, int8 = blocks*v*heads, blocks*i8*heads
	if !f.RequantElimination {
		approx += (OpsDequantAffine + OpsQuantize) * 2 * float64(open) * d * heads
	}
	return approx, int8
}

// hackEncode counts HACK's encoding: quantizing, packing and summing every
// closed K and V element (7 operations).
func (p pair) hackEncode(tokens int) float64 {
	a := p.a
	_, closed, _, _ := p.hackSplit(tokens)
	d := float64(a.HeadDim)
	heads := float64(a.KVHeads) * float64(a.Layers)
	return (OpsQuantize + 2) * 2 * float64(closed) * d * heads
}

// prefillRows is attn_prefill's query rows a program (hack/kernels/
// prefill.py QUERY_ROWS): 64, the G query heads of a KV head times
// 64 / G (rounded up to a power of two) query tokens, at least one.
func prefillRows(g int) float64 {
	p := 1
	for p < g {
		p *= 2
	}
	return float64(g * max(1, 64/p))
}

// hackPrefillWork is HACK's quantized prefill of a prompt of tokens
// tokens (hack/kernels/prefill.py attn_prefill, causal): every query
// token's programs run hackBlock on each closed block that starts at or
// before it (query tiles are rounded to blocks: a block of keys at
// positions s + b Pi ... is worked by the n - s - b Pi queries from its
// start on), and attend to the s sinks and the o open tokens in 16 bits
// with two BF16 products each (dot_with_half; every program loops over
// both segments, the causal mask hiding the open tokens from earlier
// queries: n (s + o) pairs).
//
// Its block's work (hackBlock at prefillRows) is worked out once
// (consts.prefillBlock).
func (p pair) hackPrefillWork(tokens int) (int8, fp16, vector float64) {
	f, a := p.f, p.a
	sinks, _, open, blocks := p.hackSplit(tokens)
	n, s := float64(tokens), float64(sinks)
	d, pi := float64(a.HeadDim), float64(f.Partition)
	b := float64(blocks)
	// Query tokens per block, summed over the blocks: sum over b' < b of
	// (n - s - b' Pi).
	queries := b*(n-s) - pi*b*(b-1)/2
	rows := prefillRows(a.GQAGroup())
	v, i8 := p.k.prefillBlock.vector, p.k.prefillBlock.int8
	perQuery := float64(a.GQAGroup()) / rows // programs per query token and KV head
	heads := float64(a.KVHeads) * float64(a.Layers)
	int8 = queries * perQuery * i8 * heads
	vector = queries * perQuery * v * heads
	densePairs := n * (s + float64(open))
	fp16 = 2 * 4 * d * densePairs * float64(a.Heads) * float64(a.Layers)
	return int8, fp16, vector
}

// Passes is the memory traffic of a dequantization done as a chain of
// separate GPU kernels (one per PyTorch operation), each reading its
// operands from HBM and writing its result back.
type Passes struct {
	// Kernels is the number of kernels per decode step over all layers.
	Kernels int
	// Read and Written are their bytes, beyond reading the stored cache
	// (Work.StepBytes), including attention's read of the 16-bit result.
	Read, Written int64
}

// Bytes is the passes' traffic, Read + Written.
func (p Passes) Bytes() int64 { return p.Read + p.Written }

// pass is one elementwise kernel: bytes read and written per element of K
// or V it covers.
type pass struct{ read, write float64 }

// unpackPasses is hack/quant.py unpack of codes of bits bits (8 / bits to
// a byte): packed.to(int32) (reads the stored byte, writes 4 bytes per
// byte), >> shifts (reads those, writes an int32 per code), & mask (int32
// to int32) and .to(uint8). Per code that is 1/p + 4/p, 4/p + 4, 4 + 4,
// 4 + 1 bytes with p codes a byte; the first read is the stored cache's
// (StepBytes) and is left out. Codes of 8 bits are not unpacked.
func unpackPasses(bits int) []pass {
	if bits >= 8 {
		return nil
	}
	p := 8 / float64(bits)
	return []pass{{0, 4 / p}, {4 / p, 4}, {4, 4}, {4, 1}}
}

// Passes of the artifact's dequantization after unpacking, per element of
// K or V, from Zeyu-ZEYU/HKVQ@fc16e215 hack/baselines (float32 is 4 bytes,
// int64 8, BF16 2; the calibration tables, scales and zeros are small
// beside the codes and are left out, as are KVQuant's 1% of outliers
// scattered back):
var (
	// kvquantPasses is kvquant.py KVQuantTensor.dense and .dequantize:
	// codes .long(), levels[codes] (gathers int64 indices into float32),
	// * scale, + zero, permute(2, 0, 1, 3).reshape (a copy), and the
	// permuted .to(bfloat16).
	kvquantPasses = []pass{{1, 8}, {8, 4}, {4, 4}, {4, 4}, {4, 4}, {4, 2}}
	// kvquantAllPasses cover the sink tokens too: KVQuantCodes.dequantize's
	// torch.cat of the 16-bit sinks and the dequantized tokens.
	kvquantAllPasses = []pass{{2, 2}}
	// cgVectorPasses is cachegen.py dequantize_vectors: codes.float(),
	// - (levels - 1) / 2, * scale.
	cgVectorPasses = []pass{{1, 4}, {4, 4}, {4, 4}}
	// cgAnchoredPasses is what CacheGenTensor.dequantize adds for every
	// token that is not an anchor of a tensor coded with anchors (the
	// keys): anchors[:, :, group] (a gather into float32), + values, and
	// out.index_copy_.
	cgAnchoredPasses = []pass{{4, 4}, {8, 4}, {4, 4}}
	// cgAnchorPasses is the anchors' own index_copy_ into out.
	cgAnchorPasses = []pass{{4, 4}}
	// cgAllPasses cover every token: out.to(bfloat16) (values.to(bfloat16)
	// for a tensor without anchors).
	cgAllPasses = []pass{{4, 2}}
)

// attentionRead is what attention then reads of the BF16 result, per
// element: its 2 bytes.
const attentionRead = 2

// tally sums passes' bytes per element and counts their kernels.
type tally struct {
	read, write float64
	kernels     int
}

// of adds passes ps, each once per element, to t.
func (t tally) of(ps ...[]pass) tally {
	for _, p := range ps {
		for _, q := range p {
			t.read += q.read
			t.write += q.write
			t.kernels++
		}
	}
	return t
}

// add counts t's passes over n elements, times times.
func (p *passSum) add(t tally, n float64, times int) {
	p.read += t.read * n * float64(times)
	p.write += t.write * n * float64(times)
	p.kernels += t.kernels * times
}

// passSum accumulates Passes before rounding to bytes.
type passSum struct {
	read, write float64
	kernels     int
}

// TorchPasses is the traffic of one decode step's dequantization of tokens
// tokens of a's cache in f (KVQuant or CacheGen) as the artifact's PyTorch
// implementation runs it: its Hugging Face cache (hack/baselines/hf_cache.py
// StorageOnlyLayer.update) dequantizes every layer's whole K and V at
// every step, pass by pass as counted in unpackPasses, kvquantPasses and
// cgVectorPasses and the lists beside them, then attention reads the BF16
// result (attentionRead). Kernels counts the passes (attention is not one
// of them). It panics if f is not KVQuant or CacheGen, if f.Check(a) fails
// or if tokens < 0.
func TorchPasses(a Arch, f Format, tokens int) Passes {
	f.mustCheck(a, tokens)
	var k consts
	p := newPair(&f, &a, &k, false)
	var t torchTallies
	t.init(&f, &a)
	p.t = &t
	return p.torchPasses(tokens)
}

// torchTallies are the passes TorchPasses counts per element, summed once
// per format and architecture (init): they depend on neither the token
// count nor, but for the layers' code widths, the architecture.
type torchTallies struct {
	// kvquant covers KVQuant's quantized tokens, kvquantAll all of them.
	kvquant, kvquantAll tally
	// cgKeys and cgValues count CacheGen's layers by the width of their
	// key and value codes (cgLayerBits); cgKey[bits] and cgValue[bits]
	// cover the keys and values coded in bits bits, cgAnchor the keys'
	// anchors, cgAll every key.
	cgKeys, cgValues [9]int
	cgKey, cgValue   [9]tally
	cgAnchor, cgAll  tally
}

// init sums the passes of f (KVQuant or CacheGen) on a; other formats
// have none.
func (t *torchTallies) init(f *Format, a *Arch) {
	switch f.Kind {
	case KVQuant:
		t.kvquant = tally{}.of(unpackPasses(f.Bits), kvquantPasses)
		t.kvquantAll = tally{}.of(kvquantAllPasses)
	case CacheGen:
		t.cgKeys, t.cgValues = cgLayerBits(a.Layers)
		t.cgAnchor = tally{}.of(cgVector(8), cgAnchorPasses)
		t.cgAll = tally{}.of(cgAllPasses)
		for bits := range t.cgKeys {
			if t.cgKeys[bits] > 0 {
				t.cgKey[bits] = tally{}.of(unpackPasses(bits), cgVector(bits), cgAnchoredPasses)
			}
			if t.cgValues[bits] > 0 {
				t.cgValue[bits] = tally{}.of(unpackPasses(bits), cgVector(bits), cgAllPasses)
			}
		}
	}
}

// torchPasses is TorchPasses of p's format and architecture, with p's
// torch tallies (p.t, which it needs).
func (pr pair) torchPasses(tokens int) Passes {
	f, a, t := pr.f, pr.a, pr.t
	var p passSum
	wd := float64(a.KVHeads) * float64(a.HeadDim) // elements of K (or V) per token and layer
	n := float64(tokens)
	switch f.Kind {
	case KVQuant:
		q := float64(tokens-min(f.SinkTokens, tokens)) * wd
		p.add(t.kvquant, q, 2*a.Layers) // K and V
		p.add(t.kvquantAll, n*wd, 2*a.Layers)
	case CacheGen:
		// Layers by the width of their key and value codes.
		keys, values := &t.cgKeys, &t.cgValues
		anchors := float64((tokens + cgGroup - 1) / cgGroup)
		for bits := range keys {
			if keys[bits] > 0 { // keys: anchored; the anchors are 8-bit codes read as stored
				p.add(t.cgKey[bits], (n-anchors)*wd, keys[bits])
				p.add(t.cgAnchor, anchors*wd, keys[bits])
				p.add(t.cgAll, n*wd, keys[bits])
			}
			if values[bits] > 0 { // values: no anchors
				p.add(t.cgValue[bits], n*wd, values[bits])
			}
		}
	default:
		panic("kv: TorchPasses of " + f.Name() + ": only kvquant and cachegen dequantize in the artifact's PyTorch code")
	}
	p.read += attentionRead * 2 * n * wd * float64(a.Layers)
	return Passes{Kernels: p.kernels, Read: int64(math.Round(p.read)), Written: int64(math.Round(p.write))}
}

// cgVector is cgVectorPasses for codes of bits bits: 8-bit codes are read
// as stored (StepBytes), so their first read is left out.
func cgVector(bits int) []pass {
	if bits >= 8 {
		return append([]pass{{0, 4}}, cgVectorPasses[1:]...)
	}
	return cgVectorPasses
}
