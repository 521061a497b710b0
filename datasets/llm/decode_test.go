package llm

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeErrors: a bad row is an error naming the file, the line, the
// column and the field, wrapping the sentinel; with SkipBad it is counted
// under its reason.
func TestDecodeErrors(t *testing.T) {
	const az = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,10,2\n"
	const rq = "arrival,prompt_tokens,output_tokens\n0.5,10,2\n"
	const vd = "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio\n10,2,12,5\n"
	tests := []struct {
		name   string
		f      Format
		data   string
		where  string // error prefix: file:line:col: field F
		is     error  // wrapped sentinel, if any
		reason string // the SkipBad reason ("" when SkipBad also fails)
	}{
		{"azure NaN prompt", FormatAzure, az + "2023-11-16 18:17:04.0000000,NaN,3\n", "t.csv:3:29: field ContextTokens", nil, ReasonMalformed},
		{"azure negative output", FormatAzure, az + "2023-11-16 18:17:04.0000000,5,-3\n", "t.csv:3:31: field GeneratedTokens", ErrBadRequest, ReasonBadTokens},
		{"azure zero output", FormatAzure, az + "2023-11-16 18:17:04.0000000,5,0\n", "t.csv:3:31: field GeneratedTokens", ErrBadRequest, ReasonBadTokens},
		{"azure oversized prompt", FormatAzure, az + "2023-11-16 18:17:04.0000000,16777217,3\n", "t.csv:3:29: field ContextTokens", ErrBadRequest, ReasonBadTokens},
		{"azure huge prompt", FormatAzure, az + "2023-11-16 18:17:04.0000000,1e300,3\n", "t.csv:3:29: field ContextTokens", nil, ReasonMalformed},
		{"azure bad time", FormatAzure, az + "2023-11-16 24:17:04.0000000,5,3\n", "t.csv:3:1: field TIMESTAMP", nil, ReasonMalformed},
		{"azure feb 30", FormatAzure, az + "2023-02-30 01:17:04.0000000,5,3\n", "t.csv:3:1: field TIMESTAMP", nil, ReasonMalformed},
		{"azure too far", FormatAzure, az + "2030-11-16 18:17:04.0000000,5,3\n", "t.csv:3: field TIMESTAMP", nil, ReasonBadArrival},
		{"azure short row", FormatAzure, az + "2023-11-16 18:17:04.0000000,5\n", "t.csv:3: field row", nil, ReasonMalformed},
		{"azure quote", FormatAzure, az + "2023-11-16 18:17:04.0000000,\"5,3\n", "t.csv:3: field row", nil, ReasonMalformed},
		{"requests NaN arrival", FormatRequests, rq + "NaN,5,3\n", "t.csv:3:1: field arrival", ErrBadRequest, ReasonBadArrival},
		{"requests negative arrival", FormatRequests, rq + "-1,5,3\n", "t.csv:3:1: field arrival", ErrBadRequest, ReasonBadArrival},
		{"requests inf arrival", FormatRequests, rq + "+Inf,5,3\n", "t.csv:3:1: field arrival", ErrBadRequest, ReasonBadArrival},
		{"requests late arrival", FormatRequests, rq + "1e9,5,3\n", "t.csv:3:1: field arrival", ErrBadRequest, ReasonBadArrival},
		{"requests text arrival", FormatRequests, rq + "soon,5,3\n", "t.csv:3:1: field arrival", nil, ReasonMalformed},
		{"requests fractional tokens", FormatRequests, rq + "1, 5.5,3\n", "t.csv:3:3: field prompt_tokens", nil, ReasonMalformed},
		{"requests NaN output", FormatRequests, rq + "1,5,NaN\n", "t.csv:3:5: field output_tokens", nil, ReasonMalformed},
		{"vidur negative prompt", FormatVidur, vd + "-4,2,-2,-2\n", "t.csv:3:1: field num_prefill_tokens", ErrBadRequest, ReasonBadTokens},
		{"vidur oversized output", FormatVidur, vd + "4,99999999,0,0\n", "t.csv:3:3: field num_decode_tokens", ErrBadRequest, ReasonBadTokens},
		{"missing column", FormatAzure, "TIMESTAMP,ContextTokens\n2023-11-16 18:17:04,1\n", "t.csv:1: field GeneratedTokens", ErrMissingColumn, ""},
		{"empty", FormatRequests, "", "t.csv:1: field header", ErrEmpty, ""},
		{"header only", FormatRequests, "arrival,prompt_tokens,output_tokens\n", "t.csv: field file", ErrEmpty, ""},
		{"unknown", FormatAuto, "a,b\n1,2\n", "t.csv:1: field header", ErrUnknownFormat, ""},
		{"lengths only", FormatAuto, vd, "t.csv:1: field header", ErrUnknownFormat, ""},
	}
	decode := func(f Format, data []byte, o Options) (int, Skips, error) {
		if f == FormatVidur {
			ls, err := DecodeVidur(data, o)
			if err != nil {
				return 0, Skips{}, err
			}
			return len(ls.Rows), ls.Skips, nil
		}
		tr, err := Decode(f, data, o)
		if err != nil {
			return 0, Skips{}, err
		}
		return len(tr.Requests), tr.Skips, nil
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decode(tt.f, []byte(tt.data), Options{Source: "t.csv"})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.where+":") {
				t.Errorf("err = %q, want it to start %q", err, tt.where)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.is)
			}
			n, sk, err := decode(tt.f, []byte(tt.data), Options{Source: "t.csv", SkipBad: true})
			if tt.reason == "" {
				if err == nil {
					t.Errorf("SkipBad: no error, want one")
				}
				return
			}
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			if want := (Skips{Skipped: 1, SkipReasons: map[string]int{tt.reason: 1}}); n != 1 || !cmp.Equal(sk, want) {
				t.Errorf("SkipBad: %d requests, skips %+v; want 1, %+v", n, sk, want)
			}
		})
	}
}

// TestAzureDecode: a small trace by hand, out of order, with a BOM, CRLF
// line ends, the 2025 multimodal trace's NumImages column (read into
// Images) and the 'T'/'Z' form: arrivals are seconds after the earliest timestamp,
// sorted stably, numbered in order.
func TestAzureDecode(t *testing.T) {
	data := "\ufeffTIMESTAMP,NumImages,ContextTokens,GeneratedTokens\r\n" +
		"2024-10-15T12:00:05.819Z,1,100,10\r\n" +
		"2024-10-15T12:00:01.5Z,0,200,20\r\n" +
		"2024-10-15 12:00:05.819,0,300,30\r\n" +
		"2024-10-15 12:01:00,0,400,40"
	tr, err := DecodeAzure([]byte(data), Options{Source: "mm.csv"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{ID: 0, Arrival: 0, Prompt: 200, Output: 20},
		{ID: 1, Arrival: 4.319, Prompt: 100, Output: 10, Images: 1},
		{ID: 2, Arrival: 4.319, Prompt: 300, Output: 30},
		{ID: 3, Arrival: 58.5, Prompt: 400, Output: 40},
	}
	if diff := cmp.Diff(want, tr.Requests); diff != "" {
		t.Errorf("requests (-want,+got):\n%s", diff)
	}
	if o := time.Date(2024, 10, 15, 12, 0, 1, 5e8, time.UTC); !tr.Origin.Equal(o) {
		t.Errorf("origin %v, want %v", tr.Origin, o)
	}
}

// TestParseTimestamp checks the forms read and refused, against
// time.Parse where it reads the same string.
func TestParseTimestamp(t *testing.T) {
	good := []string{
		"2023-11-16 18:17:03.9799600", "2023-11-16 18:17:03", "2023-11-16T18:17:03.1Z",
		"2024-02-29 00:00:00.123456789", "0001-01-01 00:00:00", "9999-12-31 23:59:59.999999999Z",
	}
	for _, s := range good {
		got, err := ParseTimestamp(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		ref := strings.Replace(strings.TrimSuffix(s, "Z"), " ", "T", 1) + "Z"
		want, err := time.Parse(time.RFC3339Nano, ref)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("%q = %v, want %v", s, got, want)
		}
	}
	bad := []string{
		"", "2023-11-16", "2023-11-16 18:17", "2023-11-16 18:17:03.", "2023-11-16 18:17:03.1234567890",
		"2023-13-01 00:00:00", "2023-02-29 00:00:00", "2023-11-16 24:00:00", "2023-11-16 23:60:00",
		"2023-11-16 23:59:60", "2023-11-16 18:17:03+01:00", "2023/11/16 18:17:03", "2023-11-16 18:17:0x",
		"+023-11-16 18:17:03", "2023-11-16 18:17:03.-1", "2023-11-16  18:17:03", "2023-00-16 18:17:03", "2023-11-00 18:17:03",
	}
	for _, s := range bad {
		if ts, err := ParseTimestamp(s); err == nil {
			t.Errorf("%q = %v, want an error", s, ts)
		}
	}
}
