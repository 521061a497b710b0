package datasets

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadParquet measures reading a job table of 100k synthetic
// jobs written by WriteParquet.
//
//	go test ./datasets -run '^$' -bench 'ReadParquet$' -count 6 | tee new.txt; benchstat old.txt new.txt
func BenchmarkReadParquet(b *testing.B) {
	const n = 100000
	wl := Synthetic(DefaultParams(), n, rand.NewPCG(1, 1))
	var buf bytes.Buffer
	if err := WriteParquet(&buf, wl); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := ReadParquet(buf.Bytes(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
}
