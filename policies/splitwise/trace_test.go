package splitwise

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/drover-sched/drover/env/infer"
)

// readAzure reads an Azure LLM inference trace 2023 file
// (TIMESTAMP,ContextTokens,GeneratedTokens) as requests whose arrivals are
// seconds since the first plus shift, as scripts/splitwise/make_trace.py
// writes them for SplitwiseSim (shift 1 s: SplitwiseSim fails on a request
// at t = 0).
func readAzure(tb testing.TB, path string, shift float64) []infer.Request {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Skip(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	var reqs []infer.Request
	var t0 time.Time
	for i, rec := range recs[1:] {
		ts, err := time.Parse("2006-01-02 15:04:05.0000000", rec[0])
		if err != nil {
			tb.Fatalf("line %d: %v", i+2, err)
		}
		if i == 0 {
			t0 = ts
		}
		p, err1 := strconv.Atoi(rec[1])
		o, err2 := strconv.Atoi(rec[2])
		if err1 != nil || err2 != nil {
			tb.Fatalf("line %d: %q", i+2, rec)
		}
		reqs = append(reqs, infer.Request{ID: i, Arrival: ts.Sub(t0).Seconds() + shift, Prompt: p, Output: o})
	}
	return reqs
}

// readSplitwiseTrace reads a trace in SplitwiseSim's format (request_id,
// request_type, application_id, arrival_timestamp, batch_size,
// prompt_size, token_size), as its Trace.from_csv does.
func readSplitwiseTrace(tb testing.TB, path string) []infer.Request {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var reqs []infer.Request
	for _, rec := range recs[1:] {
		id, err1 := strconv.Atoi(rec[col["request_id"]])
		at, err2 := strconv.ParseFloat(rec[col["arrival_timestamp"]], 64)
		p, err3 := strconv.Atoi(rec[col["prompt_size"]])
		o, err4 := strconv.Atoi(rec[col["token_size"]])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			tb.Fatalf("%s: bad row %q", path, rec)
		}
		reqs = append(reqs, infer.Request{ID: id, Arrival: at, Prompt: p, Output: o})
	}
	return reqs
}

func realPerf(tb testing.TB) *infer.PerfTable {
	tb.Helper()
	data, err := os.ReadFile("../../../shared/traces/llm/calibration/splitwise_perf_model.csv")
	if err != nil {
		tb.Skip(err)
	}
	p, err := infer.ParsePerfTable(data)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// faithful are the two deployments of issue 34's acceptance, with their
// routers.
var faithful = []struct {
	name   string
	cfg    func(*infer.PerfTable) infer.Config
	router func() infer.Router
}{
	{"a_baseline_h100", func(p *infer.PerfTable) infer.Config { return infer.SplitwiseBaseline(p, 2) }, func() infer.Router { return NewTokenJSQ() }},
	{"b_splitwise_ha", func(p *infer.PerfTable) infer.Config { return infer.SplitwiseHA(p, 1, 1) }, func() infer.Router { return NewMixedPool(MixedPoolConfig{}) }},
}

func TestAzureCodeRuns(t *testing.T) {
	perf := realPerf(t)
	reqs := readAzure(t, "../../../shared/traces/llm/azure_llm_2023/AzureLLMInferenceTrace_code.csv", 1)
	for _, f := range faithful {
		s, err := infer.New(f.cfg(perf), reqs)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Run(f.router())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s: %d/%d TTFT mean %.4f p99 %.4f E2E mean %.4f p99 %.4f, %d iterations, %d transfers\n", f.name, sum.Finished, sum.Requests, sum.TTFT.Mean, sum.TTFT.P99, sum.E2E.Mean, sum.E2E.P99, sum.Iterations, sum.Transfers)
	}
}

// BenchmarkAzureCode replays the whole Azure 2023 code trace (8,819
// requests, 57 minutes) through each faithful deployment; reqs/op is the
// requests replayed. Compare runs with
//
//	go test -run '^$' -bench AzureCode -count 10 ./policies/splitwise > new.txt
//	benchstat old.txt new.txt
func BenchmarkAzureCode(b *testing.B) {
	perf := realPerf(b)
	reqs := readAzure(b, "../../../shared/traces/llm/azure_llm_2023/AzureLLMInferenceTrace_code.csv", 1)
	for _, f := range faithful {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := infer.New(f.cfg(perf), reqs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Run(f.router()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(reqs)), "reqs/op")
		})
	}
}

// BenchmarkConv10Min replays the first 10 minutes of the Azure 2023 conv
// trace, the window issue 34's speed acceptance names, through each
// faithful deployment.
func BenchmarkConv10Min(b *testing.B) {
	perf := realPerf(b)
	all := readAzure(b, "../../../shared/traces/llm/azure_llm_2023/AzureLLMInferenceTrace_conv.csv", 1)
	var reqs []infer.Request
	for _, r := range all {
		if r.Arrival-1 < 600 {
			reqs = append(reqs, r)
		}
	}
	for _, f := range faithful {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := infer.New(f.cfg(perf), reqs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Run(f.router()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(reqs)), "reqs/op")
		})
	}
}
