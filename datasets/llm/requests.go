package llm

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// Columns of Drover's request table (docs/format/requests.md).
const (
	ColArrival = "arrival"       // seconds since the trace's start
	ColPrompt  = "prompt_tokens" // prompt (prefill) tokens
	ColOutput  = "output_tokens" // output (decode) tokens
	// ColImages is the images of a multimodal request, an optional fourth
	// column: written only when some request has images, and 0 when
	// absent.
	ColImages = "images"
)

// RequestsVersion is the version of the request table that Encode and
// WriteParquet write and the readers read.
const RequestsVersion = 1

// requestsHeader is the CSV header of version 1, its version mark.
const requestsHeader = ColArrival + "," + ColPrompt + "," + ColOutput

// Encode appends reqs to b as Drover's request table in CSV
// (docs/format/requests.md), in the given order, and returns the extended
// buffer: the header, then a row per request, arrivals in the shortest
// decimal form that reads back to the same float64, and a fourth column,
// images, when some request has images (a table without images is
// byte-for-byte what it was before the column existed). It is pure. Every
// request must be valid (Request.Validate) and within MaxArrival; the
// error names the first that is not.
func Encode(reqs []Request, b []byte) ([]byte, error) {
	if err := checkAll(reqs); err != nil {
		return nil, err
	}
	images := hasImages(reqs)
	b = append(b, requestsHeader...)
	if images {
		b = append(b, ","+ColImages...)
	}
	b = append(b, '\n')
	for _, r := range reqs {
		b = strconv.AppendFloat(b, r.Arrival, 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Prompt), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Output), 10)
		if images {
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(r.Images), 10)
		}
		b = append(b, '\n')
	}
	return b, nil
}

// WriteCSV writes reqs to w with Encode. It does not close w.
func WriteCSV(w io.Writer, reqs []Request) error {
	b, err := Encode(reqs, make([]byte, 0, 32*len(reqs)+64))
	if err == nil {
		_, err = w.Write(b)
	}
	if err != nil {
		return fmt.Errorf("llm: write csv: %w", err)
	}
	return nil
}

// hasImages reports whether some request has images.
func hasImages(reqs []Request) bool {
	for i := range reqs {
		if reqs[i].Images != 0 {
			return true
		}
	}
	return false
}

// checkAll validates every request for the writers.
func checkAll(reqs []Request) error {
	for i := range reqs {
		if err := reqs[i].Validate(); err != nil {
			return err
		}
		if reqs[i].Arrival > MaxArrival {
			return fmt.Errorf("%w: request %d: arrival %g s past MaxArrival (%g s)", ErrBadRequest, reqs[i].ID, reqs[i].Arrival, float64(MaxArrival))
		}
	}
	return nil
}

// DecodeRequests reads Drover's request table in CSV: the columns arrival,
// prompt_tokens and output_tokens, and images when present (0..MaxImages;
// 0 without the column), found by name (others are ignored, so that a
// later version's columns read). Requests are sorted by arrival
// (stably) and numbered in that order. An arrival that is negative, NaN,
// infinite or past MaxArrival, tokens outside 1..MaxTokens, or a row that
// does not parse is a *ParseError naming o.Source, the line, the column
// and the field, or is skipped and counted with o.SkipBad. A table with no
// request is ErrEmpty. Gzip data is decompressed.
func DecodeRequests(data []byte, o Options) (*Trace, error) {
	return decodeTimed(data, o, FormatRequests, ColArrival, ColPrompt, ColOutput, ColImages)
}

// Columns of SplitwiseSim's request traces (Mutinifni/splitwise-sim,
// README "Request Traces": request_id, request_type, application_id,
// arrival_timestamp, batch_size, prompt_size, token_size; the others are
// ignored).
const (
	SplitwiseArrival = "arrival_timestamp" // seconds
	SplitwisePrompt  = "prompt_size"
	SplitwiseOutput  = "token_size"
)

// DecodeSplitwise reads a SplitwiseSim request trace (what
// scripts/splitwise/make_trace.py writes from an Azure trace): the columns
// arrival_timestamp (seconds), prompt_size and token_size, checked, sorted
// and numbered as DecodeRequests does (request_id is not kept: a
// request's ID is its index in arrival order).
func DecodeSplitwise(data []byte, o Options) (*Trace, error) {
	return decodeTimed(data, o, FormatSplitwise, SplitwiseArrival, SplitwisePrompt, SplitwiseOutput, "")
}

// decodeTimed reads a CSV of requests with an arrival column in seconds,
// two token columns and an optional image column (colImages; "" for
// none), as DecodeRequests documents.
func decodeTimed(data []byte, o Options, f Format, colArrival, colPrompt, colOutput, colImages string) (*Trace, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return nil, err
	}
	t, err := openTable(data, o.Source, colArrival, colPrompt, colOutput)
	if err != nil {
		return nil, err
	}
	tr := &Trace{Format: f}
	_, hasImages := t.cols[colImages]
	hasImages = hasImages && colImages != ""
	cArrival, cPrompt, cOutput, cImages := t.column(colArrival), t.column(colPrompt), t.column(colOutput), t.column(colImages)
	reqs := make([]Request, 0, min(t.rows, 1<<20))
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if err := o.bad(&tr.Skips, line, 0, "row", ReasonMalformed, err); err != nil {
				return nil, err
			}
			continue
		}
		s, l, c := t.field(rec, cArrival)
		a, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if err := o.bad(&tr.Skips, l, c, colArrival, ReasonMalformed, fmt.Errorf("parse %q as seconds", s)); err != nil {
				return nil, err
			}
			continue
		}
		if err := checkArrival(a); err != nil {
			if err := o.bad(&tr.Skips, l, c, colArrival, ReasonBadArrival, err); err != nil {
				return nil, err
			}
			continue
		}
		r := Request{Arrival: a + 0} // + 0 turns -0 into 0
		if r.Prompt, err = tokens(t, rec, cPrompt, &o, &tr.Skips); err != nil || r.Prompt == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if r.Output, err = tokens(t, rec, cOutput, &o, &tr.Skips); err != nil || r.Output == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if hasImages {
			if r.Images, err = images(t, rec, cImages, &o, &tr.Skips); err != nil || r.Images < 0 {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		reqs = append(reqs, r)
	}
	if len(reqs) == 0 {
		return nil, &ParseError{File: o.Source, Field: "file", Err: ErrEmpty}
	}
	if tr.Requests, err = finish(reqs); err != nil {
		return nil, err
	}
	return tr, nil
}

// images reads the image count in column name of rec. A count that does
// not parse or is outside 0..MaxImages is an error, or, with SkipBad,
// counted in s and returned as -1.
func images(t *table, rec []string, col column, o *Options, s *Skips) (int, error) {
	f, l, c := t.field(rec, col)
	v, err := parseInt(f)
	reason := ReasonMalformed
	if err == nil {
		if err = checkImages(v); err == nil {
			return int(v), nil
		}
		reason = ReasonBadImages
	}
	return -1, o.bad(s, l, c, col.name, reason, err)
}

// checkImages returns what is wrong with an image count, or nil.
func checkImages(n int64) error {
	if n < 0 || n > MaxImages {
		return fmt.Errorf("%w: %d images, want 0..%d", ErrBadRequest, n, MaxImages)
	}
	return nil
}

// checkArrival returns what is wrong with an arrival time, or nil.
func checkArrival(a float64) error {
	if math.IsNaN(a) || math.IsInf(a, 0) || a < 0 || a > MaxArrival {
		return fmt.Errorf("%w: arrival %v s, want a finite time in [0, %g]", ErrBadRequest, a, float64(MaxArrival))
	}
	return nil
}
