package runlog

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// CSVHeader is the first line of scalars.csv.
const CSVHeader = "step,tag,value,wall_time"

// Row is one scalar of scalars.csv.
type Row struct {
	// Step is the training step.
	Step int64
	// Tag names the series (one of the Tag constants, or any other).
	Tag string
	// Value is the scalar, kept in full float64 precision (the event file
	// holds it as float32). NaN and ±Inf are written as NaN, +Inf, -Inf.
	Value float64
	// WallTime is the wall-clock time in seconds since the Unix epoch.
	WallTime float64
}

// WallSeconds converts t to the seconds since the Unix epoch that Event
// and Row carry.
func WallSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// AppendCSVRow appends r as one line of scalars.csv (fields quoted as
// RFC 4180 needs, ending in "\n") to dst. Numbers are written in the
// shortest form that parses back to the same value. A tag holding a
// newline is a programmer error: AppendCSVRow panics.
func AppendCSVRow(dst []byte, r Row) []byte {
	if strings.ContainsAny(r.Tag, "\r\n") {
		panic("runlog: tag " + strconv.Quote(r.Tag) + " contains a newline")
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	// Writing to a bytes.Buffer cannot fail.
	_ = w.Write([]string{
		strconv.FormatInt(r.Step, 10),
		r.Tag,
		formatFloat(r.Value),
		formatFloat(r.WallTime),
	})
	w.Flush()
	return append(dst, b.Bytes()...)
}

func formatFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// DecodeCSV decodes scalars.csv. The first line must be CSVHeader. It
// returns the rows before the first problem together with an error: one
// wrapping ErrTruncated when the last line does not end in a newline (a
// writer stopped mid-row; the rows before it are intact), one wrapping
// ErrCorrupt and naming the line otherwise.
func DecodeCSV(b []byte) ([]Row, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: scalars.csv is empty, want header %q", ErrTruncated, CSVHeader)
	}
	var rows []Row
	for line := 1; len(b) > 0; line++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return rows, fmt.Errorf("%w: line %d has no newline", ErrTruncated, line)
		}
		text := b[:i]
		b = b[i+1:]
		if line == 1 {
			if string(bytes.TrimSuffix(text, []byte("\r"))) != CSVHeader {
				return nil, fmt.Errorf("%w: line 1: header %q, want %q", ErrCorrupt, text, CSVHeader)
			}
			continue
		}
		rec, err := csv.NewReader(bytes.NewReader(text)).Read()
		if err != nil {
			return rows, fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
		}
		r, err := parseRow(rec)
		if err != nil {
			return rows, fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func parseRow(rec []string) (Row, error) {
	if len(rec) != 4 {
		return Row{}, fmt.Errorf("%d fields, want 4 (%s)", len(rec), CSVHeader)
	}
	var r Row
	var err error
	if r.Step, err = strconv.ParseInt(rec[0], 10, 64); err != nil {
		return Row{}, fmt.Errorf("step: %v", err)
	}
	r.Tag = rec[1]
	if r.Value, err = strconv.ParseFloat(rec[2], 64); err != nil {
		return Row{}, fmt.Errorf("value: %v", err)
	}
	if r.WallTime, err = strconv.ParseFloat(rec[3], 64); err != nil {
		return Row{}, fmt.Errorf("wall_time: %v", err)
	}
	return r, nil
}
