package compare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/env"
)

// Latency summarises decision latencies.
type Latency struct {
	// P50, P90, P99 and Max are percentiles of the latencies (linear
	// interpolation between closest ranks).
	P50, P90, P99, Max time.Duration
}

// SourceStats is what a decision log says about one policy source.
type SourceStats struct {
	// Source is the policy source ("learned@v3", "heuristic:strn").
	Source string
	// Decisions counts the decisions it answered.
	Decisions int
	// Fallbacks counts its decisions by fallback reason (no entry for
	// decisions without one).
	Fallbacks map[string]int
	// Latency summarises its decision latencies.
	Latency Latency
	// Finished counts the jobs that finished after their last decision
	// came from this source.
	Finished int
	// AvgJCT, P50JCT and P99JCT summarise those jobs' JCTs in seconds (NaN
	// without any).
	AvgJCT, P50JCT, P99JCT float64
}

// LogSummary is what SummarizeLog found in a decision log.
type LogSummary struct {
	// Records, Decisions and Outcomes count the records by kind.
	Records, Decisions, Outcomes int
	// Sources holds one entry per policy source, most decisions first.
	Sources []SourceStats
	// Fallbacks counts every decision by fallback reason.
	Fallbacks map[string]int
	// Latency summarises every decision's latency.
	Latency Latency
	// Unmatched counts finished outcomes whose job has no earlier decision
	// in the log (the decision is in a lost or older file).
	Unmatched int
}

// SummarizeLog replays a decision log's records in order: it counts the
// decisions per source and fallback reason, takes latency percentiles, and
// attributes each finished job's JCT to the source of the job's last
// decision before the finish.
func SummarizeLog(recs []declog.Record) *LogSummary {
	s := &LogSummary{Records: len(recs), Fallbacks: map[string]int{}}
	type acc struct {
		st   SourceStats
		lat  []float64
		jcts []float64
	}
	by := map[string]*acc{}
	get := func(src string) *acc {
		a, ok := by[src]
		if !ok {
			a = &acc{st: SourceStats{Source: src, Fallbacks: map[string]int{}}}
			by[src] = a
		}
		return a
	}
	lastSource := map[string]string{} // job id -> source of its last decision
	var all []float64
	for i := range recs {
		r := &recs[i]
		switch r.Kind {
		case declog.KindDecision:
			d := &r.Decision
			s.Decisions++
			a := get(d.Source)
			a.st.Decisions++
			if d.Fallback != "" {
				a.st.Fallbacks[d.Fallback]++
				s.Fallbacks[d.Fallback]++
			}
			a.lat = append(a.lat, float64(d.Latency))
			all = append(all, float64(d.Latency))
			lastSource[d.JobID] = d.Source
		case declog.KindOutcome:
			o := &r.Outcome
			s.Outcomes++
			if o.Kind != declog.Finished {
				continue
			}
			src, ok := lastSource[o.JobID]
			if !ok {
				s.Unmatched++
				continue
			}
			a := get(src)
			a.st.Finished++
			a.jcts = append(a.jcts, o.JCT)
		}
	}
	s.Latency = latency(all)
	for _, a := range by {
		a.st.Latency = latency(a.lat)
		a.st.AvgJCT, a.st.P50JCT, a.st.P99JCT = math.NaN(), math.NaN(), math.NaN()
		if len(a.jcts) > 0 {
			slices.Sort(a.jcts)
			sum := 0.0
			for _, x := range a.jcts {
				sum += x
			}
			a.st.AvgJCT = sum / float64(len(a.jcts))
			a.st.P50JCT = env.Quantile(a.jcts, 0.5)
			a.st.P99JCT = env.Quantile(a.jcts, 0.99)
		}
		s.Sources = append(s.Sources, a.st)
	}
	slices.SortFunc(s.Sources, func(a, b SourceStats) int {
		if c := cmp.Compare(b.Decisions, a.Decisions); c != 0 {
			return c
		}
		return cmp.Compare(a.Source, b.Source)
	})
	return s
}

func latency(ns []float64) Latency {
	if len(ns) == 0 {
		return Latency{}
	}
	slices.Sort(ns)
	q := func(p float64) time.Duration { return time.Duration(math.Round(env.Quantile(ns, p))) }
	return Latency{P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: time.Duration(ns[len(ns)-1])}
}

// WriteLogSummary writes a LogSummary as text: the counts, then a Markdown
// table per source, then the fallback reasons.
func WriteLogSummary(w io.Writer, s *LogSummary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "records    %d (%d decisions, %d outcomes)\n", s.Records, s.Decisions, s.Outcomes)
	fmt.Fprintf(&b, "latency    p50 %v  p90 %v  p99 %v  max %v\n", s.Latency.P50, s.Latency.P90, s.Latency.P99, s.Latency.Max)
	if s.Unmatched > 0 {
		fmt.Fprintf(&b, "unmatched  %d finished jobs have no decision in the log\n", s.Unmatched)
	}
	fmt.Fprintf(&b, "\n| source | decisions | share | fallbacks | latency p50 | p90 | p99 | max | finished jobs | avg JCT (s) | p50 JCT (s) | p99 JCT (s) |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range s.Sources {
		share := 0.0
		if s.Decisions > 0 {
			share = 100 * float64(x.Decisions) / float64(s.Decisions)
		}
		fb := 0
		for _, n := range x.Fallbacks {
			fb += n
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f%% | %d | %v | %v | %v | %v | %d | %s | %s | %s |\n", x.Source, x.Decisions, share, fb,
			x.Latency.P50, x.Latency.P90, x.Latency.P99, x.Latency.Max, x.Finished, dash(x.AvgJCT), dash(x.P50JCT), dash(x.P99JCT))
	}
	if len(s.Fallbacks) > 0 {
		reasons := make([]string, 0, len(s.Fallbacks))
		for r := range s.Fallbacks {
			reasons = append(reasons, r)
		}
		slices.SortFunc(reasons, func(a, b string) int {
			if c := cmp.Compare(s.Fallbacks[b], s.Fallbacks[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		fmt.Fprintf(&b, "\n| fallback reason | decisions |\n|---|---|\n")
		for _, r := range reasons {
			fmt.Fprintf(&b, "| %s | %d |\n", r, s.Fallbacks[r])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.0f", x)
}
