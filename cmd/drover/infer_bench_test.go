package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// BenchmarkInferSim runs drover infer sim in process on the Azure 2023
// conversation trace (19,366 requests, arrivals shifted by 1 s) with the
// measured latency table, on both Splitwise presets, writing every
// request's outcome (--results): everything the command does but the
// process's start. With INFER_SPLITREF set it reads that directory's
// SplitwiseSim trace of the same requests instead (traces/azure_conv.csv,
// --format splitwise), the input of the speed comparison (docs/results/
// inference.md, Speed).
//
//	go test ./cmd/drover -run '^$' -bench InferSim -count 6 | tee new.txt; benchstat old.txt new.txt
func BenchmarkInferSim(b *testing.B) {
	perf := sharedtraces.Path(b, "llm", "calibration", "splitwise_perf_model.csv")
	trace := []string{"--trace", sharedtraces.Path(b, "llm", "azure_llm_2023", "AzureLLMInferenceTrace_conv.csv"), "--shift", "1"}
	if dir := os.Getenv("INFER_SPLITREF"); dir != "" {
		trace = []string{"--trace", filepath.Join(dir, "traces", "azure_conv.csv"), "--format", "splitwise"}
	}
	for _, p := range []string{"splitwise-baseline", "splitwise-ha"} {
		b.Run("cluster="+p, func(b *testing.B) {
			for _, path := range []string{perf, trace[1]} {
				if _, err := os.Stat(path); err != nil {
					b.Skip(err)
				}
			}
			args := append([]string{"infer", "sim", "--perf", perf, "--cluster", p, "--results", filepath.Join(b.TempDir(), "results.csv")}, trace...)
			b.ReportAllocs()
			for b.Loop() {
				if code := run(args, io.Discard, io.Discard); code != 0 {
					b.Fatalf("drover %v: exit %d", args, code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/19366, "ns/request")
		})
	}
}
