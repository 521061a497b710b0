package profile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"strconv"
	"strings"
)

// PlacementRow is one row of placements.csv: the measured step and sync time
// of one placement at one per-GPU batch size.
type PlacementRow struct {
	// Placement is the digit string of GPUs per node, e.g. "1244".
	Placement string
	// LocalBsz is the per-GPU batch size.
	LocalBsz int
	// StepTime is the seconds per iteration.
	StepTime float64
	// SyncTime is the all-reduce share of StepTime, in seconds.
	SyncTime float64
}

// ScalabilityRow is one row of scalability.csv: the same measurement as
// PlacementRow for a larger, spread placement known only by its node and
// replica counts.
type ScalabilityRow struct {
	NumNodes    int     // nodes used
	NumReplicas int     // GPUs used
	LocalBsz    int     // per-GPU batch size
	StepTime    float64 // seconds per iteration
	SyncTime    float64 // all-reduce share of StepTime, seconds
}

// ValidationRow is one row (one epoch) of validation-<bsz>.csv.
type ValidationRow struct {
	Progress  float64 // statistical-efficiency-adjusted samples after the epoch
	Iteration float64 // iterations after the epoch
	Metric    float64 // validation metric after the epoch
	GradSqr   float64 // gradient squared-norm estimate during the epoch
	GradVar   float64 // gradient variance estimate during the epoch
}

// ParseError reports a malformed value in a profile CSV file. File is empty
// when the error comes from a decoder that was given bytes, not a file.
type ParseError struct {
	File  string // file name, if known
	Line  int    // 1-based line number
	Field string // column name
	Err   error  // what is wrong
}

// Error formats the error as file:line:field: message.
func (e *ParseError) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	return fmt.Sprintf("%s:%d:%s: %v", file, e.Line, e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

var (
	errNotNumber = errors.New("not a number")
	errNegative  = errors.New("negative or NaN")
	errNotFinite = errors.New("not finite")
	errNotInt    = errors.New("not a positive integer")
	errPlacement = errors.New("placement must be digits 1-9")
)

// table is a decoded CSV: rows of ncol cells, columns addressed by header
// name.
type table struct {
	cols  map[string]int
	ncol  int
	cells []string // row-major, ncol per row
	lines []int    // each row's line number
}

// nrows returns the number of rows after the header.
func (t *table) nrows() int { return len(t.lines) }

// cell returns row i's cell in column c, without surrounding space.
func (t *table) cell(i, c int) string { return strings.TrimSpace(t.cells[i*t.ncol+c]) }

// csvRows decodes data as CSV with a header naming at least the columns
// want, and calls row with every data row's line number and its cells in
// want's columns (in want's order, without surrounding space; row must not
// keep the slice). Plain files (no quotes, no carriage returns and the
// header's number of fields on every non-empty line, as the traces are)
// take a fast path that splits lines and commas itself and allocates
// nothing per row; anything else goes through encoding/csv, so the two
// agree on every input (FuzzCSVRows checks) and errors come from
// encoding/csv.
// A leading UTF-8 byte-order mark is skipped.
func csvRows(data string, want []string, row func(line int, cells []string) error) error {
	data = strings.TrimPrefix(data, "\ufeff")
	if plainShape(data) {
		return plainRows(data, want, row)
	}
	return tableRows(data, want, row)
}

// plainShape reports whether data takes csvRows's fast path: no quote or
// carriage return, a header, and the header's number of fields on every
// non-empty line (encoding/csv skips empty lines).
func plainShape(s string) bool {
	if strings.IndexByte(s, '"') >= 0 || strings.IndexByte(s, '\r') >= 0 {
		return false
	}
	ncol := -1
	for _, l := range lines(s) {
		n := strings.Count(l, ",") + 1
		if ncol < 0 {
			ncol = n
		} else if n != ncol {
			return false
		}
	}
	return ncol >= 0
}

// lines yields the non-empty lines of s (split at '\n') with their 1-based
// line numbers.
func lines(s string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		line := 0
		for len(s) > 0 {
			line++
			var l string
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				l, s = s[:i], s[i+1:]
			} else {
				l, s = s, ""
			}
			if l != "" && !yield(line, l) {
				return
			}
		}
	}
}

// plainRows is csvRows's fast path, for data that plainShape accepts.
func plainRows(s string, want []string, row func(line int, cells []string) error) error {
	var fields, cells []string
	var idx []int
	for line, l := range lines(s) {
		if fields == nil { // the header
			fields = make([]string, strings.Count(l, ",")+1)
			split(l, fields)
			// A repeated name means its last column, as a map from
			// name to column would.
			idx = make([]int, len(want))
			for k, w := range want {
				idx[k] = -1
				for c, f := range fields {
					if strings.TrimSpace(f) == w {
						idx[k] = c
					}
				}
				if idx[k] < 0 {
					return missingColumn(w)
				}
			}
			cells = make([]string, len(want))
			continue
		}
		split(l, fields)
		for k, c := range idx {
			cells[k] = strings.TrimSpace(fields[c])
		}
		if err := row(line, cells); err != nil {
			return err
		}
	}
	return nil
}

// split cuts l at its commas into fields, which has room for exactly
// every field.
func split(l string, fields []string) {
	for i := range len(fields) - 1 {
		fields[i], l, _ = strings.Cut(l, ",")
	}
	fields[len(fields)-1] = l
}

// tableRows is csvRows through encoding/csv.
func tableRows(data string, want []string, row func(line int, cells []string) error) error {
	t, err := readTableCSV(data, want)
	if err != nil {
		return err
	}
	cells := make([]string, len(want))
	for i := range t.nrows() {
		for k, w := range want {
			cells[k] = t.cell(i, t.cols[w])
		}
		if err := row(t.lines[i], cells); err != nil {
			return err
		}
	}
	return nil
}

// missingColumn is the error for a header that lacks column w.
func missingColumn(w string) error {
	return &ParseError{Line: 1, Field: w, Err: errors.New("missing column")}
}

// checkColumns returns a ParseError naming the first of want that t's
// header lacks.
func checkColumns(t *table, want []string) error {
	for _, w := range want {
		if _, ok := t.cols[w]; !ok {
			return missingColumn(w)
		}
	}
	return nil
}

// readTableCSV is readTable through encoding/csv.
func readTableCSV(data string, want []string) (*table, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		if err == io.EOF {
			return nil, &ParseError{Line: 1, Field: "header", Err: errors.New("empty file")}
		}
		return nil, &ParseError{Line: 1, Field: "header", Err: err}
	}
	t := &table{cols: make(map[string]int, len(header)), ncol: len(header)}
	for i, h := range header {
		t.cols[strings.TrimSpace(h)] = i
	}
	if err := checkColumns(t, want); err != nil {
		return nil, err
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			return nil, &ParseError{Line: line, Field: "record", Err: err}
		}
		line, _ := r.FieldPos(0)
		t.cells = append(t.cells, rec...)
		t.lines = append(t.lines, line)
	}
	return t, nil
}

// cellFloat parses cell s of column col on line as a float that check
// accepts.
func cellFloat(line int, col, s string, check func(float64) error) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, &ParseError{Line: line, Field: col, Err: fmt.Errorf("%w: %q", errNotNumber, s)}
	}
	if err := check(v); err != nil {
		return 0, &ParseError{Line: line, Field: col, Err: err}
	}
	return v, nil
}

// cellPosInt parses cell s of column col on line as a positive integer.
func cellPosInt(line int, col, s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, &ParseError{Line: line, Field: col, Err: fmt.Errorf("%w: %q", errNotInt, s)}
	}
	return v, nil
}

func nonNegative(v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return errNegative
	}
	return nil
}

func finite(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return errNotFinite
	}
	return nil
}

// ParsePlacements decodes the contents of a placements.csv file (columns
// placement, local_bsz, step_time, sync_time, located by header name).
// Errors are *ParseError values naming line and field.
func ParsePlacements(data []byte) ([]PlacementRow, error) { return parsePlacements(string(data), nil) }

var (
	placementCols   = []string{"placement", "local_bsz", "step_time", "sync_time"}
	scalabilityCols = []string{"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}
	validationCols  = []string{"progress", "iteration", "metric", "grad_sqr", "grad_var"}
)

// rowsHint is the number of rows data can hold at most (its lines), as a
// capacity for the decoded rows.
func rowsHint(data string) int { return strings.Count(data, "\n") + 1 }

// parsePlacements is ParsePlacements on a string. With intern nil the rows'
// placement strings share data; otherwise they are copies, one per
// distinct placement, kept in intern, so data may be reused.
func parsePlacements(data string, intern map[string]string) ([]PlacementRow, error) {
	out := make([]PlacementRow, 0, rowsHint(data))
	err := csvRows(data, placementCols, func(line int, c []string) error {
		var r PlacementRow
		var err error
		r.Placement = c[0]
		if r.Placement == "" || strings.Trim(r.Placement, "123456789") != "" {
			return &ParseError{Line: line, Field: "placement", Err: fmt.Errorf("%w: %q", errPlacement, r.Placement)}
		}
		if intern != nil {
			p, ok := intern[r.Placement]
			if !ok {
				p = strings.Clone(r.Placement)
				intern[p] = p
			}
			r.Placement = p
		}
		if r.LocalBsz, err = cellPosInt(line, "local_bsz", c[1]); err != nil {
			return err
		}
		if r.StepTime, err = cellFloat(line, "step_time", c[2], nonNegative); err != nil {
			return err
		}
		if r.SyncTime, err = cellFloat(line, "sync_time", c[3], nonNegative); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ParseScalability decodes the contents of a scalability.csv file (columns
// num_nodes, num_replicas, local_bsz, step_time, sync_time).
func ParseScalability(data []byte) ([]ScalabilityRow, error) { return parseScalability(string(data)) }

// parseScalability is ParseScalability on a string; the rows keep nothing
// of it.
func parseScalability(data string) ([]ScalabilityRow, error) {
	out := make([]ScalabilityRow, 0, rowsHint(data))
	err := csvRows(data, scalabilityCols, func(line int, c []string) error {
		var r ScalabilityRow
		var err error
		if r.NumNodes, err = cellPosInt(line, "num_nodes", c[0]); err != nil {
			return err
		}
		if r.NumReplicas, err = cellPosInt(line, "num_replicas", c[1]); err != nil {
			return err
		}
		if r.LocalBsz, err = cellPosInt(line, "local_bsz", c[2]); err != nil {
			return err
		}
		if r.StepTime, err = cellFloat(line, "step_time", c[3], nonNegative); err != nil {
			return err
		}
		if r.SyncTime, err = cellFloat(line, "sync_time", c[4], nonNegative); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ParseValidation decodes the contents of a validation-<bsz>.csv file
// (columns progress, iteration, metric, grad_sqr, grad_var), one row per
// epoch.
func ParseValidation(data []byte) ([]ValidationRow, error) { return parseValidation(string(data)) }

// parseValidation is ParseValidation on a string; the rows keep nothing of
// it.
func parseValidation(data string) ([]ValidationRow, error) {
	out := make([]ValidationRow, 0, rowsHint(data))
	err := csvRows(data, validationCols, func(line int, c []string) error {
		var r ValidationRow
		var err error
		if r.Progress, err = cellFloat(line, "progress", c[0], nonNegative); err != nil {
			return err
		}
		if r.Iteration, err = cellFloat(line, "iteration", c[1], nonNegative); err != nil {
			return err
		}
		if r.Metric, err = cellFloat(line, "metric", c[2], finite); err != nil {
			return err
		}
		if r.GradSqr, err = cellFloat(line, "grad_sqr", c[3], finite); err != nil {
			return err
		}
		if r.GradVar, err = cellFloat(line, "grad_var", c[4], finite); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
