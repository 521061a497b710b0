package pqlog

import "sync"

// warmZstd has the encoder of every page (zstdEncoder) compress a page's
// worth of varied bytes, so that its tables (over 1 MB) are set up and
// mostly touched now (a queued Writer calls it at NewWriter), not in the
// middle of serving: the first row group of a fresh process held the
// processor 6-7 ms (BenchmarkServerLoad's trace), mostly faulting in
// those tables.
func warmZstd() {
	warm.Do(func() {
		src := make([]byte, pageSize)
		x := uint64(0x9e3779b97f4a7c15)
		for i := range src {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			src[i] = byte(x % 24) // compressible, but not trivially
		}
		zstdEncoder().EncodeAll(src, nil)
	})
}

var warm sync.Once
