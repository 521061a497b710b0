package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
)

// inferTraceFile writes reqs as Drover's request CSV in a temporary
// directory and returns its path.
func inferTraceFile(t *testing.T, reqs []llm.Request) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reqs.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := llm.WriteCSV(f, reqs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// inferResultRow is one row of drover infer sim --results.
type inferResultRow struct {
	prefill, decode int
	ttft, tpot, e2e float64
	transferBytes   int64
	rejected        bool
}

// inferSimResults runs drover infer sim --results with args and reads the
// per-request rows back; code is its exit status, stderr its error.
func inferSimResults(t *testing.T, args ...string) (rows []inferResultRow, code int, stdout, stderr string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "results.csv")
	code, stdout, stderr = drover(t, append([]string{"infer", "sim", "--results", p}, args...)...)
	f, err := os.Open(p)
	if err != nil {
		t.Fatalf("exit %d, %s: %v", code, stderr, err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	num := func(rec []string, name string) float64 {
		x, err := strconv.ParseFloat(rec[col[name]], 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return x
	}
	for _, rec := range recs[1:] {
		rows = append(rows, inferResultRow{prefill: int(num(rec, "prefill")), decode: int(num(rec, "decode")),
			ttft: num(rec, "ttft"), tpot: num(rec, "tpot"), e2e: num(rec, "e2e"),
			transferBytes: int64(num(rec, "transfer_bytes")), rejected: rec[col["rejected"]] == "true"})
	}
	return rows, code, stdout, stderr
}

// TestInferSimLinkFlags: --fair-share, --stage-gbps and --format-step
// reach the simulated deployment (pd-rl's: a shared 25 Gbit/s link with
// 1 ms a transfer, HACK Pi 64), each moving the latencies by what its
// mechanism defines. Two like requests arrive together, prefill on the
// two A10G instances at once and send equal KV caches (b bytes); a third
// runs alone later.
//   - --fair-share: the FIFO link sends the first transfer, then the
//     second; the fair one runs both at once at half the bandwidth, so the
//     first request's KV arrives b/B later (B = 25 Gbit/s) and the
//     second's one overhead (1 ms) sooner.
//   - --stage-gbps G: each prompt's step copies its b bytes out first, so
//     TTFT grows by b / (G/8 bytes a second).
//   - --format-step hack-pi64=S: every decode step pays S once, so TPOT
//     grows by S exactly.
func TestInferSimLinkFlags(t *testing.T) {
	perf := inferPerfFlag(t)
	trace := inferTraceFile(t, []llm.Request{{ID: 0, Arrival: 1, Prompt: 4000, Output: 50},
		{ID: 1, Arrival: 1, Prompt: 4000, Output: 50}, {ID: 2, Arrival: 200, Prompt: 3000, Output: 40}})
	base := append([]string{"--cluster", "pd-rl", "--router", "hack", "--trace", trace}, perf...)
	run := func(args ...string) []inferResultRow {
		t.Helper()
		rows, code, _, e := inferSimResults(t, append(base, args...)...)
		if code != 0 || len(rows) != 3 {
			t.Fatalf("%v: exit %d, %d rows: %s", args, code, len(rows), e)
		}
		return rows
	}
	const linkBytesPerSec = 25e9 / 8
	fifo := run()
	if fifo[0].prefill == fifo[1].prefill || fifo[0].transferBytes != fifo[1].transferBytes || fifo[0].ttft != fifo[1].ttft {
		t.Fatalf("the two requests do not prefill alike at once on two instances: %+v", fifo[:2])
	}
	b := float64(fifo[0].transferBytes)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	fair := run("--fair-share")
	if !near(fair[0].e2e-fifo[0].e2e, b/linkBytesPerSec) || !near(fair[1].e2e-fifo[1].e2e, -1e-3) || fair[2] != fifo[2] {
		t.Errorf("--fair-share: JCTs moved by %.9f, %.9f, %.9f s; want b/B = %.9f, -0.001 and 0",
			fair[0].e2e-fifo[0].e2e, fair[1].e2e-fifo[1].e2e, fair[2].e2e-fifo[2].e2e, b/linkBytesPerSec)
	}
	staged := run("--stage-gbps", "40")
	for i := range fifo {
		if want := float64(fifo[i].transferBytes) / (40e9 / 8); !near(staged[i].ttft-fifo[i].ttft, want) {
			t.Errorf("--stage-gbps 40: request %d's TTFT grew by %.9f s, want %.9f", i, staged[i].ttft-fifo[i].ttft, want)
		}
	}
	stepped := run("--format-step", "hack-pi64=0.0052")
	for i := range fifo {
		if !near(stepped[i].tpot-fifo[i].tpot, 0.0052) {
			t.Errorf("--format-step: request %d's TPOT grew by %.9f s, want 0.0052", i, stepped[i].tpot-fifo[i].tpot)
		}
	}
	s := inferSimJSON(t, append(base, "--fair-share", "--stage-gbps", "37.28", "--format-step", "hack=0.0052,int8=0.001")...)
	for _, want := range []string{"shared fairly", "stages the KV for its transfer at 37.28 Gbit/s", "hack-pi64 5.2 ms, int8 1 ms"} {
		if !strings.Contains(s.Cluster, want) {
			t.Errorf("cluster %q lacks %q", s.Cluster, want)
		}
	}
	if code, out, e := drover(t, append([]string{"infer", "sim", "--fair-share"}, perf...)...); code != 1 || out != "" || !strings.Contains(e, "--fair-share: the link is not shared") {
		t.Errorf("--fair-share on a link per transfer: exit %d, stdout %q, stderr %q", code, out, e)
	}
}

// TestInferRejected: a request whose KV cache can never fit its instances
// is rejected (infer.ErrRejected), and drover infer sim and eval say so
// after printing and writing what ran. On two TP2 instances (H100 prefill,
// A100 decode: 2 x 80 GiB less llama2-70b's 135 GB of weights) the KV of
// SplitwiseSim's count (2,621,440 bytes a token) holds 14,037 tokens: a
// 20,000-token prompt never fits, a 9,000-token one does.
func TestInferRejected(t *testing.T) {
	perf := inferPerfFlag(t)
	room := (2*80<<30 - infer.Llama2_70B.WeightBytes) / infer.Llama2_70B.KVBytesPerToken
	if room != 14037 {
		t.Fatalf("KV room %d tokens, want 14,037", room)
	}
	trace := inferTraceFile(t, []llm.Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 20}, {ID: 1, Arrival: 2, Prompt: 20000, Output: 20},
		{ID: 2, Arrival: 3, Prompt: 500, Output: 10}, {ID: 3, Arrival: 4, Prompt: 9000, Output: 10}})
	args := append([]string{"--trace", trace, "--tp", "2"}, perf...)
	rows, code, out, e := inferSimResults(t, args...)
	if code != 1 || !strings.Contains(e, "requests rejected: 1 of 4 requests; the first: request 1's KV cache") || !strings.Contains(e, "the summary is of the 3 requests that ran") {
		t.Errorf("exit %d, stderr %q", code, e)
	}
	if !strings.Contains(out, "requests   3 finished of 4, 1 rejected") {
		t.Errorf("the summary does not count the rejected request:\n%s", out)
	}
	for i, r := range rows {
		if r.rejected != (i == 1) || r.rejected != math.IsNaN(r.e2e) {
			t.Errorf("request %d: rejected %v, JCT %v", i, r.rejected, r.e2e)
		}
	}

	dir := t.TempDir()
	code, out, e = drover(t, append([]string{"infer", "eval", "--quiet", "--seeds", "1-2", "--routers", "token_jsq,mixed_pool", "--out", dir}, args...)...)
	if code != 1 || !strings.Contains(e, "4 of 4 runs left requests unserved, 4 rejected in all") || !strings.Contains(e, "token_jsq, seed 1: infer: requests rejected: 1 of 4") {
		t.Errorf("eval: exit %d, stderr %q", code, e)
	}
	table, err := os.ReadFile(filepath.Join(dir, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "| rejected |") || !strings.Contains(out, " 1.0 ± 0.0 |\n") {
		t.Errorf("the table lacks the rejected requests:\n%s", table)
	}
	s := readInferEvalSummary(t, dir)
	for _, r := range s.Routers {
		if m := r.Metrics["rejected"]; m.Mean != 1 || len(r.Runs) != 2 || r.Runs[0].Summary.Rejected != 1 {
			t.Errorf("%s: rejected %+v, runs %+v", r.Name, m, r.Runs)
		}
	}
}

// TestInferRetryUnfit: with --retry-unfit, TestInferRejected's
// 20,000-token request is kept, as SplitwiseSim keeps it. Its prompt's
// cache (20,001 tokens) passes the prefill instance's KV room too (the
// same 14,037 tokens), so its prompt never runs: the run ends once nothing
// else can (no hang), stalled, printing the summary of what ran and
// naming the request, the instance it waits on, the bytes it needs and
// those free. (env/infer's TestStalledTransfer has a transfer that waits.)
func TestInferRetryUnfit(t *testing.T) {
	perf := inferPerfFlag(t)
	trace := inferTraceFile(t, []llm.Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 20}, {ID: 1, Arrival: 2, Prompt: 20000, Output: 20},
		{ID: 2, Arrival: 3, Prompt: 500, Output: 10}, {ID: 3, Arrival: 4, Prompt: 9000, Output: 10}})
	code, out, e := drover(t, append([]string{"infer", "sim", "--trace", trace, "--tp", "2", "--retry-unfit"}, perf...)...)
	need := 20001 * infer.Llama2_70B.KVBytesPerToken
	if want := fmt.Sprintf("request 1's prompt task waits for %d bytes on instance 1", need); code != 1 || !strings.Contains(e, "infer: stalled") || !strings.Contains(e, want) {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, e, want)
	}
	if !strings.Contains(out, "never finished") || !strings.Contains(out, "requests that never fit kept (--retry-unfit)") {
		t.Errorf("the summary does not say what ran:\n%s", out)
	}
}
