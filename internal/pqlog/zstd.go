package pqlog

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// The logs' files are zstd-compressed, and arrow-go compresses every page
// with an encoder from a sync.Pool, which the garbage collector empties:
// at the decision log's rate the collector runs several times between two
// row groups, so a row group often made a new encoder, whose tables (over
// 1 MB of fresh pages) took 5-8 ms to set up on the benchmark machine,
// holding the processor. init replaces arrow-go's zstd codec (as
// compress.RegisterCodec's documentation invites, at init) with keptZstd,
// which keeps one default-level encoder for good and otherwise delegates:
// the same encoder options, hence the same bytes (TestGoldenBytes). The
// process keeps that encoder's memory; the peak heap of the log at 10,000
// records/s still fell (BenchmarkServerLoad: 13.5-13.8 -> 10.9-11.5 MB).
func init() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // no zstd: nothing to keep
	}
	orig, ok := c.(zstdCodec)
	if !ok {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &keptZstd{zstdCodec: orig})
}

// zstdCodec is what arrow-go's zstd codec implements.
type zstdCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

// keptZstd is arrow-go's zstd codec with one encoder of the default level
// kept (see init).
type keptZstd struct {
	zstdCodec
	mu  sync.Mutex
	enc *zstd.Encoder
}

// EncodeLevel implements compress.Codec.
func (k *keptZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if level != compress.DefaultCompressionLevel || !k.mu.TryLock() {
		return k.zstdCodec.EncodeLevel(dst, src, level)
	}
	defer k.mu.Unlock()
	if k.enc == nil {
		// arrow-go's pooled encoder's options (parquet/compress/zstd.go).
		enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			return k.zstdCodec.EncodeLevel(dst, src, level)
		}
		k.enc = enc
	}
	return k.enc.EncodeAll(src, dst[:0])
}

// warmZstd makes the kept encoder and has it compress a page's worth of
// varied bytes, so that its tables are set up and mostly touched now (a
// queued Writer calls it at NewWriter), not in the middle of serving:
// the first row group of a fresh process held the processor 6-7 ms
// (BenchmarkServerLoad's trace), mostly faulting in those tables.
func warmZstd() {
	warm.Do(func() {
		c, err := compress.GetCodec(compress.Codecs.Zstd)
		if err != nil {
			return
		}
		src := make([]byte, 16<<10)
		x := uint64(0x9e3779b97f4a7c15)
		for i := range src {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			src[i] = byte(x % 24) // compressible, but not trivially
		}
		c.EncodeLevel(nil, src, compress.DefaultCompressionLevel)
	})
}

var warm sync.Once
