package llm

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// naiveRow is a row of a three-column CSV as the tests read it, without
// the package's code: split on newlines and commas.
type naiveRow struct {
	ts             string
	prompt, output int
}

// naiveRead reads a headed CSV of a string and two integer columns the
// slow, obvious way (the traces have no quoting).
func naiveRead(t *testing.T, path string) []naiveRow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []naiveRow
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if i == 0 || line == "" {
			continue
		}
		f := strings.Split(line, ",")
		p, err1 := strconv.Atoi(f[1])
		o, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s:%d: %q", path, i+1, line)
		}
		rows = append(rows, naiveRow{f[0], p, o})
	}
	return rows
}

// naiveSeconds is the time of an Azure timestamp by time.Parse, in
// seconds after first (independent of ParseTimestamp).
func naiveSeconds(t *testing.T, ts, first string) float64 {
	const layout = "2006-01-02 15:04:05.0000000"
	a, err := time.Parse(layout, ts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := time.Parse(layout, first)
	if err != nil {
		t.Fatal(err)
	}
	return a.Sub(b).Seconds()
}

// TestAzureRealFiles reads both Azure 2023 traces and checks them against
// facts counted by hand and by a naive reader. The row counts are the
// files' (8,819 and 19,366 data rows: `wc -l` says 8,819 and 19,366
// newlines, header included, because the last row of each file has no line
// end; ../shared/traces/llm/README.md says 8,818 and 19,365, one short).
// The first and last timestamps are read off the files (head, tail); the
// token sums were computed with Python's csv module and agree with the
// README's rounded means (code 2048 and 28, conv 1155 and 211).
func TestAzureRealFiles(t *testing.T) {
	tests := []struct {
		file                 string
		rows                 int
		first, last          string
		span                 float64 // seconds from first to last, by hand
		sumPrompt, sumOutput int
		maxPrompt, maxOutput int
	}{
		{"AzureLLMInferenceTrace_code.csv", 8819, "2023-11-16 18:17:03.9799600", "2023-11-16 19:14:19.9280160", 3435.948056, 18059974, 245896, 7437, 1899},
		{"AzureLLMInferenceTrace_conv.csv", 19366, "2023-11-16 18:15:46.6805900", "2023-11-16 19:14:08.4025270", 3501.721937, 22361870, 4088665, 14050, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := sharedtraces.Path(t, "llm", "azure_llm_2023", tt.file)
			tr, err := ReadFile(path, FormatAuto, Options{})
			if err != nil {
				t.Fatal(err)
			}
			naive := naiveRead(t, path)
			if len(naive) != tt.rows || len(tr.Requests) != tt.rows {
				t.Fatalf("rows: read %d, naive %d, want %d", len(tr.Requests), len(naive), tt.rows)
			}
			if tr.Format != FormatAzure || tr.Skipped != 0 || !strings.HasPrefix(tt.file, tr.Name) {
				t.Errorf("format %q, skipped %d, name %q", tr.Format, tr.Skipped, tr.Name)
			}
			want, _ := time.Parse("2006-01-02 15:04:05.0000000", tt.first)
			if !tr.Origin.Equal(want) {
				t.Errorf("origin %v, want %v", tr.Origin, want)
			}
			rs := tr.Requests
			if rs[0].Arrival != 0 || rs[len(rs)-1].Arrival != tt.span {
				t.Errorf("arrivals %v .. %v, want 0 .. %v", rs[0].Arrival, rs[len(rs)-1].Arrival, tt.span)
			}
			var sp, so, mp, mo int
			for i, r := range rs {
				if r.ID != i {
					t.Fatalf("request %d has ID %d", i, r.ID)
				}
				if err := r.Validate(); err != nil {
					t.Fatal(err)
				}
				// The file is sorted and the sort stable: row i is request i.
				n := naive[i]
				if r.Prompt != n.prompt || r.Output != n.output {
					t.Fatalf("request %d: %d/%d tokens, naive %d/%d", i, r.Prompt, r.Output, n.prompt, n.output)
				}
				if d := math.Abs(r.Arrival - naiveSeconds(t, n.ts, tt.first)); d > 1e-9 {
					t.Fatalf("request %d: arrival %v, naive %v", i, r.Arrival, naiveSeconds(t, n.ts, tt.first))
				}
				if i > 0 && r.Arrival < rs[i-1].Arrival {
					t.Fatalf("request %d arrives before request %d", i, i-1)
				}
				sp, so, mp, mo = sp+r.Prompt, so+r.Output, max(mp, r.Prompt), max(mo, r.Output)
			}
			if sp != tt.sumPrompt || so != tt.sumOutput || mp != tt.maxPrompt || mo != tt.maxOutput {
				t.Errorf("prompt sum %d max %d, output sum %d max %d; want %d %d, %d %d", sp, mp, so, mo, tt.sumPrompt, tt.maxPrompt, tt.sumOutput, tt.maxOutput)
			}
		})
	}
}

// TestAzureReplayRealFile replays the code trace: a rate doubled (gaps
// halved) halves the span; a 10-minute window holds the requests the
// naive reader counts in it; a 1 s shift moves the first request to 1 s.
func TestAzureReplayRealFile(t *testing.T) {
	path := sharedtraces.Path(t, "llm", "azure_llm_2023", "AzureLLMInferenceTrace_code.csv")
	tr, err := ReadFile(path, FormatAzure, Options{})
	if err != nil {
		t.Fatal(err)
	}
	naive := naiveRead(t, path)
	const span = 3435.948056

	fast, err := Replay{GapScale: 0.5}.Apply(tr.Requests)
	if err != nil {
		t.Fatal(err)
	}
	if got := fast[len(fast)-1].Arrival; math.Abs(got-span/2) > 1e-9 || len(fast) != len(tr.Requests) {
		t.Errorf("gap scale 0.5: %d requests, last at %v, want %d at %v", len(fast), got, len(tr.Requests), span/2)
	}

	const start, dur = 600.0, 600.0
	win, err := Replay{Start: start, Duration: dur, Shift: 1}.Apply(tr.Requests)
	if err != nil {
		t.Fatal(err)
	}
	want, first := 0, -1
	for i, n := range naive {
		if s := naiveSeconds(t, n.ts, naive[0].ts); s >= start && s < start+dur {
			if first < 0 {
				first = i
			}
			want++
		}
	}
	if len(win) != want {
		t.Fatalf("window [600, 1200) s: %d requests, naive count %d", len(win), want)
	}
	lead := naiveSeconds(t, naive[first].ts, naive[0].ts) - start
	if math.Abs(win[0].Arrival-(1+lead)) > 1e-9 || win[0].ID != 0 || win[0].Prompt != naive[first].prompt {
		t.Errorf("window's first request %+v, want arrival %v (1 s shift + lead), prompt %d", win[0], 1+lead, naive[first].prompt)
	}
	if last := win[len(win)-1].Arrival; last >= 1+dur {
		t.Errorf("window's last arrival %v, want < %v", last, 1+dur)
	}

	as, err := Replay{Shift: 1}.Apply(tr.Requests)
	if err != nil {
		t.Fatal(err)
	}
	if as[0].Arrival != 1 || as[len(as)-1].Arrival != span+1 {
		t.Errorf("shift 1: arrivals %v .. %v, want 1 .. %v", as[0].Arrival, as[len(as)-1].Arrival, span+1)
	}
}

// TestVidurRealFile reads the arXiv-summarization lengths against the
// naive reader and hand-counted facts (Python's csv module): 28,257 rows,
// prompt sum 73,131,321 (mean 2588.08), output sum 8,234,948 (mean
// 291.43), 72 one-token prompts, maxima 4,054 and 4,056.
func TestVidurRealFile(t *testing.T) {
	path := sharedtraces.Path(t, "llm", "vidur_lengths", "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv")
	ls, err := ReadLengths(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sp, so, ones, mp, mo int
	for _, l := range ls.Rows {
		sp, so, mp, mo = sp+l.Prompt, so+l.Output, max(mp, l.Prompt), max(mo, l.Output)
		if l.Prompt == 1 {
			ones++
		}
	}
	if len(ls.Rows) != 28257 || sp != 73131321 || so != 8234948 || ones != 72 || mp != 4054 || mo != 4056 {
		t.Errorf("rows %d, prompt sum %d max %d, output sum %d max %d, one-token prompts %d", len(ls.Rows), sp, mp, so, mo, ones)
	}
	// The naive reader: the first two columns.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")[1:]
	for i, line := range lines {
		f := strings.Split(line, ",")
		p, _ := strconv.Atoi(f[0])
		o, _ := strconv.Atoi(f[1])
		if ls.Rows[i] != (Length{p, o}) {
			t.Fatalf("row %d: %+v, naive %d/%d", i, ls.Rows[i], p, o)
		}
	}

	// Poisson arrivals at 4 req/s over the rows without one-token prompts.
	reqs, sk, err := Synth{Process: Poisson, Rate: 4, MinPrompt: 2, Shuffle: true}.Generate(ls.Rows, newSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 28257-72 || sk.SkipReasons[ReasonShortPrompt] != 72 {
		t.Errorf("%d requests, skips %v; want %d, 72 short prompts", len(reqs), sk.SkipReasons, 28257-72)
	}
	sum := 0
	for _, r := range reqs {
		sum += r.Prompt
	}
	if sum != 73131321-72 {
		t.Errorf("prompt sum %d after dropping the one-token prompts, want %d", sum, 73131321-72)
	}
}

// TestInspectRealFiles: the Stats of both Azure traces against values
// computed with Python's csv module (nearest-rank percentiles, the
// smallest count with at least the share at or below it). The README's
// p90 of code prompts (5186) and p99 of code outputs (249) use another
// percentile definition; its p50s, maxima and rates (2.57 and 5.53
// req/s) agree.
func TestInspectRealFiles(t *testing.T) {
	tests := []struct {
		file           string
		span           float64
		prompt, output TokenStats
	}{
		{"AzureLLMInferenceTrace_code.csv", 3435.948056,
			TokenStats{Mean: 18059974.0 / 8819, P50: 1469, P90: 5194, P99: 7436, Max: 7437, Total: 18059974},
			TokenStats{Mean: 245896.0 / 8819, P50: 13, P90: 55, P99: 252, Max: 1899, Total: 245896}},
		{"AzureLLMInferenceTrace_conv.csv", 3501.721937,
			TokenStats{Mean: 22361870.0 / 19366, P50: 1020, P90: 2735, P99: 4142, Max: 14050, Total: 22361870},
			TokenStats{Mean: 4088665.0 / 19366, P50: 129, P90: 424, P99: 601, Max: 1000, Total: 4088665}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := ReadFile(sharedtraces.Path(t, "llm", "azure_llm_2023", tt.file), FormatAuto, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := Inspect(tr)
			n := len(tr.Requests)
			want := Stats{Name: tr.Name, Format: FormatAzure, Origin: tr.Origin, Requests: n, LastArrival: tt.span, Span: tt.span,
				Rate: float64(n-1) / tt.span, Prompt: tt.prompt, Output: tt.output}
			if diff := cmp.Diff(want, s); diff != "" {
				t.Errorf("Inspect (-want,+got):\n%s", diff)
			}
			var b strings.Builder
			if err := s.WriteText(&b); err != nil || !strings.Contains(b.String(), "requests  "+strconv.Itoa(n)+"\n") {
				t.Errorf("WriteText: %v\n%s", err, b.String())
			}
		})
	}
}

// TestSplitwiseTraces: the SplitwiseSim traces scripts/splitwise/make_trace.py
// writes from the Azure traces (pandas' timestamps, shift 1 s, the conv
// trace's first 10 minutes) are Replay{Shift: 1} (Duration 600 s) of
// DecodeAzure, to the bit. It runs with INFER_SPLITREF naming the
// directory scripts/splitwise/reference.sh writes (as
// policies/splitwise's comparison does):
//
//	INFER_SPLITREF=/work/splitref-out go test ./datasets/llm -run TestSplitwiseTraces -v
func TestSplitwiseTraces(t *testing.T) {
	dir := os.Getenv("INFER_SPLITREF")
	if dir == "" {
		t.Skip("INFER_SPLITREF is not set")
	}
	for _, c := range []struct {
		azure, splitwise string
		replay           Replay
	}{
		{"AzureLLMInferenceTrace_code.csv", "azure_code.csv", Replay{Shift: 1}},
		{"AzureLLMInferenceTrace_conv.csv", "azure_conv.csv", Replay{Shift: 1}},
		{"AzureLLMInferenceTrace_conv.csv", "azure_conv_10min.csv", Replay{Duration: 600, Shift: 1}},
	} {
		t.Run(c.splitwise, func(t *testing.T) {
			az, err := ReadFile(sharedtraces.Path(t, "llm", "azure_llm_2023", c.azure), FormatAuto, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.replay.Apply(az.Requests)
			if err != nil {
				t.Fatal(err)
			}
			sw, err := ReadFile(dir+"/traces/"+c.splitwise, FormatAuto, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if sw.Format != FormatSplitwise {
				t.Errorf("format %q", sw.Format)
			}
			if diff := cmp.Diff(want, sw.Requests); diff != "" {
				t.Errorf("(-replay,+splitwise):\n%s", diff)
			}
		})
	}
}
