package main

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env/infer"
)

// csvInferResults is drover infer sim --results as encoding/csv writes it
// (the writer before appendInferResult): the reference the encoder is
// checked against.
func csvInferResults(res []infer.Result) []byte {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"id", "arrival", "prompt_tokens", "output_tokens", "prefill", "decode", "ttft", "tpot", "e2e", "queue", "transfer_bytes", "kv_format", "format_time", "rejected"})
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range res {
		cw.Write([]string{strconv.Itoa(r.ID), g(r.Arrival), strconv.Itoa(r.Prompt), strconv.Itoa(r.Output),
			strconv.Itoa(r.Prefill), strconv.Itoa(r.Decode), g(r.TTFT()), g(r.TPOT()), g(r.E2E()), g(r.Queue()),
			strconv.FormatInt(r.TransferBytes, 10), r.Format, g(r.FormatTime), strconv.FormatBool(r.Rejected)})
	}
	cw.Flush()
	return buf.Bytes()
}

// TestWriteInferResults checks the results file byte for byte against
// encoding/csv's writing of the same rows: random outcomes (NaN times of
// requests that never ran, infinities, negative instances, huge and tiny
// values), KV format names that CSV must quote, and enough rows to fill
// the write buffer many times over.
func TestWriteInferResults(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	formats := []string{"", "hack-pi64", "fp16", "a,b", `say "hi"`, " lead", "\tlead", "\u00a0nbsp", "line\nbreak", "cr\rx", `\.`, `\.x`, `""`, "é", "\xff"}
	x := func() float64 {
		switch r.IntN(8) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*r.IntN(2))
		case 2:
			return 0
		case 3:
			return math.Float64frombits(r.Uint64())
		}
		return r.ExpFloat64() * math.Pow(10, float64(r.IntN(30)-15))
	}
	res := make([]infer.Result, 5000)
	for i := range res {
		res[i] = infer.Result{ID: i, Arrival: x(), Prompt: r.IntN(100000), Output: r.IntN(5000), Prefill: r.IntN(10) - 1, Decode: r.IntN(10) - 1,
			PromptStart: x(), FirstToken: x(), DecodeStart: x(), End: x(), TransferBytes: r.Int64() >> r.IntN(64),
			Format: formats[r.IntN(len(formats))], FormatTime: x(), Rejected: r.IntN(2) == 0}
	}
	res[7].Format = string(bytes.Repeat([]byte(`"x`), 40000)) // longer than the buffer
	for _, n := range []int{0, 1, 2, 100, len(res)} {
		path := filepath.Join(t.TempDir(), "results.csv")
		if err := writeInferResults(path, res[:n]); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := csvInferResults(res[:n]); !bytes.Equal(got, want) {
			t.Errorf("%d rows: the file differs from encoding/csv's (-want,+got):\n%s", n, cmp.Diff(string(want), string(got)))
		}
	}
}
