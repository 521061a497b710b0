package llm

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/drover-sched/drover/internal/pqlog"
	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// sample is a trace with arrivals that need all 17 significant digits.
var sample = []Request{
	{ID: 0, Arrival: 0, Prompt: 1, Output: 1},
	{ID: 1, Arrival: 0.1, Prompt: 4808, Output: 10},
	{ID: 2, Arrival: 1.0 / 3, Prompt: MaxTokens, Output: MaxTokens},
	{ID: 3, Arrival: 3435.948056, Prompt: 549, Output: 173},
	{ID: 4, Arrival: MaxArrival, Prompt: 7, Output: 9},
}

// TestRequestsCSV: Encode writes the spec's bytes (docs/format/requests.md)
// and Decode reads them back exactly; rows out of order are sorted and
// renumbered; extra columns are ignored.
func TestRequestsCSV(t *testing.T) {
	b, err := Encode(sample, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "arrival,prompt_tokens,output_tokens\n0,1,1\n0.1,4808,10\n0.3333333333333333,16777216,16777216\n3435.948056,549,173\n100000000,7,9\n"
	if string(b) != want {
		t.Errorf("Encode:\n%s\nwant:\n%s", b, want)
	}
	tr, err := Decode(FormatAuto, b, Options{Source: "r.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample, tr.Requests); diff != "" || tr.Format != FormatRequests {
		t.Errorf("round trip (-want,+got):\n%s (format %q)", diff, tr.Format)
	}
	// A later version's column, reordered columns, out-of-order rows.
	tr, err = DecodeRequests([]byte("output_tokens,ttft_slo,arrival,prompt_tokens\n3,9,2.5,30\n1,9,1.5,10\n2,9,1.5,20\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantReqs := []Request{{ID: 0, Arrival: 1.5, Prompt: 10, Output: 1}, {ID: 1, Arrival: 1.5, Prompt: 20, Output: 2}, {ID: 2, Arrival: 2.5, Prompt: 30, Output: 3}}
	if diff := cmp.Diff(wantReqs, tr.Requests); diff != "" {
		t.Errorf("sorted (-want,+got):\n%s", diff)
	}
	for _, bad := range [][]Request{
		{{Arrival: -1, Prompt: 1, Output: 1}},
		{{Arrival: math.NaN(), Prompt: 1, Output: 1}},
		{{Arrival: 1, Prompt: 0, Output: 1}},
		{{Arrival: 2 * MaxArrival, Prompt: 1, Output: 1}},
	} {
		if _, err := Encode(bad, nil); !errors.Is(err, ErrBadRequest) {
			t.Errorf("Encode(%+v) = %v, want ErrBadRequest", bad, err)
		}
		if err := WriteParquet(&bytes.Buffer{}, "x", bad); !errors.Is(err, ErrBadRequest) {
			t.Errorf("WriteParquet(%+v) = %v, want ErrBadRequest", bad, err)
		}
	}
}

// TestRequestsParquet: WriteParquet's file reads back exactly with
// ReadParquet and, independently, with arrow-go; it has the spec's
// metadata and the encoder's promises (pqlogtest.Encoding).
func TestRequestsParquet(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteParquet(&buf, "sample", sample); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	tr, err := Decode(FormatAuto, data, Options{Source: "r.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample, tr.Requests); diff != "" || tr.Name != "sample" || tr.Format != FormatParquet {
		t.Errorf("round trip (-want,+got):\n%s (name %q, format %q)", diff, tr.Name, tr.Format)
	}
	n, cols := pqlogtest.ArrowColumns(t, data)
	if n != len(sample) || len(cols) != 3 {
		t.Fatalf("arrow-go: %d rows, %d columns", n, len(cols))
	}
	for i, r := range sample {
		a, p, o := cols[ColArrival][i], cols[ColPrompt][i], cols[ColOutput][i]
		if a.Float != r.Arrival || p.Int != int64(r.Prompt) || o.Int != int64(r.Output) {
			t.Errorf("arrow-go row %d: %v %d %d, want %+v", i+1, a.Float, p.Int, o.Int, r)
		}
	}
	pqlogtest.Encoding(t, data)
	pf, err := pqlog.OpenFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := pf.Lookup(ParquetVersionKey); v != "1" {
		t.Errorf("version %q, want 1", v)
	}
}

// TestReadParquetErrors: a wrong version, a missing column and bad rows
// (named by their 1-based row) are errors; SkipBad counts bad rows.
func TestReadParquetErrors(t *testing.T) {
	write := func(f *pqlog.Format[Request], reqs []Request) []byte {
		data, err := pqlog.Encode(f, reqs)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	f := requestsFormat("x", false)
	f.Version = "2"
	if _, err := ReadParquet(write(f, sample), Options{Source: "v.parquet"}); !errors.Is(err, ErrVersion) ||
		!strings.HasPrefix(err.Error(), "v.parquet: field drover.requests.version:") {
		t.Errorf("version 2: %v, want ErrVersion naming the key", err)
	}
	f = requestsFormat("x", false)
	f.Schema = f.Schema[:2]
	f.Append = func(b *pqlog.Row, r *Request) { b.Float64(0, r.Arrival); b.Int64(1, int64(r.Prompt)) }
	if _, err := ReadParquet(write(f, sample), Options{}); !errors.Is(err, ErrMissingColumn) {
		t.Errorf("no output column: %v, want ErrMissingColumn", err)
	}
	// Rows the writer refuses, written past its check.
	bad := append([]Request{}, sample...)
	bad[1].Arrival = math.NaN()
	bad[3].Output = -4
	data := write(requestsFormat("x", false), bad)
	_, err := ReadParquet(data, Options{Source: "b.parquet"})
	if !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(err.Error(), "b.parquet:2: field arrival:") {
		t.Errorf("NaN arrival in row 2: %v", err)
	}
	tr, err := ReadParquet(data, Options{SkipBad: true})
	want := Skips{Skipped: 2, SkipReasons: map[string]int{ReasonBadArrival: 1, ReasonBadTokens: 1}}
	if err != nil || len(tr.Requests) != 3 || !cmp.Equal(want, tr.Skips) {
		t.Errorf("SkipBad: %v; want 3 requests and %+v", err, want)
	}
	if _, err := ReadParquet([]byte("PAR1 not really"), Options{}); err == nil {
		t.Error("corrupt file read")
	}
}

// TestDecodeSplitwise: SplitwiseSim's trace columns, request_id dropped
// (IDs follow arrival order), other columns ignored.
func TestDecodeSplitwise(t *testing.T) {
	data := "request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n" +
		"7,2,0,1.052,1,3180,8\n3,2,0,1.0,1,4808,10\n"
	tr, err := Decode(FormatAuto, []byte(data), Options{Source: "sw.csv"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{{ID: 0, Arrival: 1, Prompt: 4808, Output: 10}, {ID: 1, Arrival: 1.052, Prompt: 3180, Output: 8}}
	if diff := cmp.Diff(want, tr.Requests); diff != "" || tr.Format != FormatSplitwise {
		t.Errorf("(-want,+got):\n%s (format %q)", diff, tr.Format)
	}
	_, err = DecodeSplitwise([]byte(data+"9,2,0,2,1,0,1\n"), Options{Source: "sw.csv"})
	if !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(err.Error(), "sw.csv:4:11: field prompt_size:") {
		t.Errorf("zero prompt: %v", err)
	}
}

// otherRow is a request table another writer (parquet-go) might write:
// nullable columns, 32-bit tokens, an extra column, another order.
type otherRow struct {
	Output  int32    `parquet:"output_tokens"`
	Note    string   `parquet:"note"`
	Arrival *float64 `parquet:"arrival,optional"`
	Prompt  *int32   `parquet:"prompt_tokens,optional"`
}

// TestReadParquetOtherWriter: a table written by parquet-go with INT32
// tokens, nullable columns and an extra column reads; a null is a bad row
// naming its row and column.
func TestReadParquetOtherWriter(t *testing.T) {
	f64 := func(x float64) *float64 { return &x }
	i32 := func(x int32) *int32 { return &x }
	rows := []otherRow{
		{Output: 5, Note: "a", Arrival: f64(2.5), Prompt: i32(100)},
		{Output: 6, Note: "b", Arrival: f64(1), Prompt: i32(200)},
		{Output: 7, Note: "c", Arrival: f64(3), Prompt: nil},
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[otherRow](&buf, parquet.KeyValueMetadata(ParquetVersionKey, "1"))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := ReadParquet(buf.Bytes(), Options{Source: "o.parquet"})
	if !strings.HasPrefix(fmt.Sprint(err), "o.parquet:3: field prompt_tokens: null value") {
		t.Errorf("null prompt: %v", err)
	}
	tr, err := ReadParquet(buf.Bytes(), Options{Source: "o.parquet", SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{{ID: 0, Arrival: 1, Prompt: 200, Output: 6}, {ID: 1, Arrival: 2.5, Prompt: 100, Output: 5}}
	if diff := cmp.Diff(want, tr.Requests); diff != "" || tr.Name != "o.parquet" || tr.SkipReasons[ReasonMalformed] != 1 {
		t.Errorf("(-want,+got):\n%s (name %q, skips %v)", diff, tr.Name, tr.SkipReasons)
	}
}
