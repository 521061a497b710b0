package declog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Version is the version of the log's schema (docs/format/decision-log.md),
// stored under VersionKey in every file's key-value metadata.
const Version = 1

// VersionKey is the Parquet key-value metadata key holding Version.
const VersionKey = "drover.declog.version"

// ErrVersion is returned for a file without VersionKey or with a version
// this package cannot read.
var ErrVersion = errors.New("unsupported decision log version")

// Column names, in schema order.
const (
	colKind           = "kind"
	colTime           = "time"
	colRequestID      = "request_id"
	colJobID          = "job_id"
	colSource         = "source"
	colFallback       = "fallback"
	colWorkers        = "workers"
	colPS             = "ps"
	colSync           = "sync"
	colLatency        = "latency_ns"
	colOutcome        = "outcome"
	colIterationTimes = "iteration_times_s"
	colJCT            = "jct_s"
	// The shadow columns, added after version 1's first release; files
	// written before them lack them and read as "no shadow".
	colShadow        = "shadow"
	colShadowWorkers = "shadow_workers"
	colShadowSync    = "shadow_sync"
	colShadowFailure = "shadow_failure"
	// The job columns, added after the shadow columns; files written
	// before them read as "job unknown".
	colJobModel            = "job_model"
	colJobGPUs             = "job_gpus"
	colJobArch             = "job_arch"
	colJobBatchSize        = "job_batch_size"
	colJobExpectedDuration = "job_expected_duration_s"
	// The submission column, added after the job columns; files written
	// before it read as "submitted at an unknown time".
	colJobSubmitted = "job_submit_unix_nanos"
)

// addedLater holds the columns added to version 1 after its first
// release; a file without them reads as if they held zero values.
var addedLater = map[string]bool{colShadow: true, colShadowWorkers: true, colShadowSync: true, colShadowFailure: true,
	colJobModel: true, colJobGPUs: true, colJobArch: true, colJobBatchSize: true, colJobExpectedDuration: true, colJobSubmitted: true}

// schema is the Arrow schema of a log file, version 1. Every column is
// required; the columns of the other kind hold zero values.
var schema = func() *arrow.Schema {
	md := arrow.NewMetadata([]string{VersionKey}, []string{strconv.Itoa(Version)})
	str := arrow.BinaryTypes.String
	return arrow.NewSchema([]arrow.Field{
		{Name: colKind, Type: str},
		{Name: colTime, Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
		{Name: colRequestID, Type: str},
		{Name: colJobID, Type: str},
		{Name: colSource, Type: str},
		{Name: colFallback, Type: str},
		{Name: colWorkers, Type: arrow.ListOfNonNullable(str)},
		{Name: colPS, Type: arrow.ListOfNonNullable(str)},
		{Name: colSync, Type: str},
		{Name: colLatency, Type: arrow.PrimitiveTypes.Int64},
		{Name: colOutcome, Type: str},
		{Name: colIterationTimes, Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)},
		{Name: colJCT, Type: arrow.PrimitiveTypes.Float64},
		{Name: colShadow, Type: str},
		{Name: colShadowWorkers, Type: arrow.ListOfNonNullable(str)},
		{Name: colShadowSync, Type: str},
		{Name: colShadowFailure, Type: str},
		{Name: colJobModel, Type: str},
		{Name: colJobGPUs, Type: arrow.PrimitiveTypes.Int64},
		{Name: colJobArch, Type: str},
		{Name: colJobBatchSize, Type: arrow.PrimitiveTypes.Int64},
		{Name: colJobExpectedDuration, Type: arrow.PrimitiveTypes.Float64},
		{Name: colJobSubmitted, Type: arrow.PrimitiveTypes.Int64},
	}, &md)
}()

// writerProps are the Parquet properties of every log file: format 2.6
// (nanosecond timestamps), zstd, statistics on. (zstd over Snappy: 2.6
// against 3.7 us per appended record in BenchmarkAppend, and smaller files.)
func writerProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithVersion(parquet.V2_6),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCreatedBy("drover declog v"+strconv.Itoa(Version)),
	)
}

// builder accumulates records into an Arrow record batch.
type builder struct {
	b *array.RecordBuilder
	n int
}

func newBuilder() *builder {
	return &builder{b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}
}

func (b *builder) append(r *Record) {
	f := b.b.Field
	d, o := &r.Decision, &r.Outcome
	f(0).(*array.StringBuilder).Append(r.Kind.String())
	f(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Time().UnixNano()))
	rid := d.RequestID
	if r.Kind == KindOutcome {
		rid = o.RequestID
	}
	f(2).(*array.StringBuilder).Append(rid)
	f(3).(*array.StringBuilder).Append(r.JobID())
	f(4).(*array.StringBuilder).Append(d.Source)
	f(5).(*array.StringBuilder).Append(d.Fallback)
	appendStrings(f(6).(*array.ListBuilder), d.Workers)
	appendStrings(f(7).(*array.ListBuilder), d.PS)
	f(8).(*array.StringBuilder).Append(d.Sync)
	f(9).(*array.Int64Builder).Append(int64(d.Latency))
	f(10).(*array.StringBuilder).Append(string(o.Kind))
	lb := f(11).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Float64Builder).AppendValues(o.IterationTimes, nil)
	f(12).(*array.Float64Builder).Append(o.JCT)
	f(13).(*array.StringBuilder).Append(d.Shadow)
	appendStrings(f(14).(*array.ListBuilder), d.ShadowWorkers)
	f(15).(*array.StringBuilder).Append(d.ShadowSync)
	f(16).(*array.StringBuilder).Append(d.ShadowFailure)
	f(17).(*array.StringBuilder).Append(d.JobModel)
	f(18).(*array.Int64Builder).Append(int64(d.JobGPUs))
	f(19).(*array.StringBuilder).Append(d.JobArch)
	f(20).(*array.Int64Builder).Append(int64(d.JobBatchSize))
	f(21).(*array.Float64Builder).Append(d.JobExpectedDuration)
	f(22).(*array.Int64Builder).Append(unixNanos(d.JobSubmitted))
	b.n++
}

func appendStrings(lb *array.ListBuilder, xs []string) {
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	for _, x := range xs {
		vb.Append(x)
	}
}

// batch returns the records appended so far as one record batch and
// resets the builder.
func (b *builder) batch() arrow.RecordBatch {
	b.n = 0
	return b.b.NewRecordBatch()
}

func (b *builder) release() { b.b.Release() }

// Encode returns recs as one complete log file (one row group). It checks
// every record first; the error names the bad record's row and field.
func Encode(recs []Record) ([]byte, error) {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.Row = i + 1
			}
			return nil, err
		}
	}
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(schema, &buf, writerProps(), pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("declog: %w", err)
	}
	b := newBuilder()
	defer b.release()
	for i := range recs {
		b.append(&recs[i])
	}
	rec := b.batch()
	defer rec.Release()
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return nil, fmt.Errorf("declog: %w", err)
	}
	if err := fw.Close(); err != nil {
		return nil, fmt.Errorf("declog: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads the records of one log file held in data; name is the
// file's name for error messages. It checks the version, the columns and
// every row, and returns a *FormatError naming the file, row and column of
// the first problem. Corrupt input never panics: a panic inside the
// Parquet library is recovered and returned as an error.
func Decode(data []byte, name string) (recs []Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			recs, err = nil, &FormatError{File: name, Field: "file", Err: fmt.Errorf("corrupt parquet: %v", p)}
		}
	}()
	fail := func(row int, field string, err error) ([]Record, error) {
		return nil, &FormatError{File: name, Row: row, Field: field, Err: err}
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return fail(0, "file", err)
	}
	defer pf.Close()
	v := pf.MetaData().KeyValueMetadata().FindValue(VersionKey)
	if v == nil {
		return fail(0, VersionKey, fmt.Errorf("%w: key missing", ErrVersion))
	}
	if *v != strconv.Itoa(Version) {
		return fail(0, VersionKey, fmt.Errorf("%w: %q (this build reads %d)", ErrVersion, *v, Version))
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return fail(0, "file", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return fail(0, "file", err)
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	cols := map[string]*arrow.Chunked{}
	for i := 0; i < int(tbl.NumCols()); i++ {
		c := tbl.Column(i)
		cols[c.Name()] = c.Data()
	}
	get := func(name string) ([]arrow.Array, error) {
		c, ok := cols[name]
		if !ok {
			return nil, errors.New("column missing")
		}
		if c.Len() != n {
			return nil, fmt.Errorf("column has %d rows, want %d", c.Len(), n)
		}
		return c.Chunks(), nil
	}
	recs = make([]Record, n)
	for _, c := range []struct {
		name string
		set  func(r *Record, a arrow.Array, i int) error
	}{
		{colKind, func(r *Record, a arrow.Array, i int) error {
			s, err := str(a, i)
			switch {
			case err != nil:
				return err
			case s == "decision":
				r.Kind = KindDecision
			case s == "outcome":
				r.Kind = KindOutcome
			default:
				return fmt.Errorf("unknown kind %q (want decision or outcome)", s)
			}
			return nil
		}},
		{colTime, func(r *Record, a arrow.Array, i int) error {
			ts, ok := a.(*array.Timestamp)
			if !ok {
				return fmt.Errorf("type %s, want timestamp", a.DataType())
			}
			if ts.IsNull(i) {
				return errors.New("null")
			}
			t := time.Unix(0, 0).UTC()
			if u, ok := ts.DataType().(*arrow.TimestampType); ok {
				t = ts.Value(i).ToTime(u.Unit)
			}
			r.Decision.Time, r.Outcome.Time = t, t
			return nil
		}},
		{colRequestID, strCol(func(r *Record, s string) { r.Decision.RequestID, r.Outcome.RequestID = s, s })},
		{colJobID, strCol(func(r *Record, s string) { r.Decision.JobID, r.Outcome.JobID = s, s })},
		{colSource, strCol(func(r *Record, s string) { r.Decision.Source = s })},
		{colFallback, strCol(func(r *Record, s string) { r.Decision.Fallback = s })},
		{colWorkers, strList(func(r *Record, s []string) { r.Decision.Workers = s })},
		{colPS, strList(func(r *Record, s []string) { r.Decision.PS = s })},
		{colSync, strCol(func(r *Record, s string) { r.Decision.Sync = s })},
		{colLatency, int64Col(func(r *Record, x int64) { r.Decision.Latency = time.Duration(x) })},
		{colOutcome, strCol(func(r *Record, s string) { r.Outcome.Kind = OutcomeKind(s) })},
		{colIterationTimes, func(r *Record, a arrow.Array, i int) error {
			l, ok := a.(*array.List)
			if !ok {
				return fmt.Errorf("type %s, want list<double>", a.DataType())
			}
			vs, ok := l.ListValues().(*array.Float64)
			if !ok {
				return fmt.Errorf("type %s, want list<double>", a.DataType())
			}
			if l.IsNull(i) {
				return nil
			}
			lo, hi := l.ValueOffsets(i)
			if lo < 0 || hi > int64(vs.Len()) || lo > hi {
				return fmt.Errorf("list offsets [%d,%d) out of range", lo, hi)
			}
			if hi > lo {
				r.Outcome.IterationTimes = append([]float64(nil), vs.Float64Values()[lo:hi]...)
			}
			return nil
		}},
		{colJCT, float64Col(func(r *Record, x float64) { r.Outcome.JCT = x })},
		{colShadow, strCol(func(r *Record, s string) { r.Decision.Shadow = s })},
		{colShadowWorkers, strList(func(r *Record, s []string) { r.Decision.ShadowWorkers = s })},
		{colShadowSync, strCol(func(r *Record, s string) { r.Decision.ShadowSync = s })},
		{colShadowFailure, strCol(func(r *Record, s string) { r.Decision.ShadowFailure = s })},
		{colJobModel, strCol(func(r *Record, s string) { r.Decision.JobModel = s })},
		{colJobGPUs, int64Col(func(r *Record, x int64) { r.Decision.JobGPUs = clampInt(x) })},
		{colJobArch, strCol(func(r *Record, s string) { r.Decision.JobArch = s })},
		{colJobBatchSize, int64Col(func(r *Record, x int64) { r.Decision.JobBatchSize = clampInt(x) })},
		{colJobExpectedDuration, float64Col(func(r *Record, x float64) { r.Decision.JobExpectedDuration = x })},
		{colJobSubmitted, int64Col(func(r *Record, x int64) {
			if x != 0 {
				r.Decision.JobSubmitted = time.Unix(0, x).UTC()
			}
		})},
	} {
		if _, ok := cols[c.name]; !ok && addedLater[c.name] {
			continue // an older file: the zero value
		}
		chunks, err := get(c.name)
		if err != nil {
			return fail(0, c.name, err)
		}
		row := 0
		for _, a := range chunks {
			for i := 0; i < a.Len(); i++ {
				if err := c.set(&recs[row], a, i); err != nil {
					return fail(row+1, c.name, err)
				}
				row++
			}
		}
	}
	// Keep only the fields of each record's kind, then check it.
	for i := range recs {
		r := &recs[i]
		if r.Kind == KindDecision {
			r.Outcome = Outcome{}
		} else {
			r.Decision = Decision{}
		}
		if err := r.Validate(); err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.File, fe.Row = name, i+1
			}
			return nil, err
		}
	}
	return recs, nil
}

func str(a arrow.Array, i int) (string, error) {
	switch s := a.(type) {
	case *array.String:
		if s.IsNull(i) {
			return "", errors.New("null")
		}
		return s.Value(i), nil
	case *array.LargeString:
		if s.IsNull(i) {
			return "", errors.New("null")
		}
		return s.Value(i), nil
	}
	return "", fmt.Errorf("type %s, want string", a.DataType())
}

func strCol(set func(*Record, string)) func(*Record, arrow.Array, int) error {
	return func(r *Record, a arrow.Array, i int) error {
		s, err := str(a, i)
		if err != nil {
			return err
		}
		set(r, s)
		return nil
	}
}

func int64Col(set func(*Record, int64)) func(*Record, arrow.Array, int) error {
	return func(r *Record, a arrow.Array, i int) error {
		x, ok := a.(*array.Int64)
		if !ok {
			return fmt.Errorf("type %s, want int64", a.DataType())
		}
		if x.IsNull(i) {
			return errors.New("null")
		}
		set(r, x.Value(i))
		return nil
	}
}

func float64Col(set func(*Record, float64)) func(*Record, arrow.Array, int) error {
	return func(r *Record, a arrow.Array, i int) error {
		x, ok := a.(*array.Float64)
		if !ok {
			return fmt.Errorf("type %s, want double", a.DataType())
		}
		if x.IsNull(i) {
			return errors.New("null")
		}
		set(r, x.Value(i))
		return nil
	}
}

// unixNanos returns t as nanoseconds since the Unix epoch, 0 for the zero
// time (unknown).
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// clampInt converts a stored int64 to int, saturating where int is
// narrower, so that an out-of-range value still fails validation rather
// than wrapping into range.
func clampInt(x int64) int {
	if x > math.MaxInt {
		return math.MaxInt
	}
	if x < math.MinInt {
		return math.MinInt
	}
	return int(x)
}

func strList(set func(*Record, []string)) func(*Record, arrow.Array, int) error {
	return func(r *Record, a arrow.Array, i int) error {
		l, ok := a.(*array.List)
		if !ok {
			return fmt.Errorf("type %s, want list<string>", a.DataType())
		}
		if l.IsNull(i) {
			return nil
		}
		lo, hi := l.ValueOffsets(i)
		vs := l.ListValues()
		if lo < 0 || hi > int64(vs.Len()) || lo > hi {
			return fmt.Errorf("list offsets [%d,%d) out of range", lo, hi)
		}
		if hi == lo {
			return nil
		}
		out := make([]string, 0, hi-lo)
		for k := lo; k < hi; k++ {
			s, err := str(vs, int(k))
			if err != nil {
				return fmt.Errorf("element %d: %w", k-lo, err)
			}
			out = append(out, s)
		}
		set(r, out)
		return nil
	}
}

// nopCloser hides a sink's Close from the Parquet writer, which closes
// sinks that have one; the Writer closes its files itself, after fsync.
type nopCloser struct{ io.Writer }
