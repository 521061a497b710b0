package compare

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSummarizeLog(t *testing.T) {
	us := time.Microsecond
	dec := func(job, src, fb string, lat time.Duration) declog.Record {
		return declog.Decision{JobID: job, Source: src, Fallback: fb, Latency: lat}.Record()
	}
	fin := func(job string, jct float64) declog.Record {
		return declog.Outcome{JobID: job, Kind: declog.Finished, JCT: jct}.Record()
	}
	recs := []declog.Record{
		dec("a", "learned@v3", "", 100*us),
		dec("b", "heuristic:strn", "deadline", 900*us),
		dec("c", "learned@v3", "", 200*us),
		declog.Outcome{JobID: "a", Kind: declog.Started}.Record(),
		fin("a", 1000),
		dec("c", "heuristic:strn", "unconverged", 300*us), // c re-placed by the heuristic
		fin("c", 3000),
		fin("b", 2000),
		fin("ghost", 5),
	}
	got := SummarizeLog(recs)
	want := &LogSummary{
		Records: 9, Decisions: 4, Outcomes: 5, Unmatched: 1,
		Fallbacks: map[string]int{"deadline": 1, "unconverged": 1},
		// Latencies 100, 200, 300, 900 us: p50 = 250, p90 = 300 + 0.7*600 = 720,
		// p99 = 300 + 0.97*600 = 882 (numpy's linear rule).
		Latency: Latency{P50: 250 * us, P90: 720 * us, P99: 882 * us, Max: 900 * us},
		Sources: []SourceStats{
			{Source: "heuristic:strn", Decisions: 2, Fallbacks: map[string]int{"deadline": 1, "unconverged": 1},
				Latency:  Latency{P50: 600 * us, P90: 840 * us, P99: 894 * us, Max: 900 * us},
				Finished: 2, AvgJCT: 2500, P50JCT: 2500, P99JCT: 2990},
			{Source: "learned@v3", Decisions: 2, Fallbacks: map[string]int{},
				Latency:  Latency{P50: 150 * us, P90: 190 * us, P99: 199 * us, Max: 200 * us},
				Finished: 1, AvgJCT: 1000, P50JCT: 1000, P99JCT: 1000},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("summary (-want,+got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := WriteLogSummary(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"records    9 (4 decisions, 5 outcomes)", "| heuristic:strn | 2 | 50.0% | 2 | 600µs |", "| deadline | 1 |", "unmatched  1"} {
		if !bytes.Contains(b.Bytes(), []byte(s)) {
			t.Errorf("summary text lacks %q:\n%s", s, b.String())
		}
	}
	// No JCT for a source without finished jobs.
	empty := SummarizeLog([]declog.Record{dec("x", "heuristic:sas", "", us)})
	if !math.IsNaN(empty.Sources[0].AvgJCT) {
		t.Errorf("AvgJCT without finished jobs = %v, want NaN", empty.Sources[0].AvgJCT)
	}
}
