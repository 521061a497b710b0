package kv

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestEmbeddedTables(t *testing.T) {
	if n := len(HKVQMeasured()); n != 10 {
		t.Errorf("%d measured rows, want 10 (README.md lines 229-232, 256-261)", n)
	}
	if n := len(HKVQMicrobench()); n != 54 {
		t.Errorf("%d kernel cells, want 6 lengths x 3 GPUs x 3 methods", n)
	}
	if n := len(HKVQAccuracy()); n != 24 {
		t.Errorf("%d accuracy cells, want 4 tasks x 6 methods", n)
	}
	for _, e := range HKVQExperiments() {
		for _, rate := range e.Rates {
			w := HKVQWorkload(e.Name, rate)
			if len(w) != e.Requests {
				t.Errorf("%s@%g: %d requests, want %d", e.Name, rate, len(w), e.Requests)
			}
			for _, r := range w {
				if r.Prompt < e.PromptMin || r.Prompt > e.PromptMax || r.Output < e.OutputMin || r.Output > e.OutputMax {
					t.Errorf("%s@%g #%d: %d/%d tokens outside the workload's ranges", e.Name, rate, r.Index, r.Prompt, r.Output)
				}
			}
			// Poisson arrivals: the mean gap is 1/rate within a wide margin
			// (24 or 40 draws).
			gap := w[len(w)-1].Arrival / float64(len(w)-1)
			if gap < 0.5/rate || gap > 2/rate {
				t.Errorf("%s@%g: mean gap %.1f s", e.Name, rate, gap)
			}
		}
		// Every measured run has its replay, every replay its two runs.
		for _, m := range HKVQMeasured() {
			if m.Experiment == e.Name && HKVQWorkload(m.Experiment, m.Rate) == nil {
				t.Errorf("no replay for %s@%g", m.Experiment, m.Rate)
			}
		}
	}
	if HKVQWorkload("long", 0.2) != nil || HKVQWorkload("medium", 0.15) != nil {
		t.Error("a replay the artifact did not run")
	}
}

// TestWorkloadMatchesMeasuredKV checks the reconstructed replays against the
// artifact's "KV per request" column: the baseline's BF16 KV of the prompt
// in vLLM's 16-token blocks (1954 and 542 MiB), and HACK's paged KV (326 and
// 94 MiB), within 1%.
func TestWorkloadMatchesMeasuredKV(t *testing.T) {
	paged := HACKPi(64)
	paged.Layout = Paged
	for _, m := range HKVQMeasured() {
		var sum float64
		w := HKVQWorkload(m.Experiment, m.Rate)
		for _, r := range w {
			switch m.Method {
			case "baseline":
				blocks := (r.Prompt + 15) / 16
				sum += float64(FP16().TransferBytes(Qwen3_8B, 16*blocks))
			case "hack":
				sum += float64(paged.TransferBytes(Qwen3_8B, r.Prompt))
			}
		}
		got := sum / float64(len(w)) / mib
		if rel := math.Abs(got/m.KVMiB - 1); rel > 0.01 {
			t.Errorf("%s@%g %s: %.1f MiB per request, artifact %.0f (%.2f%%)", m.Experiment, m.Rate, m.Method, got, m.KVMiB, 100*rel)
		}
		t.Logf("%s@%g %s: %.1f MiB per request, artifact %.0f", m.Experiment, m.Rate, m.Method, got, m.KVMiB)
		if m.Format != FP16() && m.Format != paged {
			t.Errorf("%s: format %s", m.Source, m.Format)
		}
	}
}

// TestMicrobenchBytes checks the README's "One step at 128K tokens reads 84
// MiB of KV with HACK and 512 MiB with BF16" (line 291) against the
// formats: one layer with Llama-3.1-70B's heads, 131,072 tokens, Pi = 64.
func TestMicrobenchBytes(t *testing.T) {
	layer := Llama31_70B
	layer.Layers = 1
	if got := FP16().StoredBytes(layer, 128<<10); got != 512*mib {
		t.Errorf("BF16 %d bytes, want 512 MiB", got)
	}
	// 2-bit codes 64 + K meta 8 + V meta 8 + sums 2 + 2 = 84 bytes per token
	// and head; the 68 open-block and sink tokens of the cache add 0.02 MiB.
	if got := float64(HACKPi(64).StoredBytes(layer, 128<<10)) / mib; math.Abs(got-84) > 0.01*84 {
		t.Errorf("HACK %.2f MiB, want 84", got)
	}
}

// TestAccuracyLoss works the losses out by hand from README.md lines
// 186-189 (baseline 64.0, 45.3, 43.8, 90.0).
func TestAccuracyLoss(t *testing.T) {
	rows := HKVQAccuracy()
	tests := []struct {
		f    Format
		want float64
	}{
		{HACKPi(32), (0 - 1.6 + 0.3 + 2.0) / 4},
		{HACKPi(64), (0 - 0.1 - 0.7 + 1.0) / 4},
		{HACKPi(128), (0 - 0.6 - 0.3 + 1.0) / 4},
		{CacheGenCodec(), (0 - 0.4 - 1.1 + 1.0) / 4},
		{KVQuant2(), (2.0 + 2.0 + 0.9 - 2.0) / 4},
		{FP16(), 0},
	}
	for _, tt := range tests {
		got, n, ok := AccuracyLoss(rows, "qwen3-8b", tt.f)
		if !ok || n != 4 || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: loss %g over %d tasks (%v), want %g", tt.f, got, n, ok, tt.want)
		}
	}
	if got, ok := HACKPi(64).AccuracyLoss("qwen3-8b"); !ok || math.Abs(got-0.05) > 1e-9 {
		t.Errorf("hack-pi64 AccuracyLoss = %g, %v, want 0.05", got, ok)
	}
	if _, _, ok := AccuracyLoss(rows, "qwen3-8b", Int8()); ok {
		t.Error("int8 has no measured accuracy")
	}
	if _, _, ok := AccuracyLoss(rows, "llama2-70b", HACKPi(64)); ok {
		t.Error("llama2-70b has no measured accuracy")
	}
}

func TestParseBadTables(t *testing.T) {
	mh := strings.Join(measuredHeader, ",") + "\n"
	mrow := "long,A6000,10,0.15,baseline,fp16,17.11,24.49,5.54,31.1,2.17,1954,29,src\n"
	wh := strings.Join(workloadHeader, ",") + "\n"
	tests := []struct {
		name  string
		parse func([]byte) error
		in    string
	}{
		{"measured empty", measured, ""},
		{"measured wrong header", measured, "a,b\n"},
		{"measured short row", measured, mh + "long,A6000,10\n"},
		{"measured bad number", measured, mh + strings.Replace(mrow, "17.11", "x", 1)},
		{"measured NaN", measured, mh + strings.Replace(mrow, "17.11", "NaN", 1)},
		{"measured Inf", measured, mh + strings.Replace(mrow, "24.49", "+Inf", 1)},
		{"measured negative", measured, mh + strings.Replace(mrow, "2.17", "-1", 1)},
		{"measured p99 below mean", measured, mh + strings.Replace(mrow, "24.49", "10", 1)},
		{"measured usage over 100", measured, mh + strings.Replace(mrow, ",29,", ",129,", 1)},
		{"measured bad method", measured, mh + strings.Replace(mrow, "baseline", "magic", 1)},
		{"measured bad format", measured, mh + strings.Replace(mrow, "fp16", "fp8", 1)},
		{"measured empty source", measured, mh + strings.Replace(mrow, "src", "", 1)},
		{"measured quote", measured, mh + "\"long,A6000\n"},
		{"workload first index 1", workload, wh + "long,0.15,1,0,100,10\n"},
		{"workload gap", workload, wh + "long,0.15,0,0,100,10\nlong,0.15,2,1,100,10\n"},
		{"workload backwards", workload, wh + "long,0.15,0,5,100,10\nlong,0.15,1,1,100,10\n"},
		{"workload zero prompt", workload, wh + "long,0.15,0,0,0,10\n"},
		{"workload zero rate", workload, wh + "long,0,0,0,10,10\n"},
		{"microbench bad method", microbench, strings.Join(microbenchHeader, ",") + "\nA6000,1024,fast,1,src\n"},
		{"microbench zero tokens", microbench, strings.Join(microbenchHeader, ",") + "\nA6000,0,hack,1,src\n"},
		{"accuracy over 100", accuracy, strings.Join(accuracyHeader, ",") + "\nm,t,x,hack,hack-pi64,101,10,src\n"},
		{"accuracy no examples", accuracy, strings.Join(accuracyHeader, ",") + "\nm,t,x,hack,hack-pi64,50,0,src\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.parse([]byte(tt.in)); !errors.Is(err, ErrBadTable) {
				t.Errorf("err = %v, want ErrBadTable", err)
			}
		})
	}
	// Two replays interleaved are fine, each checked on its own.
	if _, err := ParseWorkload([]byte(wh + "long,0.15,0,0,100,10\nlong,0.3,0,0,100,10\nlong,0.15,1,2,100,10\n")); err != nil {
		t.Errorf("interleaved replays: %v", err)
	}
}

func measured(b []byte) error   { _, err := ParseMeasured(b); return err }
func workload(b []byte) error   { _, err := ParseWorkload(b); return err }
func microbench(b []byte) error { _, err := ParseMicrobench(b); return err }
func accuracy(b []byte) error   { _, err := ParseAccuracy(b); return err }

// FuzzParseTables feeds every decoder arbitrary bytes, and mutations of the
// embedded tables drawn from the seed: none panics, and what one accepts
// holds its invariants.
func FuzzParseTables(f *testing.F) {
	for _, b := range [][]byte{measuredCSV, workloadCSV[:600], microbenchCSV, accuracyCSV} {
		f.Add(b, uint64(0))
	}
	f.Add([]byte("experiment,rate_rps,index,arrival_s,prompt_tokens,output_tokens\nlong,0.15,0,0,1,1\n"), uint64(7))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		if seed != 0 && len(b) > 0 {
			b = append([]byte(nil), b...)
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
		}
		if runs, err := ParseMeasured(b); err == nil {
			for _, m := range runs {
				if !(m.JCT > 0 && m.P99JCT >= m.JCT && m.TTFT <= m.JCT && m.PeakKVUsage <= 1) || m.Format.Validate() != nil {
					t.Fatalf("accepted %+v", m)
				}
			}
		}
		if reqs, err := ParseWorkload(b); err == nil {
			for _, r := range reqs {
				if r.Prompt < 1 || r.Output < 1 || r.Arrival < 0 || r.Rate <= 0 {
					t.Fatalf("accepted %+v", r)
				}
			}
		}
		if cells, err := ParseMicrobench(b); err == nil {
			for _, c := range cells {
				if c.KVTokens < 1 || !(c.StepMicros > 0) {
					t.Fatalf("accepted %+v", c)
				}
			}
		}
		if rows, err := ParseAccuracy(b); err == nil {
			for _, r := range rows {
				if r.Score < 0 || r.Score > 100 || r.Examples < 1 {
					t.Fatalf("accepted %+v", r)
				}
			}
		}
	})
}
