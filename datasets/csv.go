package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/internal/inputfile"
)

// table reads a headed CSV file row by row, resolving columns by name.
type table struct {
	r      *csv.Reader
	header []string
	cols   map[string]int
	// lines is the number of newlines in the data, an upper bound on the
	// data rows (plus one for an unterminated last line) that lets the
	// decoders size their slices once.
	lines int
}

// openTable reads the header of data. comment enables '#' comment lines
// (Helios). Every name in required must be a column.
// A leading UTF-8 byte-order mark is skipped: before the header, it would
// hide a first comment line from encoding/csv.
func openTable(data []byte, src string, comment bool, required ...string) (*table, error) {
	data = inputfile.TrimBOM(data)
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	r.FieldsPerRecord = -1
	if comment {
		r.Comment = '#'
	}
	h, err := r.Read()
	if err != nil {
		line := 1
		var pe *csv.ParseError
		if err == io.EOF {
			err = ErrEmpty
		} else if errors.As(err, &pe) {
			line, err = pe.StartLine, pe.Err
		}
		return nil, &ParseError{File: src, Line: line, Field: "header", Err: err}
	}
	t := &table{r: r, header: make([]string, len(h)), cols: make(map[string]int, len(h)), lines: bytes.Count(data, []byte{'\n'})}
	for i, name := range h {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		t.header[i] = name
		if _, dup := t.cols[name]; !dup {
			t.cols[name] = i
		}
	}
	for _, name := range required {
		if _, ok := t.cols[name]; !ok {
			line, _ := r.FieldPos(0)
			return nil, &ParseError{File: src, Line: line, Field: name, Err: ErrMissingColumn}
		}
	}
	return t, nil
}

// next returns the next record and its 1-based line. The record is reused by
// the following call. A record whose field count differs from the header's
// is returned with a non-nil error; io.EOF ends the table.
func (t *table) next() ([]string, int, error) {
	rec, err := t.r.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		line := 0
		if errors.As(err, &pe) {
			line = pe.StartLine
			err = pe.Err
		}
		return nil, line, err
	}
	line, _ := t.r.FieldPos(0)
	if len(rec) != len(t.header) {
		return nil, line, fmt.Errorf("got %d fields, want %d", len(rec), len(t.header))
	}
	return rec, line, nil
}

// row parses the fields of one record, remembering the first failure.
type row struct {
	t     *table
	rec   []string
	field string // field of the first error
	err   error
	known bool // the row says its architecture (job tables)
}

func (r *row) fail(field string, err error) {
	if r.err == nil {
		r.field, r.err = field, err
	}
}

// str returns the named column ("" if the table lacks it).
func (r *row) str(name string) string {
	i, ok := r.t.cols[name]
	if !ok {
		return ""
	}
	return r.rec[i]
}

// float parses the named column as a float64.
func (r *row) float(name string) float64 {
	s := strings.TrimSpace(r.str(name))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.fail(name, fmt.Errorf("parse %q as number", s))
		return 0
	}
	return v
}

// int parses the named column as an integer. Integral floats ("8.0") are
// accepted because some traces write counts that way.
func (r *row) int(name string) int64 {
	s := strings.TrimSpace(r.str(name))
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return v
	}
	f, ferr := strconv.ParseFloat(s, 64)
	if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.fail(name, fmt.Errorf("parse %q as integer", s))
		return 0
	}
	return int64(f)
}

// optInt is int, but an empty field reads as 0.
func (r *row) optInt(name string) int64 {
	if strings.TrimSpace(r.str(name)) == "" {
		return 0
	}
	return r.int(name)
}

// gpus converts a parsed count to int, rejecting values that do not fit.
func (r *row) gpus(name string) int {
	v := r.int(name)
	if v > math.MaxInt32 || v < math.MinInt32 {
		r.fail(name, fmt.Errorf("gpu count %d out of range", v))
		return 0
	}
	return int(v)
}
