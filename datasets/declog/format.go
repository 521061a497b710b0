package declog

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/drover-sched/drover/internal/pqlog"
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

// schema lists the columns of a log file, version 1. Every column is
// required; the columns of the other kind hold zero values.
var schema = []pqlog.Field{
	{Name: colKind, Type: pqlog.String},
	{Name: colTime, Type: pqlog.Timestamp},
	{Name: colRequestID, Type: pqlog.String},
	{Name: colJobID, Type: pqlog.String},
	{Name: colSource, Type: pqlog.String},
	{Name: colFallback, Type: pqlog.String},
	{Name: colWorkers, Type: pqlog.Strings},
	{Name: colPS, Type: pqlog.Strings},
	{Name: colSync, Type: pqlog.String},
	{Name: colLatency, Type: pqlog.Int64},
	{Name: colOutcome, Type: pqlog.String},
	{Name: colIterationTimes, Type: pqlog.Float64s},
	{Name: colJCT, Type: pqlog.Float64},
	{Name: colShadow, Type: pqlog.String},
	{Name: colShadowWorkers, Type: pqlog.Strings},
	{Name: colShadowSync, Type: pqlog.String},
	{Name: colShadowFailure, Type: pqlog.String},
	{Name: colJobModel, Type: pqlog.String},
	{Name: colJobGPUs, Type: pqlog.Int64},
	{Name: colJobArch, Type: pqlog.String},
	{Name: colJobBatchSize, Type: pqlog.Int64},
	{Name: colJobExpectedDuration, Type: pqlog.Float64},
	{Name: colJobSubmitted, Type: pqlog.Int64},
}

// format is the decision log for internal/pqlog: names, schema, and the
// codecs between a Record, a row and a write-ahead-log frame.
var format = &pqlog.Format[Record]{
	Log:          "declog",
	Prefix:       FilePrefix,
	Schema:       schema,
	VersionKey:   VersionKey,
	Version:      strconv.Itoa(Version),
	ErrVersion:   ErrVersion,
	ErrClosed:    ErrClosed,
	CreatedBy:    "drover declog v" + strconv.Itoa(Version),
	Append:       appendRow,
	Columns:      columns,
	Finish:       finish,
	Validate:     (*Record).Validate,
	FrameVersion: frameVersion,
	AppendFrame:  appendFrame,
	DecodeFrame:  decodeFrame,
}

// appendRow sets r's values in b, one row of the schema.
func appendRow(b *pqlog.Row, r *Record) {
	d, o := &r.Decision, &r.Outcome
	b.String(0, r.Kind.String())
	b.Int64(1, r.Time().UnixNano())
	rid := d.RequestID
	if r.Kind == KindOutcome {
		rid = o.RequestID
	}
	b.String(2, rid)
	b.String(3, r.JobID())
	b.String(4, d.Source)
	b.String(5, d.Fallback)
	b.Strings(6, d.Workers)
	b.Strings(7, d.PS)
	b.String(8, d.Sync)
	b.Int64(9, int64(d.Latency))
	b.String(10, string(o.Kind))
	b.Float64s(11, o.IterationTimes)
	b.Float64(12, o.JCT)
	b.String(13, d.Shadow)
	b.Strings(14, d.ShadowWorkers)
	b.String(15, d.ShadowSync)
	b.String(16, d.ShadowFailure)
	b.String(17, d.JobModel)
	b.Int64(18, int64(d.JobGPUs))
	b.String(19, d.JobArch)
	b.Int64(20, int64(d.JobBatchSize))
	b.Float64(21, d.JobExpectedDuration)
	b.Int64(22, unixNanos(d.JobSubmitted))
}

// Encode returns recs as one complete log file (one row group). It checks
// every record first; the error names the bad record's row and field.
func Encode(recs []Record) ([]byte, error) { return pqlog.Encode(format, recs) }

// Decode reads the records of one log file held in data; name is the
// file's name for error messages. It checks the version, the columns and
// every row, and returns a *FormatError naming the file, row and column of
// the first problem. Corrupt input never panics: a panic inside the
// Parquet library is recovered and returned as an error.
func Decode(data []byte, name string) ([]Record, error) { return pqlog.Decode(format, data, name) }

// finish keeps only the fields of a decoded record's kind.
func finish(r *Record) {
	if r.Kind == KindDecision {
		r.Outcome = Outcome{}
	} else {
		r.Decision = Decision{}
	}
}

// columns decode a file's columns, in schema order; the columns added
// after version 1's first release are optional. pqlog checks each
// column's type and that no value is null.
var columns = []pqlog.Column[Record]{
	{Name: colKind, Optional: addedLater[colKind], Set: func(r *Record, v pqlog.Value) error {
		switch v.Str {
		case "decision":
			r.Kind = KindDecision
		case "outcome":
			r.Kind = KindOutcome
		default:
			return fmt.Errorf("unknown kind %q (want decision or outcome)", v.Str)
		}
		return nil
	}},
	{Name: colTime, Optional: addedLater[colTime], Set: func(r *Record, v pqlog.Value) error {
		t := time.Unix(0, v.Int).UTC()
		r.Decision.Time, r.Outcome.Time = t, t
		return nil
	}},
	{Name: colRequestID, Optional: addedLater[colRequestID], Set: strCol(func(r *Record, s string) { r.Decision.RequestID, r.Outcome.RequestID = s, s })},
	{Name: colJobID, Optional: addedLater[colJobID], Set: strCol(func(r *Record, s string) { r.Decision.JobID, r.Outcome.JobID = s, s })},
	{Name: colSource, Optional: addedLater[colSource], Set: strCol(func(r *Record, s string) { r.Decision.Source = s })},
	{Name: colFallback, Optional: addedLater[colFallback], Set: strCol(func(r *Record, s string) { r.Decision.Fallback = s })},
	{Name: colWorkers, Optional: addedLater[colWorkers], Set: strList(func(r *Record, s []string) { r.Decision.Workers = s })},
	{Name: colPS, Optional: addedLater[colPS], Set: strList(func(r *Record, s []string) { r.Decision.PS = s })},
	{Name: colSync, Optional: addedLater[colSync], Set: strCol(func(r *Record, s string) { r.Decision.Sync = s })},
	{Name: colLatency, Optional: addedLater[colLatency], Set: int64Col(func(r *Record, x int64) { r.Decision.Latency = time.Duration(x) })},
	{Name: colOutcome, Optional: addedLater[colOutcome], Set: strCol(func(r *Record, s string) { r.Outcome.Kind = OutcomeKind(s) })},
	{Name: colIterationTimes, Optional: addedLater[colIterationTimes], Set: func(r *Record, v pqlog.Value) error {
		r.Outcome.IterationTimes = v.Floats
		return nil
	}},
	{Name: colJCT, Optional: addedLater[colJCT], Set: float64Col(func(r *Record, x float64) { r.Outcome.JCT = x })},
	{Name: colShadow, Optional: addedLater[colShadow], Set: strCol(func(r *Record, s string) { r.Decision.Shadow = s })},
	{Name: colShadowWorkers, Optional: addedLater[colShadowWorkers], Set: strList(func(r *Record, s []string) { r.Decision.ShadowWorkers = s })},
	{Name: colShadowSync, Optional: addedLater[colShadowSync], Set: strCol(func(r *Record, s string) { r.Decision.ShadowSync = s })},
	{Name: colShadowFailure, Optional: addedLater[colShadowFailure], Set: strCol(func(r *Record, s string) { r.Decision.ShadowFailure = s })},
	{Name: colJobModel, Optional: addedLater[colJobModel], Set: strCol(func(r *Record, s string) { r.Decision.JobModel = s })},
	{Name: colJobGPUs, Optional: addedLater[colJobGPUs], Set: int64Col(func(r *Record, x int64) { r.Decision.JobGPUs = clampInt(x) })},
	{Name: colJobArch, Optional: addedLater[colJobArch], Set: strCol(func(r *Record, s string) { r.Decision.JobArch = s })},
	{Name: colJobBatchSize, Optional: addedLater[colJobBatchSize], Set: int64Col(func(r *Record, x int64) { r.Decision.JobBatchSize = clampInt(x) })},
	{Name: colJobExpectedDuration, Optional: addedLater[colJobExpectedDuration], Set: float64Col(func(r *Record, x float64) { r.Decision.JobExpectedDuration = x })},
	{Name: colJobSubmitted, Optional: addedLater[colJobSubmitted], Set: int64Col(func(r *Record, x int64) {
		if x != 0 {
			r.Decision.JobSubmitted = time.Unix(0, x).UTC()
		}
	})},
}

func strCol(set func(*Record, string)) func(*Record, pqlog.Value) error {
	return func(r *Record, v pqlog.Value) error { set(r, v.Str); return nil }
}

func strList(set func(*Record, []string)) func(*Record, pqlog.Value) error {
	return func(r *Record, v pqlog.Value) error { set(r, v.Strs); return nil }
}

func int64Col(set func(*Record, int64)) func(*Record, pqlog.Value) error {
	return func(r *Record, v pqlog.Value) error { set(r, v.Int); return nil }
}

func float64Col(set func(*Record, float64)) func(*Record, pqlog.Value) error {
	return func(r *Record, v pqlog.Value) error { set(r, v.Float); return nil }
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

// frameVersion is the version of appendFrame's encoding, in every
// write-ahead log's header (docs/format/decision-log.md).
const frameVersion = 1

// appendFrame appends r's write-ahead-log encoding to b: the kind (1
// byte), then the fields of its kind in the columns' order, as
// internal/pqlog encodes them.
func appendFrame(b []byte, r *Record) []byte {
	b = append(b, byte(r.Kind))
	if r.Kind == KindOutcome {
		o := &r.Outcome
		b = pqlog.AppendTime(b, o.Time)
		b = pqlog.AppendString(b, o.RequestID)
		b = pqlog.AppendString(b, o.JobID)
		b = pqlog.AppendString(b, string(o.Kind))
		b = pqlog.AppendFloats(b, o.IterationTimes)
		return pqlog.AppendFloat(b, o.JCT)
	}
	d := &r.Decision
	b = pqlog.AppendTime(b, d.Time)
	for _, s := range []string{d.RequestID, d.JobID, d.Source, d.Fallback} {
		b = pqlog.AppendString(b, s)
	}
	b = pqlog.AppendStrings(b, d.Workers)
	b = pqlog.AppendStrings(b, d.PS)
	b = pqlog.AppendString(b, d.Sync)
	b = pqlog.AppendInt(b, int64(d.Latency))
	b = pqlog.AppendString(b, d.Shadow)
	b = pqlog.AppendStrings(b, d.ShadowWorkers)
	for _, s := range []string{d.ShadowSync, d.ShadowFailure, d.JobModel} {
		b = pqlog.AppendString(b, s)
	}
	b = pqlog.AppendInt(b, int64(d.JobGPUs))
	b = pqlog.AppendString(b, d.JobArch)
	b = pqlog.AppendInt(b, int64(d.JobBatchSize))
	b = pqlog.AppendFloat(b, d.JobExpectedDuration)
	return pqlog.AppendTime(b, d.JobSubmitted)
}

// decodeFrame decodes what appendFrame wrote.
func decodeFrame(d *pqlog.Dec) Record {
	kind := Kind(d.Byte())
	if kind == KindOutcome {
		o := Outcome{Time: d.Time(), RequestID: d.String(), JobID: d.String(), Kind: OutcomeKind(d.String()), IterationTimes: d.Floats()}
		o.JCT = d.Float()
		return o.Record()
	}
	x := Decision{Time: d.Time(), RequestID: d.String(), JobID: d.String(), Source: d.String(), Fallback: d.String(),
		Workers: d.Strings(), PS: d.Strings(), Sync: d.String(), Latency: time.Duration(d.Int()),
		Shadow: d.String(), ShadowWorkers: d.Strings(), ShadowSync: d.String(), ShadowFailure: d.String(), JobModel: d.String()}
	x.JobGPUs = clampInt(d.Int())
	x.JobArch = d.String()
	x.JobBatchSize = clampInt(d.Int())
	x.JobExpectedDuration = d.Float()
	x.JobSubmitted = d.Time()
	r := x.Record()
	r.Kind = kind // an unknown kind fails validation
	return r
}
