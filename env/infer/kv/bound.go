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
	// cgKeys and cgValues count CacheGen's layers by the width of their
	// key and value codes (cgLayerBits).
	cgKeys, cgValues [9]int
	// cgBytes is a token's key and value bytes per KV head over those
	// layers (cgTokenBytes).
	cgBytes struct{ keys, values int64 }
	// chanPart is HACK's channel partition (channelPart).
	chanPart int
	// page is HACKPageBytes, for HACK's paged layout.
	page int64
	// block is hackBlock of a decode step (the G query heads of a KV head
	// as rows), prefillBlock that of the quantized prefill (prefillRows).
	block, prefillBlock blockWork
	// torch holds the torch tallies (bindTorch), for KVQuant and CacheGen.
	torch torchTallies
}

// blockWork is hackBlock's result.
type blockWork struct{ vector, int8 float64 }

// Bind checks f against a as Check does and returns the pair bound, for
// pricing many token counts of one format and architecture without
// checking them at every call. The error is Check's.
func (f Format) Bind(a Arch) (*Bound, error) {
	if err := f.Check(a); err != nil {
		return nil, err
	}
	b := bind(f, a)
	b.bindTorch()
	b.name = f.Name()
	return &b, nil
}

// bind works out what f's sizes and work need of a beyond a token count,
// without checking f or a (the callers have) and without the torch
// tallies (bindTorch: Bind, and the checked Work and TorchPasses where
// they need them).
func bind(f Format, a Arch) Bound {
	b := Bound{f: f, a: a}
	switch f.Kind {
	case CacheGen:
		b.cgKeys, b.cgValues = cgLayerBits(a.Layers)
		b.cgBytes.keys, b.cgBytes.values = cgTokenBytes(int64(a.HeadDim), &b.cgKeys, &b.cgValues)
	case HACK:
		b.chanPart = channelPart(a.HeadDim, f.Partition)
		if f.Layout == Paged {
			b.page = HACKPageBytes(a, f)
		}
		d, pi := float64(a.HeadDim), float64(f.Partition)
		np := d / float64(b.chanPart)
		b.block.vector, b.block.int8 = hackBlock(float64(a.GQAGroup()), d, pi, np, f.SummationElimination)
		if f.QuantizedPrefill {
			b.prefillBlock.vector, b.prefillBlock.int8 = hackBlock(prefillRows(a.GQAGroup()), d, pi, np, f.SummationElimination)
		}
	}
	return b
}

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
	return b.storedBytes(tokens)
}

// TransferBytes is Format.TransferBytes of b's format and architecture. It
// panics if tokens < 0 or tokens > 2^30.
func (b *Bound) TransferBytes(tokens int) int64 {
	mustTokens(tokens)
	return b.transferBytes(tokens)
}

// Work is Format.Work of b's format and architecture. It panics if
// tokens < 0 or tokens > 2^30.
func (b *Bound) Work(tokens int) Work {
	mustTokens(tokens)
	return b.work(tokens, true)
}

// Step is the part of Work that a decode step over a cache of tokens
// tokens does (StepBytes, DequantBytes, Dequant, Approx, ApproxINT8), the
// fields done once (Encode, Receive and the Prefill ones) left zero and
// not worked out. It panics if tokens < 0 or tokens > 2^30.
func (b *Bound) Step(tokens int) Work {
	mustTokens(tokens)
	return b.work(tokens, false)
}

// TorchPasses is kv.TorchPasses of b's format and architecture. It panics
// if the format is not KVQuant or CacheGen, if tokens < 0 or
// tokens > 2^30.
func (b *Bound) TorchPasses(tokens int) Passes {
	mustTokens(tokens)
	return b.torchPasses(tokens)
}
