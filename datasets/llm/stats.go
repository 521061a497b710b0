package llm

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"
)

// Stats summarises a trace, for a user to check what was read (a `drover
// trace inspect` of request traces would print it).
type Stats struct {
	Name   string // Trace.Name
	Format Format // Trace.Format
	// Origin is the trace's absolute start (Trace.Origin), zero if none.
	Origin   time.Time
	Requests int // requests in the trace
	Skips        // rows the reader left out
	// FirstArrival and LastArrival bound the arrivals, in seconds; Span
	// is their difference.
	FirstArrival, LastArrival, Span float64
	// Rate is the mean arrival rate over the span, requests per second:
	// (Requests-1)/Span, the inverse of the mean gap; 0 with fewer than
	// two requests or a zero span.
	Rate float64
	// Prompt and Output summarise the token counts.
	Prompt, Output TokenStats
}

// TokenStats summarises token counts: their mean, nearest-rank
// percentiles (the smallest count with at least that share of requests
// at or below it) and maximum.
type TokenStats struct {
	Mean               float64 // tokens per request
	P50, P90, P99, Max int     // nearest-rank percentiles and maximum
	Total              int64   // tokens of all requests
}

// Inspect computes the Stats of tr.
func Inspect(tr *Trace) Stats {
	rs := tr.Requests
	s := Stats{Name: tr.Name, Format: tr.Format, Origin: tr.Origin, Requests: len(rs), Skips: tr.Skips}
	if len(rs) == 0 {
		return s
	}
	s.FirstArrival, s.LastArrival = math.Inf(1), math.Inf(-1)
	prompts := make([]int, len(rs))
	outputs := make([]int, len(rs))
	for i, r := range rs {
		s.FirstArrival = math.Min(s.FirstArrival, r.Arrival)
		s.LastArrival = math.Max(s.LastArrival, r.Arrival)
		prompts[i], outputs[i] = r.Prompt, r.Output
	}
	s.Span = s.LastArrival - s.FirstArrival
	if len(rs) > 1 && s.Span > 0 {
		s.Rate = float64(len(rs)-1) / s.Span
	}
	s.Prompt, s.Output = tokenStats(prompts), tokenStats(outputs)
	return s
}

// tokenStats summarises xs (not empty), sorting it.
func tokenStats(xs []int) TokenStats {
	slices.Sort(xs)
	var t TokenStats
	for _, x := range xs {
		t.Total += int64(x)
	}
	rank := func(q float64) int {
		i := int(math.Ceil(q*float64(len(xs)))) - 1
		return xs[max(0, min(i, len(xs)-1))]
	}
	t.Mean = float64(t.Total) / float64(len(xs))
	t.P50, t.P90, t.P99, t.Max = rank(0.5), rank(0.9), rank(0.99), xs[len(xs)-1]
	return t
}

// WriteText prints s as an aligned, human-readable table.
func (s Stats) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("trace\t%s\n", s.Name)
	p("format\t%s\n", s.Format)
	if !s.Origin.IsZero() {
		p("origin\t%s\n", s.Origin.Format("2006-01-02 15:04:05.999999999 MST"))
	}
	p("requests\t%d\n", s.Requests)
	if s.Skipped > 0 {
		p("skipped\t%d\n", s.Skipped)
		keys := make([]string, 0, len(s.SkipReasons))
		for k := range s.SkipReasons {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p("  %s\t%d\n", k, s.SkipReasons[k])
		}
	}
	if s.Requests == 0 {
		return tw.Flush()
	}
	p("arrivals\t%g .. %g s (span %g s)\n", s.FirstArrival, s.LastArrival, s.Span)
	p("rate\t%.3f req/s\n", s.Rate)
	p("tokens\tmean\tp50\tp90\tp99\tmax\n")
	for _, t := range []struct {
		name string
		s    TokenStats
	}{{"  prompt", s.Prompt}, {"  output", s.Output}} {
		p("%s\t%.1f\t%d\t%d\t%d\t%d\n", t.name, t.s.Mean, t.s.P50, t.s.P90, t.s.P99, t.s.Max)
	}
	return tw.Flush()
}
