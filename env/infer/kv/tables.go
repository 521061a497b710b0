package kv

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrBadTable is returned for a measurement table that does not parse.
var ErrBadTable = errors.New("kv: bad table")

// The HKVQ artifact's measured tables, extracted from its README
// (github Zeyu-ZEYU/HKVQ, commit fc16e215cb69573ba89d2b594ebac42f737f5252,
// README.md; each row's source column names its line), and the requests of
// its two serving workloads.
var (
	//go:embed hkvq_measured.csv
	measuredCSV []byte
	//go:embed hkvq_workload.csv
	workloadCSV []byte
	//go:embed hkvq_microbench.csv
	microbenchCSV []byte
	//go:embed hkvq_accuracy.csv
	accuracyCSV []byte
)

// Experiment is one of the HKVQ artifact's serving workloads (README.md,
// E3): Qwen3-8B on one prefill and one decode instance of vLLM 0.29 (BF16,
// --enforce-eager, no prefix caching, no chunked prefill, at most
// MaxModelLen tokens per batch), the KV sent over a link rate-limited to
// BandwidthGbps at the sender. Every request is sent with ignore_eos, so it
// generates exactly its output tokens. The first Warmup requests are sent
// once, all at once, before the measured replay; the replay sends all
// Requests with Poisson arrivals.
type Experiment struct {
	// Name is "long" (12K-16K-token prompts) or "short" (2K-6K).
	Name string
	// GPU is the GPU of both instances.
	GPU string
	// Requests and Warmup count the workload's requests and the warm-up ones.
	Requests, Warmup int
	// PromptMin..PromptMax and OutputMin..OutputMax are the uniform ranges
	// of the synthetic workload (benchmarks/e2e/workload.py, seed 0).
	PromptMin, PromptMax, OutputMin, OutputMax int
	// MaxNumSeqs is vLLM's --max-num-seqs, MaxModelLen its --max-model-len
	// (and --max-num-batched-tokens).
	MaxNumSeqs, MaxModelLen int
	// GPUMemoryUtilization is vLLM's --gpu-memory-utilization.
	GPUMemoryUtilization float64
	// BandwidthGbps is the emulated prefill-to-decode link.
	BandwidthGbps float64
	// Rates are the measured arrival rates in requests per second.
	Rates []float64
	// Source names the README lines of the commands.
	Source string
}

// HKVQExperiments returns the artifact's two serving workloads.
func HKVQExperiments() []Experiment {
	return []Experiment{
		{Name: "long", GPU: "RTX A6000 48GB", Requests: 24, Warmup: 3, PromptMin: 12000, PromptMax: 16000,
			OutputMin: 256, OutputMax: 512, MaxNumSeqs: 8, MaxModelLen: 20480, GPUMemoryUtilization: 0.92,
			BandwidthGbps: 10, Rates: []float64{0.15, 0.30}, Source: "Zeyu-ZEYU/HKVQ@fc16e215cb69:README.md:215-222"},
		{Name: "short", GPU: "RTX 4000 Ada 20GB", Requests: 40, Warmup: 6, PromptMin: 2000, PromptMax: 6000,
			OutputMin: 64, OutputMax: 128, MaxNumSeqs: 16, MaxModelLen: 8192, GPUMemoryUtilization: 0.92,
			BandwidthGbps: 10, Rates: []float64{0.25, 0.50, 0.75}, Source: "Zeyu-ZEYU/HKVQ@fc16e215cb69:README.md:241-248"},
	}
}

// MeasuredRun is one row of the artifact's serving tables: the means (and
// the P99 JCT) over one run of an Experiment at one rate with one method.
type MeasuredRun struct {
	// Experiment is "long" or "short" (see HKVQExperiments).
	Experiment string
	// GPU is the GPU of both instances.
	GPU string
	// BandwidthGbps is the emulated link.
	BandwidthGbps float64
	// Rate is the Poisson arrival rate in requests per second.
	Rate float64
	// Method is "baseline" (vLLM's default attention, BF16 KV) or "hack".
	Method string
	// Format is the KV format: FP16 for the baseline, HACK with Pi = 64 in
	// the paged layout for hack.
	Format Format
	// JCT, P99JCT and TTFT are in seconds, TPOT in seconds per token.
	JCT, P99JCT, TTFT, TPOT float64
	// KVTransfer is the mean time from the start of the KV pull to the KV
	// installed in decode blocks, in seconds.
	KVTransfer float64
	// KVMiB is the mean KV per request sent, in MiB.
	KVMiB float64
	// PeakKVUsage is the decode instance's peak KV-cache usage, 0..1.
	PeakKVUsage float64
	// Source names the README line.
	Source string
}

// HKVQMeasured returns the artifact's serving tables (10 rows: long prompts
// at 0.15 and 0.3 requests/s, short ones at 0.25, 0.5 and 0.75; baseline
// and HACK each).
func HKVQMeasured() []MeasuredRun { return mustParse(ParseMeasured(measuredCSV)) }

// HKVQWorkload returns the requests of the named experiment's measured
// replay at rate (one of its Rates): arrival offsets in seconds, prompt and
// output tokens, in arrival order. Nil if there is no such replay.
//
// They are the artifact's own draws, worked out again with CPython 3.11's
// random module from the README's commands: benchmarks/e2e/workload.py
// (random.Random(0); per request randint over the prompt range, the prompt's
// token ids, randint over the output range) and loadgen.py arrival_offsets
// (random.Random(0), expovariate(rate) gaps, the first request at 0). The
// mean prompt reproduces the README's KV per request: 13,885.7 tokens x
// 147,456 bytes = 1,952.7 MiB (1,954 MiB measured, in 16-token vLLM
// blocks), 3,847.2 tokens = 541.0 MiB (542).
func HKVQWorkload(experiment string, rate float64) []WorkloadRequest {
	var out []WorkloadRequest
	for _, r := range mustParse(ParseWorkload(workloadCSV)) {
		if r.Experiment == experiment && math.Abs(r.Rate-rate) < 1e-9 {
			out = append(out, r)
		}
	}
	return out
}

// WorkloadRequest is one request of an artifact replay.
type WorkloadRequest struct {
	// Experiment and Rate name the replay.
	Experiment string
	Rate       float64
	// Index is the request's position in the workload file (the first
	// Warmup ones were also sent before the replay).
	Index int
	// Arrival is the offset from the replay's start in seconds.
	Arrival float64
	// Prompt and Output are token counts.
	Prompt, Output int
}

// KernelTiming is one cell of the artifact's attention microbenchmark
// (README.md, E4): one decode step of one attention layer with Llama-3.1
// 70B's heads (64 query, 8 KV, head dim 128), batch 1.
type KernelTiming struct {
	// GPU is "RTX A6000", "RTX 4000 Ada" or "H200".
	GPU string
	// KVTokens is the KV length (1K = 1,024).
	KVTokens int
	// Method is "hack" (attention on the 2-bit codes), "bf16"
	// (FlashAttention-2-style on BF16) or "dequant" (the same kernel
	// dequantizing the 2-bit codes at every step), all with Pi = 64.
	Method string
	// StepMicros is the time of one decode step in microseconds.
	StepMicros float64
	// Source names the README line.
	Source string
}

// HKVQMicrobench returns the microbenchmark's 54 cells.
func HKVQMicrobench() []KernelTiming { return mustParse(ParseMicrobench(microbenchCSV)) }

// AccuracyRow is one cell of the artifact's accuracy table (README.md, E1):
// Qwen3-8B, 100 examples per task (20 for arXiv), standard error 3 to 5
// points.
type AccuracyRow struct {
	// Model is the catalogue name of the model.
	Model string
	// Task and Metric: IMDb (exact match), arXiv (ROUGE-1), HumanEval (edit
	// similarity), GSM8K (exact match).
	Task, Metric string
	// Method is "baseline", "hack", "cachegen" or "kvquant".
	Method string
	// Format is the KV format the row measures.
	Format Format
	// Score is the metric in points (0..100).
	Score float64
	// Examples is the number of examples scored.
	Examples int
	// Source names the README line.
	Source string
}

// HKVQAccuracy returns the accuracy table's 24 cells.
func HKVQAccuracy() []AccuracyRow { return mustParse(ParseAccuracy(accuracyCSV)) }

// AccuracyLoss is the mean over tasks of the dense baseline's score minus
// f's, in points, for model in rows; ok is false when rows hold no task
// with both. Positive is a loss.
func AccuracyLoss(rows []AccuracyRow, model string, f Format) (points float64, tasks int, ok bool) {
	base := map[string]float64{}
	for _, r := range rows {
		if r.Model == model && r.Format == FP16() {
			base[r.Task] = r.Score
		}
	}
	var sum float64
	for _, r := range rows {
		b, has := base[r.Task]
		if r.Model == model && r.Format == f && has {
			sum += b - r.Score
			tasks++
		}
	}
	if tasks == 0 {
		return 0, 0, false
	}
	return sum / float64(tasks), tasks, true
}

func mustParse[T any](v []T, err error) []T {
	if err != nil {
		panic("kv: embedded table: " + err.Error())
	}
	return v
}

// table reads a CSV table whose header must equal want and calls row for
// every record with a field getter; errors name the line.
func table(b []byte, want []string, row func(f *fields) error) error {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = len(want)
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("%w: header: %v", ErrBadTable, err)
	}
	if !slices.Equal(header, want) {
		return fmt.Errorf("%w: header %q, want %q", ErrBadTable, header, want)
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadTable, err)
		}
		f := &fields{rec: rec, names: want}
		if err := row(f); err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrBadTable, line, err)
		}
		if f.err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrBadTable, line, *f.err)
		}
	}
}

// fields reads one record's fields, keeping the first error.
type fields struct {
	rec   []string
	names []string
	err   *error
}

func (f *fields) fail(i int, format string, args ...any) {
	if f.err == nil {
		err := fmt.Errorf("%s: "+format, append([]any{f.names[i]}, args...)...)
		f.err = &err
	}
}

func (f *fields) str(i int) string {
	s := strings.TrimSpace(f.rec[i])
	if s == "" {
		f.fail(i, "empty")
	}
	return s
}

// num parses a finite number in [lo, hi].
func (f *fields) num(i int, lo, hi float64) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(f.rec[i]), 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		f.fail(i, "%q, want a number in [%g, %g]", f.rec[i], lo, hi)
		return 0
	}
	return v
}

// int parses an integer in [lo, hi].
func (f *fields) int(i int, lo, hi int) int {
	v, err := strconv.Atoi(strings.TrimSpace(f.rec[i]))
	if err != nil || v < lo || v > hi {
		f.fail(i, "%q, want an integer in [%d, %d]", f.rec[i], lo, hi)
		return 0
	}
	return v
}

func (f *fields) format(i int) Format {
	v, err := Parse(f.rec[i])
	if err != nil {
		f.fail(i, "%v", err)
	}
	return v
}

func (f *fields) oneOf(i int, allowed ...string) string {
	s := f.str(i)
	if f.err == nil && !slices.Contains(allowed, s) {
		f.fail(i, "%q, want one of %q", s, allowed)
	}
	return s
}

var measuredHeader = []string{"experiment", "gpu", "bandwidth_gbps", "rate_rps", "method", "format",
	"jct_s", "p99_jct_s", "ttft_s", "tpot_ms", "kv_transfer_s", "kv_mib", "peak_kv_usage_pct", "source"}

// ParseMeasured decodes a serving table in the layout of hkvq_measured.csv
// (header: experiment, gpu, bandwidth_gbps, rate_rps, method, format,
// jct_s, p99_jct_s, ttft_s, tpot_ms, kv_transfer_s, kv_mib,
// peak_kv_usage_pct, source). Times are positive and finite, the P99 JCT
// at least the mean, usage a percentage.
func ParseMeasured(b []byte) ([]MeasuredRun, error) {
	var out []MeasuredRun
	err := table(b, measuredHeader, func(f *fields) error {
		m := MeasuredRun{
			Experiment: f.str(0), GPU: f.str(1), BandwidthGbps: f.num(2, 1e-3, 1e6), Rate: f.num(3, 1e-6, 1e6),
			Method: f.oneOf(4, "baseline", "hack"), Format: f.format(5),
			JCT: f.num(6, 1e-9, 1e9), P99JCT: f.num(7, 1e-9, 1e9), TTFT: f.num(8, 1e-9, 1e9), TPOT: f.num(9, 1e-9, 1e9) / 1e3,
			KVTransfer: f.num(10, 0, 1e9), KVMiB: f.num(11, 0, 1e12), PeakKVUsage: f.num(12, 0, 100) / 100, Source: f.str(13),
		}
		if f.err == nil && (m.P99JCT < m.JCT || m.TTFT > m.JCT) {
			return fmt.Errorf("p99 JCT %g < mean %g or TTFT %g > JCT", m.P99JCT, m.JCT, m.TTFT)
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var workloadHeader = []string{"experiment", "rate_rps", "index", "arrival_s", "prompt_tokens", "output_tokens"}

// ParseWorkload decodes a replay in the layout of hkvq_workload.csv
// (header: experiment, rate_rps, index, arrival_s, prompt_tokens,
// output_tokens). Within one (experiment, rate) replay the indices count up
// from 0 and arrivals do not decrease.
func ParseWorkload(b []byte) ([]WorkloadRequest, error) {
	var out []WorkloadRequest
	type key struct {
		exp  string
		rate float64
	}
	last := map[key]WorkloadRequest{}
	err := table(b, workloadHeader, func(f *fields) error {
		r := WorkloadRequest{Experiment: f.str(0), Rate: f.num(1, 1e-6, 1e6), Index: f.int(2, 0, 1<<24),
			Arrival: f.num(3, 0, 1e9), Prompt: f.int(4, 1, 1<<24), Output: f.int(5, 1, 1<<24)}
		if f.err != nil {
			return nil
		}
		k := key{r.Experiment, r.Rate}
		prev, seen := last[k]
		switch {
		case !seen && r.Index != 0:
			return fmt.Errorf("replay %s@%g starts at index %d", r.Experiment, r.Rate, r.Index)
		case seen && (r.Index != prev.Index+1 || r.Arrival < prev.Arrival):
			return fmt.Errorf("replay %s@%g: request %d at %g s after %d at %g s", r.Experiment, r.Rate, r.Index, r.Arrival, prev.Index, prev.Arrival)
		}
		last[k] = r
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var microbenchHeader = []string{"gpu", "kv_tokens", "method", "step_us", "source"}

// ParseMicrobench decodes a kernel table in the layout of
// hkvq_microbench.csv (header: gpu, kv_tokens, method, step_us, source).
func ParseMicrobench(b []byte) ([]KernelTiming, error) {
	var out []KernelTiming
	err := table(b, microbenchHeader, func(f *fields) error {
		out = append(out, KernelTiming{GPU: f.str(0), KVTokens: f.int(1, 1, 1<<30),
			Method: f.oneOf(2, "hack", "bf16", "dequant"), StepMicros: f.num(3, 1e-6, 1e12), Source: f.str(4)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var accuracyHeader = []string{"model", "task", "metric", "method", "format", "score", "examples", "source"}

// ParseAccuracy decodes an accuracy table in the layout of
// hkvq_accuracy.csv (header: model, task, metric, method, format, score,
// examples, source). Scores are points in [0, 100].
func ParseAccuracy(b []byte) ([]AccuracyRow, error) {
	var out []AccuracyRow
	err := table(b, accuracyHeader, func(f *fields) error {
		out = append(out, AccuracyRow{Model: f.str(0), Task: f.str(1), Metric: f.str(2),
			Method: f.oneOf(3, "baseline", "hack", "cachegen", "kvquant", "int8"), Format: f.format(4),
			Score: f.num(5, 0, 100), Examples: f.int(6, 1, 1<<30), Source: f.str(7)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AccuracyLoss is f's mean accuracy loss in points against the dense cache
// on model, from the artifact's accuracy table (HKVQAccuracy: Qwen3-8B
// only). ok is false where the table has no measurement (INT8, other
// models, HACK off its defaults). The table's standard error is 3 to 5
// points, so every measured 2-bit format is within noise of the baseline.
func (f Format) AccuracyLoss(model string) (points float64, ok bool) {
	points, _, ok = AccuracyLoss(HKVQAccuracy(), model, f)
	return points, ok
}
