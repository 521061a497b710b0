package llm

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
	r    *csv.Reader
	n    int            // fields of the header
	cols map[string]int // column name -> index
	// rows bounds the data rows (newlines + 1), to size slices once.
	rows int
}

// openTable reads the header of data, whose leading UTF-8 byte-order mark
// is skipped; every name in required must be a column (names are matched
// after trimming spaces).
func openTable(data []byte, src string, required ...string) (*table, error) {
	data = inputfile.TrimBOM(data)
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	r.FieldsPerRecord = -1
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
	t := &table{r: r, n: len(h), cols: make(map[string]int, len(h)), rows: bytes.Count(data, []byte{'\n'}) + 1}
	for i, name := range h {
		name = strings.TrimSpace(name)
		if _, dup := t.cols[name]; !dup {
			t.cols[name] = i
		}
	}
	for _, name := range required {
		if _, ok := t.cols[name]; !ok {
			return nil, &ParseError{File: src, Line: 1, Field: name, Err: ErrMissingColumn}
		}
	}
	return t, nil
}

// next returns the next record and its 1-based line; the record is reused
// by the following call. io.EOF ends the table. A record that does not
// parse, or whose field count differs from the header's, comes back with
// its line and an error.
func (t *table) next() ([]string, int, error) {
	rec, err := t.r.Read()
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		line := 0
		if errors.As(err, &pe) {
			line, err = pe.StartLine, pe.Err
		}
		return nil, line, err
	}
	line, _ := t.r.FieldPos(0)
	if len(rec) != t.n {
		return nil, line, fmt.Errorf("got %d fields, want %d", len(rec), t.n)
	}
	return rec, line, nil
}

// field is the value of column name in rec and its 1-based line and
// column.
func (t *table) field(rec []string, name string) (s string, line, col int) {
	i := t.cols[name]
	line, col = t.r.FieldPos(i)
	return strings.TrimSpace(rec[i]), line, col
}

// parseInt parses a token count: a decimal integer, or an integral float
// ("8.0", "1e3") as some tools write counts.
func parseInt(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("parse %q as an integer", s)
	}
	return int64(f), nil
}

// maxDecompressed bounds a gzip input's decompressed size, like a file's
// (inputfile.Trace); a variable so that a test can lower it.
var maxDecompressed = inputfile.Trace

// gunzip returns data decompressed when it starts with gzip's magic, and
// data otherwise; the decompressed size is bounded (inputfile.Gunzip at
// maxDecompressed), so a small gzip bomb fails instead of filling memory.
func gunzip(data []byte, src string) ([]byte, error) {
	raw, err := inputfile.Gunzip(data, maxDecompressed, src)
	if err != nil {
		return nil, &ParseError{File: src, Field: "gzip", Err: err}
	}
	return raw, nil
}
