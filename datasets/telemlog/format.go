package telemlog

import (
	"errors"
	"strconv"
	"time"

	"github.com/drover-sched/drover/internal/pqlog"
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

// schema lists the columns of a log file, version 1. Every column is
// required (no nulls; unknown raw readings are NaN).
var schema = func() []pqlog.Field {
	fields := []pqlog.Field{{Name: colNode, Type: pqlog.String}, {Name: colTime, Type: pqlog.Timestamp}}
	for _, c := range floatCols {
		fields = append(fields, pqlog.Field{Name: c.name, Type: pqlog.Float64})
	}
	return fields
}()

// format is the telemetry log for internal/pqlog: names, schema, and the
// codecs between a Sample, a row and a write-ahead-log frame.
var format = &pqlog.Format[Sample]{
	Log:          "telemlog",
	Prefix:       FilePrefix,
	Schema:       schema,
	VersionKey:   VersionKey,
	Version:      strconv.Itoa(Version),
	ErrVersion:   ErrVersion,
	ErrClosed:    ErrClosed,
	CreatedBy:    "drover telemlog v" + strconv.Itoa(Version),
	Append:       appendRow,
	Columns:      columns(),
	Finish:       func(s *Sample) { s.Time = s.Time.UTC() },
	Validate:     (*Sample).Validate,
	FrameVersion: frameVersion,
	AppendFrame:  appendFrame,
	DecodeFrame:  decodeFrame,
}

// appendRow sets s's values in b, one row of the schema.
func appendRow(b *pqlog.Row, s *Sample) {
	b.String(0, s.Node)
	b.Int64(1, s.Time.UnixNano())
	for i, c := range floatCols {
		b.Float64(2+i, *c.get(s))
	}
}

// Encode returns samples as one complete log file (one row group). It
// checks every sample first; the error names the bad sample's row and
// field.
func Encode(samples []Sample) ([]byte, error) { return pqlog.Encode(format, samples) }

// Decode reads the samples of one log file held in data, in file order;
// name is the file's name for error messages. It checks the version, the
// columns and every row, and returns a *FormatError naming the file, row
// and column of the first problem. Corrupt input never panics: a panic
// inside the Parquet library is recovered and returned as an error.
func Decode(data []byte, name string) ([]Sample, error) { return pqlog.Decode(format, data, name) }

// columns decode a file's columns, in schema order (pqlog checks each
// column's type and that no value is null).
func columns() []pqlog.Column[Sample] {
	all := []pqlog.Column[Sample]{
		{Name: colNode, Set: func(s *Sample, v pqlog.Value) error { s.Node = v.Str; return nil }},
		{Name: colTime, Set: func(s *Sample, v pqlog.Value) error { s.Time = time.Unix(0, v.Int); return nil }},
	}
	for _, c := range floatCols {
		get := c.get
		all = append(all, pqlog.Column[Sample]{Name: c.name, Set: func(s *Sample, v pqlog.Value) error {
			*get(s) = v.Float
			return nil
		}})
	}
	return all
}

// frameVersion is the version of appendFrame's encoding, in every
// write-ahead log's header (docs/format/telemetry-log.md).
const frameVersion = 1

// appendFrame appends s's write-ahead-log encoding to b: node, time, then
// the double columns in schema order, as internal/pqlog encodes them.
func appendFrame(b []byte, s *Sample) []byte {
	b = pqlog.AppendString(b, s.Node)
	b = pqlog.AppendTime(b, s.Time)
	for _, c := range floatCols {
		b = pqlog.AppendFloat(b, *c.get(s))
	}
	return b
}

// decodeFrame decodes what appendFrame wrote.
func decodeFrame(d *pqlog.Dec) Sample {
	s := Sample{Node: d.String(), Time: d.Time()}
	for _, c := range floatCols {
		*c.get(&s) = d.Float()
	}
	return s
}
