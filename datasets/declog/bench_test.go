package declog

import (
	"fmt"
	"math/bits"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppend measures the Writer's cost per record: appending,
// row-group writes and file seals (every 100k records) included, with the
// queue (Close, which drains it, inside the timing; records the full queue
// dropped reported) and without (queue=0: on the caller's goroutine).
//
//	go test ./datasets/declog -run '^$' -bench 'Append$' -count 6 | tee new.txt; benchstat old.txt new.txt
func BenchmarkAppend(b *testing.B) {
	recs := makeRecords(1024)
	for _, queue := range []int{DefaultQueue, 0} {
		b.Run(fmt.Sprintf("queue=%d", queue), func(b *testing.B) {
			w, err := NewWriter(b.TempDir(), WithQueue(queue))
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
			b.ReportMetric(float64(i-int(w.Dropped()))/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(w.Dropped())/float64(i), "dropped/op")
		})
	}
}

// latencyHist is a log-linear histogram of durations (16 sub-buckets per
// power of two, HdrHistogram-style: relative error under 6.25%).
type latencyHist struct {
	counts [64 * 16]int64
	n      int64
	max    time.Duration
}

func (h *latencyHist) bucket(d time.Duration) int {
	v := uint64(d)
	if v < 16 {
		return int(v)
	}
	e := bits.Len64(v) - 5 // v >> e is in [16, 32)
	return e*16 + int(v>>e)
}

// lower returns the smallest duration of bucket i.
func (h *latencyHist) lower(i int) time.Duration {
	if i < 32 {
		return time.Duration(i)
	}
	e := i/16 - 1
	return time.Duration(uint64(i-e*16) << e)
}

func (h *latencyHist) add(d time.Duration) {
	h.counts[h.bucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

func (h *latencyHist) merge(o *latencyHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the lower bound of the bucket holding quantile q.
func (h *latencyHist) quantile(q float64) time.Duration {
	rank := int64(q * float64(h.n))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen > rank {
			return h.lower(i)
		}
	}
	return h.max
}

// BenchmarkAppendLatency measures the latency of one Append call while
// several goroutines append at a fixed total rate (an open-loop load like
// the server's Place calls, each goroutine on its own schedule), and
// reports its p50, p99, p99.9 and maximum in nanoseconds, plus the records
// the Writer dropped per op. Issue 18: row groups encoded under the lock
// stall every concurrent caller for the encoding's duration.
//
//	go test ./datasets/declog -run '^$' -bench AppendLatency -benchtime 100000x
func BenchmarkAppendLatency(b *testing.B) {
	recs := makeRecords(1024)
	for _, tt := range []struct {
		writers int
		rate    float64 // records per second, all writers together
	}{{4, 20_000}, {16, 50_000}} {
		b.Run(fmt.Sprintf("writers=%d/rate=%.0f", tt.writers, tt.rate), func(b *testing.B) {
			w, err := NewWriter(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			period := time.Duration(float64(time.Second) * float64(tt.writers) / tt.rate)
			var all latencyHist
			var mu sync.Mutex
			var wg sync.WaitGroup
			each := b.N/tt.writers + 1
			b.ResetTimer()
			for g := range tt.writers {
				wg.Go(func() {
					var h latencyHist
					start := time.Now().Add(time.Duration(g) * period / time.Duration(tt.writers))
					for i := range each {
						if d := time.Until(start.Add(time.Duration(i) * period)); d > 0 {
							time.Sleep(d)
						}
						t0 := time.Now()
						if err := w.Append(recs[(g*each+i)%len(recs)]); err != nil {
							b.Error(err)
							return
						}
						h.add(time.Since(t0))
					}
					mu.Lock()
					all.merge(&h)
					mu.Unlock()
				})
			}
			wg.Wait()
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(all.quantile(0.5)), "p50-ns")
			b.ReportMetric(float64(all.quantile(0.99)), "p99-ns")
			b.ReportMetric(float64(all.quantile(0.999)), "p99.9-ns")
			b.ReportMetric(float64(all.max), "max-ns")
			b.ReportMetric(float64(w.Dropped())/float64(all.n), "dropped/op")
		})
	}
}
