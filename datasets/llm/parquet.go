package llm

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/drover-sched/drover/internal/pqlog"
)

// Parquet metadata keys of Drover's request table (docs/format/requests.md).
const (
	// ParquetVersionKey holds the table's version, "1".
	ParquetVersionKey = "drover.requests.version"
	// ParquetNameKey holds the trace's name (optional).
	ParquetNameKey = "drover.requests.name"
)

// requestsFormat is the request table of a trace named name for
// internal/pqlog's Parquet encoder, with the images column when images is
// set.
func requestsFormat(name string, images bool) *pqlog.Format[Request] {
	schema := []pqlog.Field{
		{Name: ColArrival, Type: pqlog.Float64},
		{Name: ColPrompt, Type: pqlog.Int64},
		{Name: ColOutput, Type: pqlog.Int64},
	}
	if images {
		schema = append(schema, pqlog.Field{Name: ColImages, Type: pqlog.Int64})
	}
	return &pqlog.Format[Request]{
		Log:        "llm",
		Schema:     schema,
		VersionKey: ParquetVersionKey,
		Version:    strconv.Itoa(RequestsVersion),
		Metadata:   [][2]string{{ParquetNameKey, name}},
		CreatedBy:  "drover datasets/llm requests v" + strconv.Itoa(RequestsVersion),
		Append: func(b *pqlog.Row, r *Request) {
			b.Float64(0, r.Arrival)
			b.Int64(1, int64(r.Prompt))
			b.Int64(2, int64(r.Output))
			if images {
				b.Int64(3, int64(r.Images))
			}
		},
		Validate: func(*Request) error { return nil }, // checkAll has checked
	}
}

// WriteParquet writes reqs to w as Drover's request table in Parquet
// (docs/format/requests.md): one row group, zstd, the columns arrival
// (DOUBLE), prompt_tokens and output_tokens (INT64), and images (INT64)
// when some request has images, in the given order,
// with the metadata "drover.requests.version"="1" and name under
// "drover.requests.name". Every request must be valid and within
// MaxArrival. It does not close w.
func WriteParquet(w io.Writer, name string, reqs []Request) error {
	err := checkAll(reqs)
	var data []byte
	if err == nil {
		data, err = pqlog.Encode(requestsFormat(name, hasImages(reqs)), reqs)
	}
	if err == nil {
		_, err = w.Write(data)
	}
	if err != nil {
		return fmt.Errorf("llm: write parquet: %w", err)
	}
	return nil
}

// ReadParquet reads Drover's request table in Parquet: a file with the
// metadata "drover.requests.version"="1" and the columns arrival (DOUBLE), prompt_tokens and
// output_tokens (INT64 or INT32), and images when present (0..MaxImages;
// 0 without the column); other columns are ignored and nulls are bad rows. Rows are checked as DecodeRequests checks them, the 1-based
// row standing for the line, then sorted by arrival and numbered. The
// trace is named by "drover.requests.name", else o.Source. Corrupt input
// is an error, never a panic.
func ReadParquet(data []byte, o Options) (tr *Trace, err error) {
	defer func() {
		if p := recover(); p != nil {
			tr, err = nil, &ParseError{File: o.Source, Field: "file", Err: fmt.Errorf("corrupt parquet: %v", p)}
		}
	}()
	fail := func(field string, err error) (*Trace, error) {
		return nil, &ParseError{File: o.Source, Field: field, Err: err}
	}
	pf, err := pqlog.OpenFile(data)
	if err != nil {
		return fail("file", err)
	}
	v, ok := pf.Lookup(ParquetVersionKey)
	if !ok {
		return fail(ParquetVersionKey, fmt.Errorf("%w: key missing", ErrVersion))
	}
	if v != strconv.Itoa(RequestsVersion) {
		return fail(ParquetVersionKey, fmt.Errorf("%w: %q (this build reads %d)", ErrVersion, v, RequestsVersion))
	}
	n := pf.NumRows()
	// Room for the rows the footer claims, within what the file's bytes
	// can hold (at 64:1; past that, append grows the slices).
	c := int(min(n, int64(64*len(data)+1024)))
	arrivals := make([]float64, 0, c)
	prompts := make([]int64, 0, c)
	outputs := make([]int64, 0, c)
	var images []int64
	nulls := make([]uint8, 0, c) // bit k: column k of the row is null
	cols := []struct {
		name string
		t    pqlog.Type
		set  func(v *pqlog.Value)
	}{
		{ColArrival, pqlog.Float64, func(v *pqlog.Value) { arrivals = append(arrivals, v.Float) }},
		{ColPrompt, pqlog.Int64, func(v *pqlog.Value) { prompts = append(prompts, v.Int) }},
		{ColOutput, pqlog.Int64, func(v *pqlog.Value) { outputs = append(outputs, v.Int) }},
	}
	if pf.Has(ColImages) {
		images = make([]int64, 0, c)
		cols = append(cols, struct {
			name string
			t    pqlog.Type
			set  func(v *pqlog.Value)
		}{ColImages, pqlog.Int64, func(v *pqlog.Value) { images = append(images, v.Int) }})
	}
	for k, col := range cols {
		if !pf.Has(col.name) {
			return fail(col.name, ErrMissingColumn)
		}
		var rows int64
		err := pf.ReadColumn(col.name, col.t, func(v *pqlog.Value) error {
			if rows++; rows > n {
				return fmt.Errorf("column has more than %d rows", n)
			}
			if k == 0 {
				nulls = append(nulls, 0)
			}
			if v == nil {
				nulls[rows-1] |= 1 << k
				v = &pqlog.Value{}
			}
			col.set(v)
			return nil
		})
		if err == nil && rows != n {
			err = fmt.Errorf("column has %d rows, want %d", rows, n)
		}
		if err != nil {
			return fail(col.name, err)
		}
	}
	tr = &Trace{Format: FormatParquet, Name: o.Source}
	if nm, ok := pf.Lookup(ParquetNameKey); ok && nm != "" {
		tr.Name = nm
	}
	reqs := make([]Request, 0, len(arrivals))
	for i, a := range arrivals {
		row := i + 1
		field, reason, err := ColArrival, ReasonMalformed, error(nil)
		switch {
		case nulls[i]&1 != 0:
			err = errNull
		case checkArrival(a) != nil:
			reason, err = ReasonBadArrival, checkArrival(a)
		case nulls[i]&2 != 0:
			field, err = ColPrompt, errNull
		case checkTokens(prompts[i]) != nil:
			field, reason, err = ColPrompt, ReasonBadTokens, checkTokens(prompts[i])
		case nulls[i]&4 != 0:
			field, err = ColOutput, errNull
		case checkTokens(outputs[i]) != nil:
			field, reason, err = ColOutput, ReasonBadTokens, checkTokens(outputs[i])
		case images != nil && nulls[i]&8 != 0:
			field, err = ColImages, errNull
		case images != nil && checkImages(images[i]) != nil:
			field, reason, err = ColImages, ReasonBadImages, checkImages(images[i])
		default:
			r := Request{Arrival: a + 0, Prompt: int(prompts[i]), Output: int(outputs[i])}
			if images != nil {
				r.Images = int(images[i])
			}
			reqs = append(reqs, r)
			continue
		}
		if err := o.bad(&tr.Skips, row, 0, field, reason, err); err != nil {
			return nil, err
		}
	}
	if len(reqs) == 0 {
		return fail("file", ErrEmpty)
	}
	if tr.Requests, err = finish(reqs); err != nil {
		return nil, err
	}
	return tr, nil
}

// errNull is the error for a null value in a request table.
var errNull = errors.New("null value")
