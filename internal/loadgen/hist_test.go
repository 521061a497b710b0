package loadgen

import (
	"math"
	mathrand "math/rand"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBuckets checks the bucket edges worked by hand: values below 256 ns
// are exact; from 256 a power of two [2^k, 2^(k+1)) has 128 buckets of
// 2^(k-7) ns.
func TestBuckets(t *testing.T) {
	tests := []struct {
		v      int64
		lo, hi int64
	}{
		{0, 0, 0},
		{255, 255, 255},
		{256, 256, 257},    // [256, 512): width 2
		{257, 256, 257},    //
		{511, 510, 511},    //
		{512, 512, 515},    // [512, 1024): width 4
		{1000, 1000, 1003}, // 1000 = 250*4
		// 1 ms: 2^19 <= 1e6 < 2^20, width 2^12; 1e6>>12 = 244.
		{1_000_000, 244 << 12, 245<<12 - 1},
		// 10 ms: 2^23 <= 1e7 < 2^24, width 2^16; 1e7>>16 = 152.
		{10_000_000, 152 << 16, 153<<16 - 1},
		{1<<63 - 1, 255 << 55, 1<<63 - 1},
	}
	for _, tt := range tests {
		b := bucketOf(tt.v)
		lo, hi := bucketRange(b)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("bucket of %d: [%d, %d], want [%d, %d]", tt.v, lo, hi, tt.lo, tt.hi)
		}
		if b >= numBuckets {
			t.Errorf("bucket of %d: %d >= %d buckets", tt.v, b, numBuckets)
		}
	}
	// Consecutive buckets tile the values.
	for i := 1; i < numBuckets; i++ {
		_, hi := bucketRange(i - 1)
		lo, _ := bucketRange(i)
		if lo != hi+1 {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, lo, i-1, hi)
		}
	}
}

func TestHistogram(t *testing.T) {
	type want struct {
		Count                               uint64
		Min, Mean, P50, P90, P99, P999, Max time.Duration
	}
	tests := []struct {
		name   string
		values []time.Duration
		want   want
	}{
		{name: "empty", want: want{}},
		{
			// 1..100 ns, all exact: the q-quantile is the ceil(100q)-th value.
			name:   "1..100ns",
			values: seq(1, 100),
			want:   want{Count: 100, Min: 1, Mean: 50, P50: 50, P90: 90, P99: 99, P999: 100, Max: 100},
		},
		{
			// 1000 and 1001 share the bucket [1000, 1003]; p50 (the 2nd of 3)
			// is reported as the bucket's top, 1003. Mean 7001/3 = 2333.67.
			name:   "one bucket rounds up",
			values: []time.Duration{1000, 1001, 5000},
			want:   want{Count: 3, Min: 1000, Mean: 2333, P50: 1003, P90: 5000, P99: 5000, P999: 5000, Max: 5000},
		},
		{
			// 99 at 1 ms and one at 10 ms: p99 is the 99th value, 1 ms, in
			// [999424, 1003519]; p99.9 the 100th, 10 ms, whose bucket's top
			// (10027007) is above the max, so the max.
			name:   "1ms x99, 10ms",
			values: append(repeat(time.Millisecond, 99), 10*time.Millisecond),
			want:   want{Count: 100, Min: time.Millisecond, Mean: 1090 * time.Microsecond, P50: 1003519, P90: 1003519, P99: 1003519, P999: 10 * time.Millisecond, Max: 10 * time.Millisecond},
		},
		{
			name:   "negative is zero",
			values: []time.Duration{-5, 0},
			want:   want{Count: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram()
			for _, v := range tt.values {
				h.Record(v)
			}
			got := want{Count: h.Count(), Min: h.Min(), Mean: h.Mean(), P50: h.Quantile(0.5), P90: h.Quantile(0.9),
				P99: h.Quantile(0.99), P999: h.Quantile(0.999), Max: h.Max()}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want,+got)\n%s", d)
			}
		})
	}
}

func TestSummaryAndCountAbove(t *testing.T) {
	h := NewHistogram()
	for _, v := range append(repeat(time.Millisecond, 99), 10*time.Millisecond) {
		h.Record(v)
	}
	want := Summary{Count: 100, Mean: 1.09, P50: 1.003519, P90: 1.003519, P99: 1.003519, P999: 10, Max: 10}
	if d := cmp.Diff(want, h.Summary()); d != "" {
		t.Errorf("Summary (-want,+got)\n%s", d)
	}
	for _, tt := range []struct {
		d    time.Duration
		want uint64
	}{{0, 100}, {time.Millisecond, 1}, {1003519, 1}, {1003520, 1}, {10 * time.Millisecond, 0}} {
		if got := h.CountAbove(tt.d); got != tt.want {
			t.Errorf("CountAbove(%d) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

// TestQuantileAgainstSort checks Quantile against the exact quantile of
// the sorted values (the naive version): never below it, and at most
// RelativePrecision above it; and that merging per-part histograms gives
// the histogram of the whole.
func TestQuantileAgainstSort(t *testing.T) {
	check := func(seed uint64, n uint16, parts uint8) bool {
		rng := rand.New(rand.NewPCG(seed, 1))
		vals := make([]time.Duration, int(n)+1)
		hs := make([]*Histogram, int(parts)%5+1)
		for i := range hs {
			hs[i] = NewHistogram()
		}
		whole := NewHistogram()
		for i := range vals {
			// Log-uniform from 1 ns to about 100 s.
			vals[i] = time.Duration(rng.ExpFloat64() * float64(int64(1)<<rng.IntN(37)))
			hs[i%len(hs)].Record(vals[i])
			whole.Record(vals[i])
		}
		merged := NewHistogram()
		for _, h := range hs {
			merged.Merge(h)
		}
		slices.Sort(vals)
		for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
			rank := int(float64(len(vals))*q + 0.999999999)
			exact := vals[max(rank, 1)-1]
			got := merged.Quantile(q)
			if got < exact || float64(got-exact) > float64(exact)*RelativePrecision {
				t.Logf("seed %d, n %d: q %g: got %d, exact %d", seed, len(vals), q, got, exact)
				return false
			}
			if whole.Quantile(q) != got {
				t.Logf("seed %d: q %g: merged %d, whole %d", seed, q, got, whole.Quantile(q))
				return false
			}
		}
		return merged.Min() == vals[0] && merged.Max() == vals[len(vals)-1] && merged.Count() == uint64(len(vals))
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 50, Rand: mathrand.New(mathrand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}

func seq(from, to time.Duration) []time.Duration {
	var s []time.Duration
	for v := from; v <= to; v++ {
		s = append(s, v)
	}
	return s
}

func repeat(d time.Duration, n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = d
	}
	return s
}

// TestTail: 90 durations of 1 ms, 9 of 2 ms and one of 10 ms give three
// points, at each value's bucket (within RelativePrecision above it, the
// last exactly at Max) with 10%, 1% and none of the durations above.
func TestTail(t *testing.T) {
	h := NewHistogram()
	if h.Tail() != nil {
		t.Fatal("an empty histogram has a tail")
	}
	for range 90 {
		h.Record(time.Millisecond)
	}
	for range 9 {
		h.Record(2 * time.Millisecond)
	}
	h.Record(10 * time.Millisecond)
	got := h.Tail()
	want := []TailPoint{{Ms: 1, Above: 0.10}, {Ms: 2, Above: 0.01}, {Ms: 10, Above: 0}}
	if len(got) != len(want) {
		t.Fatalf("tail %v, want 3 points like %v", got, want)
	}
	for i, p := range got {
		if p.Ms < want[i].Ms || p.Ms > want[i].Ms*(1+RelativePrecision) || math.Abs(p.Above-want[i].Above) > 1e-12 {
			t.Errorf("point %d: %+v, want %+v (ms up to %.2f%% above)", i, p, want[i], 100*RelativePrecision)
		}
	}
	if got[2].Ms != 10 {
		t.Errorf("last point at %v ms, want Max, 10", got[2].Ms)
	}
}
