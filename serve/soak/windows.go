package soak

import (
	"sync"
	"time"

	"github.com/drover-sched/drover/internal/loadgen"
)

// Windows holds a client's call latencies in consecutive windows of a
// fixed width, each call in the window of its intended send time (not of
// its answer), so a stall shows in the window whose calls it delayed and
// a call that waited counts its wait (coordinated omission). Failed calls
// are counted per window, without a latency. It is safe for concurrent
// use.
type Windows struct {
	width time.Duration
	mu    sync.Mutex
	hists []*loadgen.Histogram
	errs  []uint64
}

// NewWindows returns empty windows of the given width (> 0).
func NewWindows(width time.Duration) *Windows {
	if width <= 0 {
		panic("soak: window width must be positive")
	}
	return &Windows{width: width}
}

// Record counts one call due at due (from the start of the schedule)
// that took latency from due to its answer; ok is false for a failed
// call, whose latency is not recorded.
func (w *Windows) Record(due, latency time.Duration, ok bool) {
	i := int(max(due, 0) / w.width)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.hists) <= i {
		w.hists = append(w.hists, loadgen.NewHistogram())
		w.errs = append(w.errs, 0)
	}
	if ok {
		w.hists[i].Record(latency)
	} else {
		w.errs[i]++
	}
}

// WindowStat summarises the calls due in one window (or in all of them).
type WindowStat struct {
	// Start is the window's start from the schedule's start.
	Start time.Duration
	// OK and Errors count the successful and the failed calls.
	OK, Errors uint64
	// P50, P99 and Max are the successful calls' latencies from their
	// intended send times (0 when there were none); quantiles are
	// loadgen.Histogram's, at most loadgen.RelativePrecision above the
	// exact ones.
	P50, P99, Max time.Duration
}

// stat summarises h and errs.
func stat(start time.Duration, h *loadgen.Histogram, errs uint64) WindowStat {
	return WindowStat{Start: start, OK: h.Count(), Errors: errs,
		P50: h.Quantile(0.50), P99: h.Quantile(0.99), Max: h.Max()}
}

// Stats returns every window from the first to the last that holds a
// call, in order (empty windows between them included).
func (w *Windows) Stats() []WindowStat {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]WindowStat, len(w.hists))
	for i, h := range w.hists {
		out[i] = stat(time.Duration(i)*w.width, h, w.errs[i])
	}
	return out
}

// Overall returns the summary of every call in every window.
func (w *Windows) Overall() WindowStat {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := loadgen.NewHistogram()
	var errs uint64
	for i, h := range w.hists {
		all.Merge(h)
		errs += w.errs[i]
	}
	return stat(0, all, errs)
}
