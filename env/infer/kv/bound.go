package kv

// Bound is a Format bound to an Arch it was checked against (Format.Bind):
// its methods are the Format methods of the same names for that
// architecture, without checking the format and the architecture again,
// and with what they need of the pair beyond a token count (CacheGen's
// layers by code width and the passes of its and KVQuant's PyTorch
// dequantization, HACK's channel partition, page size and per-block
// kernel work) worked out once. They give the same numbers, bit for bit,
// as the Format methods, which bind the pair the same way at every call
// after checking it (TestBoundMatchesFormat).
//
// The simulator (env/infer) prices every request's cache at every decode
// iteration it runs in through a Bound (Step): the package doc's section
// "Bound: checked once" gives the measured reason.
//
// A Bound is read-only once made: one may serve any number of goroutines.
// The zero Bound is not usable.
type Bound struct {
	f    Format
	a    Arch
	name string // f.Name()
	k    consts
	t    torchTallies // for KVQuant and CacheGen
}

// consts is what a format's sizes and work need of it and an architecture
// beyond a token count and their own fields, worked out once per pair (by
// Bind; by the checked Format methods at every call).
type consts struct {
	// kvBytes is Arch.KVBytesPerToken, kvElements Arch.KVElementsPerToken.
	kvBytes    int64
	kvElements float64
	// cgBytes is a CacheGen token's key and value bytes per KV head over
	// the layers (cgTokenBytes).
	cgBytes struct{ keys, values int64 }
	// chanParts is HACK's head dim over its channel partition
	// (channelPart), sumBytes the width of a K sum (of a channel
	// partition's codes) and of a V sum (of Pi codes; sumBytes), page its
	// HACKPageBytes in the paged layout.
	chanParts int64
	sumBytes  struct{ keys, values int64 }
	page      int64
	// block is HACK's hackBlock at a decode step (the G query heads of a
	// KV head as rows), prefillBlock at the quantized prefill
	// (prefillRows); only for Work.
	block, prefillBlock blockWork
}

// blockWork is hackBlock's result.
type blockWork struct{ vector, int8 float64 }

// pair is a format and an architecture with their consts and, where
// TorchPasses is wanted, torch tallies: the size and work formulas are its
// methods. It points into a Bound, or, for the checked Format methods,
// at their own arguments, so that neither copies them.
type pair struct {
	f *Format
	a *Arch
	k *consts
	t *torchTallies
}

// newPair fills k for f and a (and for work, the HACK block work that
// only Work needs) and returns their pair, without torch tallies. It
// checks nothing: its callers have.
func newPair(f *Format, a *Arch, k *consts, work bool) pair {
	k.kvBytes, k.kvElements = a.KVBytesPerToken(), float64(a.KVElementsPerToken())
	switch f.Kind {
	case CacheGen:
		keys, values := cgLayerBits(a.Layers)
		k.cgBytes.keys, k.cgBytes.values = cgTokenBytes(int64(a.HeadDim), &keys, &values)
	case HACK:
		c := channelPart(a.HeadDim, f.Partition)
		k.chanParts = int64(a.HeadDim) / int64(c)
		k.sumBytes.keys, k.sumBytes.values = sumBytes(c, f.Bits), sumBytes(f.Partition, f.Bits)
		if f.Layout == Paged {
			k.page = HACKPageBytes(*a, *f)
		}
		if work {
			d, pi := float64(a.HeadDim), float64(f.Partition)
			np := d / float64(c)
			k.block.vector, k.block.int8 = hackBlock(float64(a.GQAGroup()), d, pi, np, f.SummationElimination)
			if f.QuantizedPrefill {
				k.prefillBlock.vector, k.prefillBlock.int8 = hackBlock(prefillRows(a.GQAGroup()), d, pi, np, f.SummationElimination)
			}
		}
	}
	return pair{f: f, a: a, k: k}
}

// Bind checks f against a as Check does and returns the pair bound, for
// pricing many token counts of one format and architecture without
// checking them at every call. The error is Check's.
func (f Format) Bind(a Arch) (*Bound, error) {
	if err := f.Check(a); err != nil {
		return nil, err
	}
	b := &Bound{f: f, a: a, name: f.Name()}
	newPair(&b.f, &b.a, &b.k, true)
	b.t.init(&b.f, &b.a)
	return b, nil
}

// pair is b's pair, with its torch tallies.
func (b *Bound) pair() pair { return pair{f: &b.f, a: &b.a, k: &b.k, t: &b.t} }

// Format is the bound format.
func (b *Bound) Format() Format { return b.f }

// Name is the bound format's Name, made once by Bind.
func (b *Bound) Name() string { return b.name }

// Arch is the bound architecture.
func (b *Bound) Arch() Arch { return b.a }

// StoredBytes is Format.StoredBytes of b's format and architecture. It
// panics if tokens < 0 or tokens > 2^30.
func (b *Bound) StoredBytes(tokens int) int64 {
	mustTokens(tokens)
	return b.pair().storedBytes(tokens)
}

// TransferBytes is Format.TransferBytes of b's format and architecture. It
// panics if tokens < 0 or tokens > 2^30.
func (b *Bound) TransferBytes(tokens int) int64 {
	mustTokens(tokens)
	return b.pair().transferBytes(tokens)
}

// Work is Format.Work of b's format and architecture. It panics if
// tokens < 0 or tokens > 2^30.
func (b *Bound) Work(tokens int) Work {
	mustTokens(tokens)
	return b.pair().work(tokens)
}

// StepCost is what one decode step over a request's cache adds in its
// format: Work's per-step fields, as the simulator sums them. Four fields,
// so that it travels in registers (the simulator asks for one per request
// and decode iteration).
type StepCost struct {
	// Bytes is Work.StepBytes, the stored cache the step reads.
	Bytes int64
	// DequantBytes is Work.DequantBytes.
	DequantBytes int64
	// Ops is Work.Dequant + Work.Approx, the step's elementwise operations
	// (one of the two is zero in every format).
	Ops float64
	// INT8 is Work.ApproxINT8.
	INT8 float64
}

// Step is what a decode step over a cache of tokens tokens adds: the
// fields of Work(tokens) that every step does, the ones done once (Encode,
// Receive and the Prefill ones) not worked out. It panics if tokens < 0 or
// tokens > 2^30.
func (b *Bound) Step(tokens int) StepCost {
	mustTokens(tokens)
	stepBytes, dequantBytes, dequant, approx, approxINT8 := b.pair().step(tokens)
	return StepCost{Bytes: stepBytes, DequantBytes: dequantBytes, Ops: dequant + approx, INT8: approxINT8}
}

// TorchPasses is kv.TorchPasses of b's format and architecture. It panics
// if the format is not KVQuant or CacheGen, if tokens < 0 or
// tokens > 2^30.
func (b *Bound) TorchPasses(tokens int) Passes {
	mustTokens(tokens)
	return b.pair().torchPasses(tokens)
}
