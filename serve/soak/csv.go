package soak

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"
)

// WriteSamplesCSV writes the samples as CSV: t_s (from the soak's
// start), phase, goroutines, rss_mib, heap_mib, fds, live_jobs,
// live_nodes, cpu_s (the server's CPU time so far), loadavg1 (the
// machine's), place_served and place_served_within (the server's count
// of Place calls on the client's listener, and of those within the
// p99 bound, so far).
func WriteSamplesCSV(w io.Writer, samples []Sample) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t_s", "phase", "goroutines", "rss_mib", "heap_mib", "fds", "live_jobs", "live_nodes", "cpu_s", "loadavg1", "place_served", "place_served_within"})
	for _, s := range samples {
		cw.Write([]string{f3(s.At.Seconds()), s.Phase, f0(s.Goroutines), f3(s.RSS / (1 << 20)), f3(s.Heap / (1 << 20)),
			f0(s.FDs), f0(s.LiveJobs), f0(s.LiveNodes), f3(s.CPU), fmt.Sprintf("%.2f", s.Load1), f0(s.PlaceServed), f0(s.PlaceServedWithin)})
	}
	cw.Flush()
	return cw.Error()
}

// WritePlaceCSV writes the run's Place windows as CSV: t_s (the
// window's end from the soak's start), ok, failed, p50_ms, p99_ms,
// max_ms.
func WritePlaceCSV(w io.Writer, res Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t_s", "ok", "failed", "p50_ms", "p99_ms", "max_ms"})
	for _, s := range res.Windows {
		cw.Write([]string{f3(res.WindowEnd(s).Seconds()), strconv.FormatUint(s.OK, 10), strconv.FormatUint(s.Errors, 10),
			f3(float64(s.P50) / 1e6), f3(float64(s.P99) / 1e6), f3(float64(s.Max) / 1e6)})
	}
	cw.Flush()
	return cw.Error()
}

// WindowEnd returns the end of window s from the soak's start.
func (res Result) WindowEnd(s WindowStat) time.Duration {
	return res.RunStart + s.Start + res.Window
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }
