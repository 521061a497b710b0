package telemlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Version is the version of the log's schema (docs/format/telemetry-log.md),
// stored under VersionKey in every file's key-value metadata.
const Version = 1

// VersionKey is the Parquet key-value metadata key holding Version.
const VersionKey = "drover.telemlog.version"

// ErrVersion is returned for a file without VersionKey or with a version
// this package cannot read.
var ErrVersion = errors.New("unsupported telemetry log version")

// Column names, in schema order.
const (
	colNode        = "node"
	colTime        = "time"
	colCPU         = "cpu"
	colMemBW       = "mem_bw"
	colNet         = "net"
	colCPUUtil     = "cpu_util"
	colMemUsed     = "mem_used"
	colCPUPressure = "cpu_pressure"
	colMemPressure = "mem_pressure"
	colNetRx       = "net_rx_bps"
	colNetTx       = "net_tx_bps"
	colGPUUtil     = "gpu_util"
)

// floatCols are the double columns after time, in schema order, with the
// Sample field each holds.
var floatCols = []struct {
	name string
	get  func(*Sample) *float64
}{
	{colCPU, func(s *Sample) *float64 { return &s.CPU }},
	{colMemBW, func(s *Sample) *float64 { return &s.MemBW }},
	{colNet, func(s *Sample) *float64 { return &s.Net }},
	{colCPUUtil, func(s *Sample) *float64 { return &s.CPUUtil }},
	{colMemUsed, func(s *Sample) *float64 { return &s.MemUsed }},
	{colCPUPressure, func(s *Sample) *float64 { return &s.CPUPressure }},
	{colMemPressure, func(s *Sample) *float64 { return &s.MemPressure }},
	{colNetRx, func(s *Sample) *float64 { return &s.NetRxBps }},
	{colNetTx, func(s *Sample) *float64 { return &s.NetTxBps }},
	{colGPUUtil, func(s *Sample) *float64 { return &s.GPUUtil }},
}

// schema is the Arrow schema of a log file, version 1. Every column is
// required (no nulls; unknown raw readings are NaN).
var schema = func() *arrow.Schema {
	md := arrow.NewMetadata([]string{VersionKey}, []string{strconv.Itoa(Version)})
	fields := []arrow.Field{
		{Name: colNode, Type: arrow.BinaryTypes.String},
		{Name: colTime, Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}},
	}
	for _, c := range floatCols {
		fields = append(fields, arrow.Field{Name: c.name, Type: arrow.PrimitiveTypes.Float64})
	}
	return arrow.NewSchema(fields, &md)
}()

// writerProps are the Parquet properties of every log file: format 2.6
// (nanosecond timestamps), zstd, as the decision log's.
func writerProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithVersion(parquet.V2_6),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCreatedBy("drover telemlog v"+strconv.Itoa(Version)),
	)
}

// builder accumulates samples into an Arrow record batch.
type builder struct {
	b *array.RecordBuilder
	n int
}

func newBuilder() *builder {
	return &builder{b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}
}

func (b *builder) append(s *Sample) {
	f := b.b.Field
	f(0).(*array.StringBuilder).Append(s.Node)
	f(1).(*array.TimestampBuilder).Append(arrow.Timestamp(s.Time.UnixNano()))
	for i, c := range floatCols {
		f(2 + i).(*array.Float64Builder).Append(*c.get(s))
	}
	b.n++
}

// batch returns the samples appended so far as one record batch and
// resets the builder.
func (b *builder) batch() arrow.RecordBatch {
	b.n = 0
	return b.b.NewRecordBatch()
}

func (b *builder) release() { b.b.Release() }

// Encode returns samples as one complete log file (one row group). It
// checks every sample first; the error names the bad sample's row and
// field.
func Encode(samples []Sample) ([]byte, error) {
	for i := range samples {
		if err := samples[i].Validate(); err != nil {
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
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	b := newBuilder()
	defer b.release()
	for i := range samples {
		b.append(&samples[i])
	}
	rec := b.batch()
	defer rec.Release()
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	if err := fw.Close(); err != nil {
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads the samples of one log file held in data, in file order;
// name is the file's name for error messages. It checks the version, the
// columns and every row, and returns a *FormatError naming the file, row
// and column of the first problem. Corrupt input never panics: a panic
// inside the Parquet library is recovered and returned as an error.
func Decode(data []byte, name string) (out []Sample, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &FormatError{File: name, Field: "file", Err: fmt.Errorf("corrupt parquet: %v", p)}
		}
	}()
	fail := func(row int, field string, err error) ([]Sample, error) {
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
	type setter func(s *Sample, a arrow.Array, i int) error
	all := []struct {
		name string
		set  setter
	}{
		{colNode, func(s *Sample, a arrow.Array, i int) error {
			x, ok := a.(*array.String)
			if !ok {
				return fmt.Errorf("type %s, want string", a.DataType())
			}
			if x.IsNull(i) {
				return errors.New("null")
			}
			s.Node = x.Value(i)
			return nil
		}},
		{colTime, func(s *Sample, a arrow.Array, i int) error {
			ts, ok := a.(*array.Timestamp)
			if !ok {
				return fmt.Errorf("type %s, want timestamp", a.DataType())
			}
			if ts.IsNull(i) {
				return errors.New("null")
			}
			unit := arrow.Nanosecond
			if u, ok := ts.DataType().(*arrow.TimestampType); ok {
				unit = u.Unit
			}
			s.Time = ts.Value(i).ToTime(unit)
			return nil
		}},
	}
	for _, c := range floatCols {
		get := c.get
		all = append(all, struct {
			name string
			set  setter
		}{c.name, func(s *Sample, a arrow.Array, i int) error {
			x, ok := a.(*array.Float64)
			if !ok {
				return fmt.Errorf("type %s, want double", a.DataType())
			}
			if x.IsNull(i) {
				return errors.New("null")
			}
			*get(s) = x.Value(i)
			return nil
		}})
	}
	out = make([]Sample, n)
	for _, c := range all {
		ch, ok := cols[c.name]
		if !ok {
			return fail(0, c.name, errors.New("column missing"))
		}
		if ch.Len() != n {
			return fail(0, c.name, fmt.Errorf("column has %d rows, want %d", ch.Len(), n))
		}
		row := 0
		for _, a := range ch.Chunks() {
			for i := 0; i < a.Len(); i++ {
				if err := c.set(&out[row], a, i); err != nil {
					return fail(row+1, c.name, err)
				}
				row++
			}
		}
	}
	for i := range out {
		out[i].Time = out[i].Time.UTC()
		if err := out[i].Validate(); err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.File, fe.Row = name, i+1
			}
			return nil, err
		}
	}
	return out, nil
}

// nopCloser hides a sink's Close from the Parquet writer, which closes
// sinks that have one; the Writer closes its files itself, after fsync.
type nopCloser struct{ io.Writer }
