package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// The histogram's buckets, HdrHistogram-style: values below linearMax
// nanoseconds have a bucket each; above, every power-of-two range
// [2^k, 2^(k+1)) is cut into subCount equal buckets, so a bucket is at
// most 1/subCount (0.78%) of its lowest value wide.
const (
	subBits    = 7
	subCount   = 1 << subBits // buckets per power of two
	linearMax  = 2 * subCount // values below this are exact
	numBuckets = linearMax + (63-(subBits+1))*subCount
)

// RelativePrecision is the histogram's worst relative error: a quantile
// it reports is at least the exact one and at most this fraction above it.
const RelativePrecision = 1.0 / subCount

// Histogram counts durations in log-spaced buckets with about 1% relative
// precision (RelativePrecision), the way HdrHistogram does with two
// significant digits: recording is an index computation and an increment,
// the memory is fixed (58 KB) whatever the range (1 ns to 292 years), and
// two histograms merge by adding their counts, so each load-generating
// goroutine keeps its own and the report merges them. The zero value is
// not usable; call NewHistogram. A Histogram is not safe for concurrent
// use.
type Histogram struct {
	counts   []uint64
	n        uint64
	sum      float64 // nanoseconds
	min, max int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]uint64, numBuckets), min: math.MaxInt64}
}

// bucketOf returns the index of v's bucket; v >= 0.
func bucketOf(v int64) int {
	if v < linearMax {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - (subBits + 1) // >= 1: v >> e is in [subCount, 2*subCount)
	return linearMax + (e-1)*subCount + int(uint64(v)>>e) - subCount
}

// bucketRange returns the lowest and the highest value of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < linearMax {
		return int64(i), int64(i)
	}
	j := i - linearMax
	e := j/subCount + 1
	lo = int64(j%subCount+subCount) << e
	return lo, lo + 1<<e - 1
}

// Record adds one duration; a negative one counts as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += float64(v)
	h.min = min(h.min, v)
	h.max = max(h.max, v)
}

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count returns the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Min returns the smallest duration recorded, exactly (0 when empty).
func (h *Histogram) Min() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.min)
}

// Max returns the largest duration recorded, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the mean duration, exactly up to float64 rounding (0 when
// empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the q-quantile (q in [0, 1]; 0.99 is p99): the
// smallest recorded duration v such that at least ceil(q*Count) of the
// recorded durations are <= v, rounded up to the highest value of v's
// bucket (as HdrHistogram's highest equivalent value) but never above
// Max. So it is never below the exact quantile and at most
// RelativePrecision above it. Quantile(0) is Min, Quantile(1) Max; an
// empty histogram gives 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q <= 0 {
		return time.Duration(h.min)
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			_, hi := bucketRange(i)
			return time.Duration(min(hi, h.max))
		}
	}
	return time.Duration(h.max) // unreachable: cum reaches n
}

// CountAbove returns how many recorded durations are above d, counting
// the whole of d's bucket as not above (so it may miss durations up to
// RelativePrecision above d).
func (h *Histogram) CountAbove(d time.Duration) uint64 {
	b := bucketOf(max(int64(d), 0))
	var n uint64
	for _, c := range h.counts[b+1:] {
		n += c
	}
	return n
}

// TailPoint is one point of a latency distribution's tail: the fraction
// of the recorded durations above Ms milliseconds.
type TailPoint struct {
	Ms    float64 `json:"ms"`
	Above float64 `json:"above"`
}

// Tail returns the distribution's tail, one point per non-empty bucket in
// ascending order: the bucket's highest value (Max for the last) and the
// fraction of the durations above it (0 for the last). On log-log axes it
// shows every percentile at once: p99 is where the line crosses 0.01.
// An empty histogram gives none.
func (h *Histogram) Tail() []TailPoint {
	if h.n == 0 {
		return nil
	}
	var out []TailPoint
	var cum uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		cum += c
		_, hi := bucketRange(i)
		out = append(out, TailPoint{Ms: float64(min(hi, h.max)) / 1e6, Above: float64(h.n-cum) / float64(h.n)})
		if cum == h.n {
			break
		}
	}
	return out
}

// Summary is a histogram's usual percentiles in milliseconds, for
// reports and JSON.
type Summary struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99.9_ms"`
	Max   float64 `json:"max_ms"`
}

// Summary returns the count, mean, p50, p90, p99, p99.9 and max.
func (h *Histogram) Summary() Summary {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return Summary{Count: h.n, Mean: ms(h.Mean()), P50: ms(h.Quantile(0.5)), P90: ms(h.Quantile(0.9)),
		P99: ms(h.Quantile(0.99)), P999: ms(h.Quantile(0.999)), Max: ms(h.Max())}
}
