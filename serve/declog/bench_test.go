package declog

import "testing"

// BenchmarkAppend measures the Writer's cost per record: appending,
// row-group writes and file seals (every 100k records) included.
//
//	go test ./serve/declog -run '^$' -bench Append -count 6 | tee new.txt; benchstat old.txt new.txt
func BenchmarkAppend(b *testing.B) {
	recs := makeRecords(1024)
	w, err := NewWriter(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := w.Append(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "records/s")
}
