package kv

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
	// Approx is done at every decode step by HACK: quantizing Q and the
	// attention probabilities to INT8 per partition and the four correction
	// terms of each product; without summation elimination also summing the
	// codes, without requantization elimination also requantizing the open
	// block.
	Approx float64
	// StepBytes is the KV read at every decode step: the stored cache.
	StepBytes int64
	// DequantBytes is the memory traffic of dequantization at every decode
	// step: the formats that dequantize (INT8, KVQuant, CacheGen) write a
	// 16-bit copy of the cache and attention reads it back, as the
	// artifact's baselines do (hack/baselines: dequantize returns the dense
	// K and V). Twice the dense cache's bytes; zero for the dense cache and
	// for HACK, whose attention reads only StepBytes.
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
	w := Work{StepBytes: f.StoredBytes(a, tokens)}
	perToken := float64(a.KVElementsPerToken()) // K and V, all layers and KV heads
	n := float64(tokens)
	if f.Kind == INT8 || f.Kind == KVQuant || f.Kind == CacheGen {
		w.DequantBytes = 2 * a.KVBytesPerToken() * int64(tokens)
	}
	switch f.Kind {
	case INT8:
		w.Encode = OpsQuantize * perToken * n
		w.Dequant = OpsDequantInt8 * perToken * n
	case KVQuant:
		s := float64(min(f.SinkTokens, tokens))
		q := perToken * (n - s)
		outliers := float64(kvquantOutliers(a, tokens-int(s)))
		// Encode: normalize (2), bucketize against 3 midpoints (2), pack,
		// and a top-k pass for the value outliers (about 3 per element).
		w.Encode = (OpsQuantize + 3) * q
		w.Dequant = OpsDequantLUT*q + OpsScatterOutlier*outliers
	case CacheGen:
		// Every element is a symbol: quantized (as a delta to its anchor
		// for K), packed and entropy coded; decoded on arrival; and
		// dequantized at every step (K adds its anchor back).
		w.Encode = (OpsQuantize + 2 + OpsEntropy) * perToken * n
		w.Receive = OpsEntropy * perToken * n
		w.Dequant = (OpsDequantAffine + 0.5) * perToken * n
	case HACK:
		w.Encode, w.Approx = hackWork(a, f, tokens)
	}
	return w
}

// kvquantOutliers is the number of 16-bit outliers of n quantized tokens
// over all layers (see kvquantBytes).
func kvquantOutliers(a Arch, n int) int64 {
	wd := int64(a.KVHeads) * int64(a.HeadDim)
	k := int64(KVQuantOutlierFraction*float64(int64(n)*wd) + 0.5)
	v := int64(n) * 2 * int64(float64(wd)*KVQuantOutlierFraction/2+0.5)
	return (k + v) * int64(a.Layers)
}

// hackWork counts HACK's encode and per-step approximation work from
// hack/attention_ref.py, per layer and query head (the reference repeats
// the KV heads' codes for every query head of a group), with n closed
// tokens in B = n/Pi blocks and g = head dim / channel partition groups:
//
//   - Q K^T: Q scaled by K's per-block channel scales (B x d), quantized to
//     INT8 per channel partition (5 B d), the four correction terms of each
//     (token, channel group) (8 n g) and Q times K's block minima (2 B d);
//   - P V: P scaled by V's per-token group scales (n g), quantized per token
//     block (5 n g), the correction terms of each (block, channel) (8 B d)
//     and P times V's minima (2 n g).
//
// That is 16 B d + 16 n g per query head and layer. Without summation
// elimination each product also sums its codes (n d each); without
// requantization elimination each step dequantizes and requantizes the
// open block's K and V (9 operations per element per KV head). Encoding
// quantizes, packs and sums every closed K and V element (7 operations).
func hackWork(a Arch, f Format, tokens int) (encode, approx float64) {
	_, closed, open := hackSplit(f, tokens)
	d, pi := float64(a.HeadDim), float64(f.Partition)
	g := d / float64(channelPart(a.HeadDim, f.Partition))
	n := float64(closed)
	b := n / pi
	perHead := 16*b*d + 16*n*g
	if !f.SummationElimination {
		perHead += 2 * n * d
	}
	layers, heads, kvHeads := float64(a.Layers), float64(a.Heads), float64(a.KVHeads)
	approx = perHead * heads * layers
	if !f.RequantElimination {
		approx += (OpsDequantAffine + OpsQuantize) * 2 * float64(open) * d * kvHeads * layers
	}
	encode = (OpsQuantize + 2) * 2 * n * d * kvHeads * layers
	return encode, approx
}
