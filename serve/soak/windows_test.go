package soak

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/internal/loadgen"
)

// within reports whether got is a histogram quantile of want: at least
// want, at most loadgen.RelativePrecision above it.
func within(got, want time.Duration) bool {
	return got >= want && float64(got) <= float64(want)*(1+loadgen.RelativePrecision)
}

func TestWindows(t *testing.T) {
	w := NewWindows(10 * time.Second)
	// Window 0: calls due at 0-9.9 s taking 1, 2, ..., 100 ms. The
	// nearest-rank p50 of 1..100 is the 50th value, 50 ms; the p99 the
	// 99th, 99 ms; the max 100 ms.
	for i := 1; i <= 100; i++ {
		w.Record(time.Duration(i-1)*99*time.Millisecond, time.Duration(i)*time.Millisecond, true)
	}
	// Window 1 is empty. Window 2: a call due at 20 s that answered
	// only at 22 s (a stall) counts in window 2 with its 2 s, and two
	// failed calls.
	w.Record(20*time.Second, 2*time.Second, true)
	w.Record(25*time.Second, 0, false)
	w.Record(29999*time.Millisecond, time.Second, false)

	st := w.Stats()
	if len(st) != 3 {
		t.Fatalf("%d windows, want 3: %+v", len(st), st)
	}
	w0 := st[0]
	if w0.Start != 0 || w0.OK != 100 || w0.Errors != 0 || !within(w0.P50, 50*time.Millisecond) ||
		!within(w0.P99, 99*time.Millisecond) || w0.Max != 100*time.Millisecond {
		t.Errorf("window 0 = %+v, want 100 ok, p50 50 ms, p99 99 ms, max 100 ms", w0)
	}
	if w1 := st[1]; w1 != (WindowStat{Start: 10 * time.Second}) {
		t.Errorf("window 1 = %+v, want empty at 10 s", w1)
	}
	if w2 := st[2]; w2.Start != 20*time.Second || w2.OK != 1 || w2.Errors != 2 || w2.P99 != 2*time.Second || w2.Max != 2*time.Second {
		t.Errorf("window 2 = %+v, want 1 ok at 2 s, 2 failed", w2)
	}
	// Overall: 101 answers; the p99's rank is ceil(0.99 x 101) = 100,
	// the 100 ms call; the p50's 51, 51 ms.
	all := w.Overall()
	if all.OK != 101 || all.Errors != 2 || !within(all.P50, 51*time.Millisecond) || !within(all.P99, 100*time.Millisecond) || all.Max != 2*time.Second {
		t.Errorf("overall = %+v, want 101 ok, 2 failed, p50 51 ms, p99 100 ms, max 2 s", all)
	}
}

func TestWindowsNegativeDueIsFirst(t *testing.T) {
	w := NewWindows(time.Second)
	w.Record(-time.Millisecond, time.Millisecond, true)
	if st := w.Stats(); len(st) != 1 || st[0].OK != 1 {
		t.Errorf("stats %+v, want the call in window 0", st)
	}
}
