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
	"unsafe"

	"github.com/drover-sched/drover/internal/inputfile"
)

// table reads a headed CSV file row by row, resolving columns by name.
// Its rows are read by encoding/csv, or, when the data holds no double
// quote (every field then plain, every record one line), split on commas
// and newlines by the table itself, in place: the same records, lines and
// columns as encoding/csv gives them (TestTablePlain, FuzzTablePlain),
// without its copy of every record.
type table struct {
	r    *csv.Reader    // the header's reader, and the rows' unless plain
	n    int            // fields of the header
	cols map[string]int // column name -> index
	// rows bounds the data rows (newlines + 1), to size slices once.
	rows int

	// plain is set when the rows are split by the table: text is what
	// is left of them (data's bytes, read in place: see openTable),
	// line the lines read (the header's included), rec and at the
	// fields of the last record and their 1-based byte columns, recLine
	// its line.
	plain         bool
	text          string
	line, recLine int
	rec           []string
	at            []int
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
	if bytes.IndexByte(data, '"') < 0 {
		// The header's line: without quotes a record is one line.
		t.line, _ = r.FieldPos(0)
		// The rows are read in place: their fields are slices of data,
		// which the decoders parse into numbers and keep none of past
		// the call (errors quote them, copied), as ParsePerfTable reads
		// its table; a copy would be a trace's size of fresh memory.
		rest := data[r.InputOffset():]
		t.plain, t.text = true, unsafe.String(unsafe.SliceData(rest), len(rest))
		t.rec, t.at = make([]string, 0, t.n), make([]int, 0, t.n)
	}
	return t, nil
}

// next returns the next record and its 1-based line; the record is reused
// by the following call. io.EOF ends the table. A record that does not
// parse, or whose field count differs from the header's, comes back with
// its line and an error.
func (t *table) next() ([]string, int, error) {
	if t.plain {
		return t.nextPlain()
	}
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

// nextPlain is next for rows without quotes, read as encoding/csv reads
// them (comma ',', no comment character, leading spaces kept): lines
// end at '\n', one '\r' before it (or before the end of the data) is
// dropped, empty lines are skipped but counted, and a record's fields
// are its line split at every comma.
func (t *table) nextPlain() ([]string, int, error) {
	var s string
	for s == "" {
		if t.text == "" {
			return nil, 0, io.EOF
		}
		s, t.text, _ = strings.Cut(t.text, "\n")
		s = strings.TrimSuffix(s, "\r")
		t.line++
	}
	t.recLine = t.line
	rec, at := t.rec[:0], t.at[:0]
	for col := 1; ; {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			rec, at = append(rec, s), append(at, col)
			break
		}
		rec, at = append(rec, s[:i]), append(at, col)
		s, col = s[i+1:], col+i+1
	}
	t.rec, t.at = rec, at
	if len(rec) != t.n {
		return nil, t.line, fmt.Errorf("got %d fields, want %d", len(rec), t.n)
	}
	return rec, t.line, nil
}

// column names a column of the table and holds its index, looked up
// once instead of at every row.
type column struct {
	name string
	i    int
}

// column is the column called name (index 0 when there is none: read
// only the columns openTable required, or checked).
func (t *table) column(name string) column { return column{name, t.cols[name]} }

// field is the value of column c in rec and its 1-based line and
// column.
func (t *table) field(rec []string, c column) (s string, line, col int) {
	i := c.i
	if t.plain {
		line, col = t.recLine, t.at[i]
	} else {
		line, col = t.r.FieldPos(i)
	}
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
