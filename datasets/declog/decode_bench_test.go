package declog

import (
	"fmt"
	"testing"
)

// BenchmarkDecode measures reading a log file of n records (one row
// group, as Encode writes it), half decisions and half outcomes.
//
//	go test ./datasets/declog -run '^$' -bench 'Decode$' -count 6 | tee new.txt; benchstat old.txt new.txt
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			data, err := Encode(makeRecords(n))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Decode(data, "bench.parquet"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
