package kv

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrBadFormat is returned for a format that cannot be parsed or applied.
var ErrBadFormat = errors.New("kv: bad format")

// Kind is a family of KV-cache formats.
type Kind uint8

// The formats of issue 34. Their byte layouts follow the HKVQ artifact
// (github Zeyu-ZEYU/HKVQ@fc16e215: hack/cache.py, hack/vllm_plugin/layout.py,
// hack/baselines/kvquant.py, hack/baselines/cachegen.py).
const (
	// Dense is the uncompressed cache in the model's 16-bit dtype (FP16 or
	// BF16): the disaggregated baseline.
	Dense Kind = iota
	// INT8 is 8-bit asymmetric quantization per token and KV head (one
	// 16-bit scale and zero per head_dim elements), dequantized before
	// attention at every decode step.
	INT8
	// KVQuant is the KVQuant-style 2-bit cache of the artifact
	// (hack/baselines/kvquant.py): keys per channel, values per token, on a
	// non-uniform 4-level datatype, 1% of every vector kept in 16 bits as
	// sparse outliers, the first token in 16 bits; dequantized at every
	// decode step.
	KVQuant
	// CacheGen is the CacheGen-style codec of the artifact
	// (hack/baselines/cachegen.py): keys as deltas to an 8-bit anchor every
	// 10 tokens, per-layer levels (4-bit codes but for layer 0's 8-bit
	// keys), entropy coded (rANS) on the wire, decoded on arrival and
	// dequantized at every decode step.
	CacheGen
	// HACK is the homomorphic 2-bit cache: K quantized along tokens and V
	// along channels in partitions of Pi, per-partition scale and minimum
	// in BF16, cached partition sums (summation elimination), the first 4
	// tokens and the last partial block in 16 bits (requantization
	// elimination); attention runs on the codes, never dequantized.
	HACK
	numKinds
)

var kindNames = [numKinds]string{"fp16", "int8", "kvquant", "cachegen", "hack"}

// String returns the kind's name as Parse reads it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Layout says how a HACK cache is laid out in memory: the two layouts of
// the artifact differ in alignment and in what is allocated for the open
// block.
type Layout uint8

const (
	// Contiguous is the artifact's Hugging Face cache (hack/cache.py,
	// HackLayerCache): growable tensors holding exactly the closed blocks,
	// the sinks and the open block. Its sizes are the artifact's E2 table
	// (benchmarks/kv_size/kv_size.py).
	Contiguous Layout = iota
	// Paged is the artifact's vLLM layout (hack/vllm_plugin/layout.py,
	// PageLayout): one page of Pi token slots per block, fields aligned to
	// 8 bytes and the page to 4 x Pi bytes, a page allocated for every
	// started block, and the sinks and the open block in 16-bit side slots.
	// Its sizes are the "KV per request" column of the artifact's E3 tables.
	Paged
)

// Format is one KV-cache format with its parameters. The zero Format is
// the dense 16-bit cache. Formats are comparable values.
type Format struct {
	// Kind is the format's family.
	Kind Kind
	// Partition is HACK's partition size Pi (a multiple of 16; the artifact
	// uses 32, 64, 128). Zero for the other kinds.
	Partition int
	// Bits is the width of the stored codes: 2 for KVQuant and HACK, 8 for
	// INT8, 0 for Dense and CacheGen (whose widths are per layer).
	Bits int
	// SinkTokens is the number of leading tokens kept in 16 bits (HACK 4,
	// KVQuant 1, as the artifact's defaults).
	SinkTokens int
	// SummationElimination caches HACK's per-partition code sums (the
	// paper's summation elimination). Without it the sums are recomputed
	// at every decode step and the paged layout stores none.
	SummationElimination bool
	// RequantElimination keeps HACK's last, partial block in 16 bits until
	// it fills (the paper's requantization elimination). Without it every
	// new token dequantizes and requantizes that block. It changes no byte
	// count: the artifact stores the requantized values in 16 bits too.
	RequantElimination bool
	// Layout is HACK's memory layout; the other kinds ignore it.
	Layout Layout
	// QuantizedPrefill computes HACK's prefill attention on the codes too
	// (the artifact's quantized_prefill, hack/config.py: the attn_prefill
	// kernel of hack/kernels/prefill.py, INT8 products on the K and V the
	// prompt has just quantized) instead of 16-bit attention on the K and
	// V it has just computed. The artifact's default, and its serving
	// runs (E3), leave it off. Only HACK takes it; Work prices it.
	QuantizedPrefill bool
	// TorchDequant prices the KVQuant and CacheGen formats' per-step
	// dequantization as the artifact's PyTorch implementation of them runs
	// it (hack/baselines: the whole cache through a chain of unfused
	// elementwise kernels at every decode step; Work, TorchPasses) instead
	// of as one fused kernel. Only those two kinds take it.
	TorchDequant bool
}

// FP16 is the dense 16-bit cache (FP16 or BF16, the model's dtype).
func FP16() Format { return Format{} }

// Int8 is the 8-bit cache with dequantization.
func Int8() Format { return Format{Kind: INT8, Bits: 8} }

// KVQuant2 is the KVQuant-style 2-bit cache with the artifact's defaults.
func KVQuant2() Format { return Format{Kind: KVQuant, Bits: 2, SinkTokens: 1} }

// CacheGenCodec is the CacheGen-style codec with the artifact's defaults.
func CacheGenCodec() Format { return Format{Kind: CacheGen} }

// KVQuantTorch is KVQuant2 dequantized at every step as the artifact's
// PyTorch reference does it (TorchDequant).
func KVQuantTorch() Format { f := KVQuant2(); f.TorchDequant = true; return f }

// CacheGenTorch is CacheGenCodec dequantized at every step as the
// artifact's PyTorch reference does it (TorchDequant).
func CacheGenTorch() Format { f := CacheGenCodec(); f.TorchDequant = true; return f }

// HACKPi is HACK with partition size pi and the artifact's defaults
// (hack/config.py HackConfig: 2-bit codes, 4 sink tokens, summation and
// requantization elimination on) in the contiguous layout.
func HACKPi(pi int) Format {
	return Format{Kind: HACK, Partition: pi, Bits: 2, SinkTokens: 4,
		SummationElimination: true, RequantElimination: true}
}

// Formats returns the formats issue 34 compares, in a fixed order: FP16,
// INT8, KVQuant, CacheGen, HACK with Pi = 32, 64, 128.
func Formats() []Format {
	return []Format{FP16(), Int8(), KVQuant2(), CacheGenCodec(), HACKPi(32), HACKPi(64), HACKPi(128)}
}

// Name is the format's short name: "fp16", "int8", "kvquant", "cachegen",
// "hack-pi64"; a HACK format off the defaults adds "-nose" (no summation
// elimination), "-nore" (no requantization elimination), "-paged" and "-qp"
// (QuantizedPrefill); the KVQuant and CacheGen formats with TorchDequant
// add "-torch".
func (f Format) Name() string {
	if f.Kind != HACK {
		if f.TorchDequant {
			return f.Kind.String() + "-torch"
		}
		return f.Kind.String()
	}
	var b strings.Builder
	b.WriteString("hack-pi")
	b.WriteString(strconv.Itoa(f.Partition))
	if f.Bits != 2 {
		b.WriteString("-b" + strconv.Itoa(f.Bits))
	}
	if f.SinkTokens != 4 {
		b.WriteString("-sink" + strconv.Itoa(f.SinkTokens))
	}
	if !f.SummationElimination {
		b.WriteString("-nose")
	}
	if !f.RequantElimination {
		b.WriteString("-nore")
	}
	if f.Layout == Paged {
		b.WriteString("-paged")
	}
	if f.QuantizedPrefill {
		b.WriteString("-qp")
	}
	return b.String()
}

// String returns Name.
func (f Format) String() string { return f.Name() }

// Parse reads a format name as Name writes it; "bf16", "16bit" and "dense"
// also name the dense cache, "hack" alone is HACK with Pi = 64 (the
// artifact's default).
func Parse(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "kvquant-torch":
		return KVQuantTorch(), nil
	case "cachegen-torch":
		return CacheGenTorch(), nil
	case "fp16", "bf16", "16bit", "dense":
		return FP16(), nil
	case "int8":
		return Int8(), nil
	case "kvquant":
		return KVQuant2(), nil
	case "cachegen":
		return CacheGenCodec(), nil
	case "hack":
		return HACKPi(64), nil
	}
	name := strings.ToLower(strings.TrimSpace(s))
	parts := strings.Split(name, "-")
	if len(parts) < 2 || parts[0] != "hack" || !strings.HasPrefix(parts[1], "pi") {
		return Format{}, fmt.Errorf("%w: %q", ErrBadFormat, s)
	}
	pi, err := strconv.Atoi(parts[1][2:])
	if err != nil {
		return Format{}, fmt.Errorf("%w: %q: partition: %v", ErrBadFormat, s, err)
	}
	f := HACKPi(pi)
	for _, p := range parts[2:] {
		switch {
		case p == "nose":
			f.SummationElimination = false
		case p == "nore":
			f.RequantElimination = false
		case p == "paged":
			f.Layout = Paged
		case p == "qp":
			f.QuantizedPrefill = true
		case strings.HasPrefix(p, "b"):
			if f.Bits, err = strconv.Atoi(p[1:]); err != nil {
				return Format{}, fmt.Errorf("%w: %q: bits: %v", ErrBadFormat, s, err)
			}
		case strings.HasPrefix(p, "sink"):
			if f.SinkTokens, err = strconv.Atoi(p[4:]); err != nil {
				return Format{}, fmt.Errorf("%w: %q: sinks: %v", ErrBadFormat, s, err)
			}
		default:
			return Format{}, fmt.Errorf("%w: %q: unknown option %q", ErrBadFormat, s, p)
		}
	}
	if err := f.Validate(); err != nil {
		return Format{}, fmt.Errorf("%w (in %q)", err, s)
	}
	return f, nil
}

// Validate checks f's parameters. The dense, INT8, KVQuant and CacheGen
// formats take none of their own: they must equal FP16(), Int8(),
// KVQuant2() and CacheGenCodec(), or KVQuantTorch() and CacheGenTorch(), so
// that a valid format's Name parses back to it.
func (f Format) Validate() error {
	switch f.Kind {
	case Dense, INT8, KVQuant, CacheGen:
		canon := [...]Format{FP16(), Int8(), KVQuant2(), CacheGenCodec()}[f.Kind]
		if f.TorchDequant && (f.Kind == KVQuant || f.Kind == CacheGen) {
			canon.TorchDequant = true
		}
		if f != canon {
			return fmt.Errorf("%w: %s takes no parameters (got %+v)", ErrBadFormat, f.Kind, f)
		}
	case HACK:
		if f.Partition <= 0 || f.Partition%16 != 0 || f.Partition > 1<<12 {
			return fmt.Errorf("%w: hack partition %d, want a positive multiple of 16 up to 4096", ErrBadFormat, f.Partition)
		}
		if f.Bits != 2 && f.Bits != 4 && f.Bits != 8 {
			return fmt.Errorf("%w: hack bits %d, want 2, 4 or 8", ErrBadFormat, f.Bits)
		}
		if f.SinkTokens < 0 || f.SinkTokens > 1<<12 {
			return fmt.Errorf("%w: %d sink tokens", ErrBadFormat, f.SinkTokens)
		}
		if f.Layout > Paged {
			return fmt.Errorf("%w: layout %d", ErrBadFormat, f.Layout)
		}
		if f.TorchDequant {
			return fmt.Errorf("%w: hack never dequantizes (TorchDequant)", ErrBadFormat)
		}
	default:
		return fmt.Errorf("%w: unknown kind %d", ErrBadFormat, f.Kind)
	}
	return nil
}

// Check reports whether f can store a's cache: f is valid, a is valid, for
// HACK a's head dim has a channel partition (a multiple of 16 that divides
// it, as hack/cache.py channel_partition_size), and for QuantizedPrefill
// a's parameters are known beyond its embedding (PrefillFLOPs).
func (f Format) Check(a Arch) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	if f.Kind == HACK && channelPart(a.HeadDim, f.Partition) <= 0 {
		return fmt.Errorf("%w: head dim %d of %q has no channel partition for Pi = %d", ErrBadFormat, a.HeadDim, a.Name, f.Partition)
	}
	if f.QuantizedPrefill && a.Params <= int64(a.Vocab)*int64(a.Hidden) {
		return fmt.Errorf("%w: %s needs the parameters of %q beyond its embedding to apportion the prefill (PrefillFLOPs)", ErrBadFormat, f.Name(), a.Name)
	}
	return nil
}

// metaBytes is the size of the artifact's BF16 scales, minima and zeros.
const metaBytes = 2

// StoredBytes is the size of tokens tokens of a's KV cache in format f on
// the decode instance's GPU. It panics if f.Check(a) fails or tokens < 0.
func (f Format) StoredBytes(a Arch, tokens int) int64 {
	f.mustCheck(a, tokens)
	var k consts
	return newPair(&f, &a, &k, false).storedBytes(tokens)
}

// storedBytes is StoredBytes of p's format and architecture.
func (p pair) storedBytes(tokens int) int64 {
	f, a := p.f, p.a
	switch f.Kind {
	case INT8:
		// Per token, layer and KV head: K and V codes of head_dim bytes, each
		// with a 16-bit scale and zero.
		return int64(tokens) * int64(a.Layers) * int64(a.KVHeads) * 2 * (int64(a.HeadDim) + 2*metaBytes)
	case KVQuant:
		return kvquantBytes(a, f, tokens)
	case CacheGen:
		return p.cachegenStoredBytes(tokens)
	case HACK:
		if f.Layout == Paged {
			return p.hackPagedBytes(tokens)
		}
		return p.hackContiguousBytes(tokens)
	}
	return p.k.kvBytes * int64(tokens)
}

// CacheGenWireRatio is the CacheGen-style codec's transferred bytes over the
// BF16 bytes as the artifact measured it: 86 MiB of 576 MiB, 14.9%, for
// Qwen3-8B and a 4,096-token wikitext prompt (Zeyu-ZEYU/HKVQ@fc16e215:
// README.md, E2). Entropy coding depends on the data; Drover takes the
// measured ratio.
const CacheGenWireRatio = 0.149

// TransferBytes is the size of tokens tokens of a's KV cache in format f on
// the link from the prefill to the decode instance: the stored bytes, but
// for CacheGen, which sends its entropy-coded stream. It panics if
// f.Check(a) fails or tokens < 0.
func (f Format) TransferBytes(a Arch, tokens int) int64 {
	f.mustCheck(a, tokens)
	var k consts
	return newPair(&f, &a, &k, false).transferBytes(tokens)
}

// transferBytes is TransferBytes of p's format and architecture.
func (p pair) transferBytes(tokens int) int64 {
	if p.f.Kind == CacheGen {
		return int64(math.Round(CacheGenWireRatio * float64(p.k.kvBytes*int64(tokens))))
	}
	return p.storedBytes(tokens)
}

// Ratio is f's stored bytes over the dense cache's for tokens tokens.
func (f Format) Ratio(a Arch, tokens int) float64 {
	if tokens == 0 {
		return 0
	}
	return float64(f.StoredBytes(a, tokens)) / float64(a.KVBytesPerToken()*int64(tokens))
}

// mustCheck is the check of the exported Format methods: f.Check(a) and
// the token count's range (mustTokens).
func (f Format) mustCheck(a Arch, tokens int) {
	if err := f.Check(a); err != nil {
		panic("kv: " + err.Error())
	}
	mustTokens(tokens)
}

// maxTokens is the largest token count the methods take.
const maxTokens = 1 << 30

// mustTokens panics unless 0 <= tokens <= maxTokens.
func mustTokens(tokens int) {
	if uint(tokens) > maxTokens {
		panic("kv: token count out of range: " + strconv.Itoa(tokens))
	}
}

// channelPart is hack/cache.py channel_partition_size: the largest multiple
// of 16 up to pi that divides headDim, 0 if none.
func channelPart(headDim, pi int) int {
	size := min(pi, headDim)
	for size > 0 && headDim%size != 0 {
		size -= 16
	}
	return max(size, 0)
}

// sumBytes is hack/quant.py sum_dtype: the smallest integer holding the sum
// of n codes of the given width.
func sumBytes(n, bits int) int64 {
	largest := n * (1<<bits - 1)
	switch {
	case largest <= 255:
		return 1
	case largest <= 32767:
		return 2
	}
	return 4
}

// hackSplit splits tokens into HACK's 16-bit sinks, closed (quantized)
// tokens and open tokens, as HackLayerCache.append does, and counts the
// closed blocks (closed / Pi).
func (p pair) hackSplit(tokens int) (sinks, closed, open, blocks int64) {
	f := p.f
	s := min(f.SinkTokens, tokens)
	n := tokens - s
	b := n / f.Partition
	c := b * f.Partition
	return int64(s), int64(c), int64(n - c), int64(b)
}

// hackContiguousBytes is HackLayerCache.nbytes summed over layers: per
// layer and KV head, the packed K and V codes, K's scale and minimum per
// (block, channel), V's per (token, channel partition), K's code sums per
// (token, channel partition) and V's per (block, channel) (the Hugging Face
// cache always keeps both sums), and the sinks and the open block in 16
// bits.
func (p pair) hackContiguousBytes(tokens int) int64 {
	f, a := p.f, p.a
	d, dc := int64(a.HeadDim), p.k.chanParts // dc: d / channel partition
	sinks, closed, open, blocks := p.hackSplit(tokens)
	perHead := 2*closed*d*int64(f.Bits)/8 + // K and V codes
		2*blocks*d*metaBytes + // K scale and minimum
		2*closed*dc*metaBytes + // V scale and minimum
		closed*dc*p.k.sumBytes.keys + // K sums
		blocks*d*p.k.sumBytes.values + // V sums
		2*(sinks+open)*d*int64(a.DTypeBytes) // sinks and open block, K and V
	return perHead * int64(a.Layers) * int64(a.KVHeads)
}

// HACKPageBytes is the size of one page of the artifact's vLLM layout
// (hack/vllm_plugin/layout.py PageLayout.page_bytes): one layer's codes,
// scales, minima and (with summation elimination) sums of Pi tokens over
// all KV heads, each field aligned to 8 bytes, the page to 4 x Pi bytes.
func HACKPageBytes(a Arch, f Format) int64 {
	h, d, pi := int64(a.KVHeads), int64(a.HeadDim), int64(f.Partition)
	c := int64(channelPart(a.HeadDim, f.Partition))
	packed := d * int64(f.Bits) / 8
	// The fields in their order, each 8-byte aligned (an array, not a
	// slice: the simulator sizes caches at every iteration).
	var fields [8]int64
	k := 0
	add := func(n int64) { fields[k] = n; k++ }
	add(h * pi * packed)
	add(h * d * metaBytes)
	add(h * d * metaBytes)
	if f.SummationElimination {
		add(h * pi * (d / c) * sumBytes(int(c), f.Bits))
	}
	add(h * pi * packed)
	add(h * pi * (d / c) * metaBytes)
	add(h * pi * (d / c) * metaBytes)
	if f.SummationElimination {
		add(h * d * sumBytes(f.Partition, f.Bits))
	}
	var off int64
	for _, n := range fields[:k] {
		off = roundUp(off, 8) + n
	}
	return roundUp(off, 4*pi)
}

func roundUp(v, m int64) int64 { return (v + m - 1) / m * m }

// hackPagedBytes counts a page per started block in every layer (vLLM
// allocates the block table by token count) plus the 16-bit side slots of
// the sinks and the open block.
func (p pair) hackPagedBytes(tokens int) int64 {
	f, a := p.f, p.a
	pi := int64(f.Partition)
	pages := (int64(tokens) + pi - 1) / pi
	sinks, _, open, _ := p.hackSplit(tokens)
	side := 2 * (sinks + open) * int64(a.HeadDim) * int64(a.DTypeBytes) * int64(a.KVHeads)
	return (pages*p.k.page + side) * int64(a.Layers)
}

// KVQuantOutlierFraction is the share of every K and V vector the
// KVQuant-style cache keeps in 16 bits (KVQuantConfig.outlier_fraction).
const KVQuantOutlierFraction = 0.01

// kvquantBytes is KVQuantCodes.nbytes summed over layers. Per layer, with
// W = KV heads x head dim elements per token: the sink token's K and V in
// 16 bits; 2-bit K and V codes; V's 16-bit scale and zero per token (K's
// per-channel ones belong to the calibration and are not counted); and the
// outliers in a compressed-row layout: a 16-bit count per token and
// tensor, a 16-bit column and a 16-bit value per outlier. V keeps
// round(W x 1% / 2) per side of every token; K the values beyond its
// calibrated thresholds, which the calibration sets at 1% of the
// calibration data: Drover counts 1% of K's elements.
func kvquantBytes(a *Arch, f *Format, tokens int) int64 {
	w := int64(a.KVHeads) * int64(a.HeadDim)
	s := int64(min(f.SinkTokens, tokens))
	n := int64(tokens) - s
	idx := int64(2)
	if w >= 1<<15 {
		idx = 4
	}
	kOut := int64(math.Round(KVQuantOutlierFraction * float64(n*w)))
	vOut := n * 2 * int64(math.Round(float64(w)*KVQuantOutlierFraction/2))
	perLayer := 2*s*w*int64(a.DTypeBytes) +
		2*n*w*int64(f.Bits)/8 +
		n*2*metaBytes +
		2*n*idx + (kOut+vOut)*(idx+metaBytes)
	return perLayer * int64(a.Layers)
}

// CacheGen-style codec defaults (hack/baselines/cachegen.py CacheGenConfig).
var (
	cgGroup       = 10
	cgKeyLevels   = []int{15, 15, 7}
	cgValueLevels = []int{5, 5, 5}
	cgFirstLayer  = [2]int{255, 15}
)

// cgLevels is CacheGenConfig.levels.
func cgLevels(layer, layers int, value bool) int {
	if layer == 0 {
		if value {
			return cgFirstLayer[1]
		}
		return cgFirstLayer[0]
	}
	sched := cgKeyLevels
	if value {
		sched = cgValueLevels
	}
	return sched[(layer-1)*len(sched)/max(1, layers-1)]
}

// cgCodeBits is cachegen.py code_bits.
func cgCodeBits(levels int) int64 {
	switch {
	case levels <= 4:
		return 2
	case levels <= 16:
		return 4
	}
	return 8
}

// cgLayerBits counts a model of layers layers' layers by the width of
// their key and value codes (cgCodeBits(cgLevels(l, layers, value)) for
// l < layers), in closed form: layer 0 takes cgFirstLayer, the others the
// schedule's entries, cgScheduled layers each. The simulator asks for a cache's size and work at
// every iteration; counting the layers one by one was most of that time.
func cgLayerBits(layers int) (keys, values [9]int) {
	if layers <= 0 {
		return keys, values
	}
	keys[cgCodeBits(cgFirstLayer[0])]++
	values[cgCodeBits(cgFirstLayer[1])]++
	for _, sc := range [2]struct {
		sched []int
		out   *[9]int
	}{{cgKeyLevels, &keys}, {cgValueLevels, &values}} {
		for i, lv := range sc.sched {
			sc.out[cgCodeBits(lv)] += cgScheduled(layers, len(sc.sched), i)
		}
	}
	return keys, values
}

// cgScheduled is how many of layers 1..layers-1 take entry i of a
// schedule of n entries: those with (l-1) n / (layers-1), rounded down,
// equal to i (cgLevels), i.e. k = l-1 in [0, layers-1) with
// i (layers-1) <= k n < (i+1) (layers-1).
func cgScheduled(layers, n, i int) int {
	rest := layers - 1
	if rest <= 0 {
		return 0
	}
	below := func(i int) int { return min(rest, (i*rest+n-1)/n) } // k with k n < i rest
	return below(i+1) - below(i)
}

// cachegenStoredBytes is CacheGenTensor.nbytes over layers, K and V: K as
// an 8-bit anchor (and its 16-bit scale) every 10 tokens and the other
// tokens' codes at the layer's width with a 16-bit scale each; V without
// anchors, every token's codes with a 16-bit scale.
//
// Summed over the layers by code width (cgLayerBits), a token's codes and
// scale take cgBytes' keys bytes in K (but for the anchors) and values in
// V per KV head, worked out once (consts.cgBytes): integer sums, the same as
// summing per layer (TestCGLayerBits).
func (p pair) cachegenStoredBytes(tokens int) int64 {
	a := p.a
	d, n := int64(a.HeadDim), int64(tokens)
	anchors := (n + int64(cgGroup) - 1) / int64(cgGroup)
	perHead := int64(a.Layers)*anchors*(d+metaBytes) + (n-anchors)*p.k.cgBytes.keys + n*p.k.cgBytes.values
	return perHead * int64(a.KVHeads)
}

// cgTokenBytes sums a token's codes and 16-bit scale over layers whose
// keys and values are coded with the widths counted in keys and values,
// per KV head of head dim d.
func cgTokenBytes(d int64, keys, values *[9]int) (k, v int64) {
	for bits := range keys {
		per := d*int64(bits)/8 + metaBytes
		k += int64(keys[bits]) * per
		v += int64(values[bits]) * per
	}
	return k, v
}
