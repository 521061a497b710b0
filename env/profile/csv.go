package profile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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

// readTable decodes data as CSV with a header naming at least the columns
// want. Plain files (no quotes, no carriage returns, as the traces are)
// take a fast path that splits lines and commas itself; anything else, or
// anything the fast path would have to refuse, goes through encoding/csv,
// so the two agree on every input (FuzzReadTable checks) and errors come
// from encoding/csv.
func readTable(data string, want []string) (*table, error) {
	if t := readTablePlain(data); t != nil {
		return t, checkColumns(t, want)
	}
	return readTableCSV(data, want)
}

// readTablePlain is readTable's fast path: nil unless data has no quote or
// carriage return, a header, and the header's number of fields on every
// non-empty line (encoding/csv skips empty lines).
func readTablePlain(s string) *table {
	if strings.IndexByte(s, '"') >= 0 || strings.IndexByte(s, '\r') >= 0 {
		return nil
	}
	// Every cell is a substring of s.
	t := &table{ncol: -1}
	line := 0
	for len(s) > 0 {
		line++
		var l string
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			l, s = s[:i], s[i+1:]
		} else {
			l, s = s, ""
		}
		if l == "" {
			continue
		}
		n := strings.Count(l, ",") + 1
		if t.ncol < 0 {
			t.ncol = n
			t.cols = make(map[string]int, n)
			for i := 0; i < n; i++ {
				f, rest, _ := strings.Cut(l, ",")
				t.cols[strings.TrimSpace(f)] = i
				l = rest
			}
			if t.cells == nil {
				rows := strings.Count(s, "\n") + 1
				t.cells = make([]string, 0, rows*n)
				t.lines = make([]int, 0, rows)
			}
			continue
		}
		if n != t.ncol {
			return nil
		}
		for i := 0; i < n-1; i++ {
			f, rest, _ := strings.Cut(l, ",")
			t.cells = append(t.cells, f)
			l = rest
		}
		t.cells = append(t.cells, l)
		t.lines = append(t.lines, line)
	}
	if t.ncol < 0 {
		return nil
	}
	return t
}

// checkColumns returns a ParseError naming the first of want that t's
// header lacks.
func checkColumns(t *table, want []string) error {
	for _, w := range want {
		if _, ok := t.cols[w]; !ok {
			return &ParseError{Line: 1, Field: w, Err: errors.New("missing column")}
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

func (t *table) float(i int, col string, check func(float64) error) (float64, error) {
	s := t.cell(i, t.cols[col])
	v, err := parseFloat(s)
	if err != nil {
		return 0, &ParseError{Line: t.lines[i], Field: col, Err: fmt.Errorf("%w: %q", errNotNumber, s)}
	}
	if err := check(v); err != nil {
		return 0, &ParseError{Line: t.lines[i], Field: col, Err: err}
	}
	return v, nil
}

func (t *table) posInt(i int, col string) (int, error) {
	s := t.cell(i, t.cols[col])
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, &ParseError{Line: t.lines[i], Field: col, Err: fmt.Errorf("%w: %q", errNotInt, s)}
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
func ParsePlacements(data []byte) ([]PlacementRow, error) { return parsePlacements(string(data)) }

// parsePlacements is ParsePlacements on a string, which the rows' strings may
// share.
func parsePlacements(data string) ([]PlacementRow, error) {
	t, err := readTable(data, []string{"placement", "local_bsz", "step_time", "sync_time"})
	if err != nil {
		return nil, err
	}
	out := make([]PlacementRow, 0, t.nrows())
	for i := range t.nrows() {
		var r PlacementRow
		r.Placement = t.cell(i, t.cols["placement"])
		if r.Placement == "" || strings.Trim(r.Placement, "123456789") != "" {
			return nil, &ParseError{Line: t.lines[i], Field: "placement", Err: fmt.Errorf("%w: %q", errPlacement, r.Placement)}
		}
		if r.LocalBsz, err = t.posInt(i, "local_bsz"); err != nil {
			return nil, err
		}
		if r.StepTime, err = t.float(i, "step_time", nonNegative); err != nil {
			return nil, err
		}
		if r.SyncTime, err = t.float(i, "sync_time", nonNegative); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseScalability decodes the contents of a scalability.csv file (columns
// num_nodes, num_replicas, local_bsz, step_time, sync_time).
func ParseScalability(data []byte) ([]ScalabilityRow, error) { return parseScalability(string(data)) }

// parseScalability is ParseScalability on a string, which the rows' strings may
// share.
func parseScalability(data string) ([]ScalabilityRow, error) {
	t, err := readTable(data, []string{"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"})
	if err != nil {
		return nil, err
	}
	out := make([]ScalabilityRow, 0, t.nrows())
	for i := range t.nrows() {
		var r ScalabilityRow
		if r.NumNodes, err = t.posInt(i, "num_nodes"); err != nil {
			return nil, err
		}
		if r.NumReplicas, err = t.posInt(i, "num_replicas"); err != nil {
			return nil, err
		}
		if r.LocalBsz, err = t.posInt(i, "local_bsz"); err != nil {
			return nil, err
		}
		if r.StepTime, err = t.float(i, "step_time", nonNegative); err != nil {
			return nil, err
		}
		if r.SyncTime, err = t.float(i, "sync_time", nonNegative); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseValidation decodes the contents of a validation-<bsz>.csv file
// (columns progress, iteration, metric, grad_sqr, grad_var), one row per
// epoch.
func ParseValidation(data []byte) ([]ValidationRow, error) { return parseValidation(string(data)) }

// parseValidation is ParseValidation on a string, which the rows' strings may
// share.
func parseValidation(data string) ([]ValidationRow, error) {
	t, err := readTable(data, []string{"progress", "iteration", "metric", "grad_sqr", "grad_var"})
	if err != nil {
		return nil, err
	}
	out := make([]ValidationRow, 0, t.nrows())
	for i := range t.nrows() {
		var r ValidationRow
		if r.Progress, err = t.float(i, "progress", nonNegative); err != nil {
			return nil, err
		}
		if r.Iteration, err = t.float(i, "iteration", nonNegative); err != nil {
			return nil, err
		}
		if r.Metric, err = t.float(i, "metric", finite); err != nil {
			return nil, err
		}
		if r.GradSqr, err = t.float(i, "grad_sqr", finite); err != nil {
			return nil, err
		}
		if r.GradVar, err = t.float(i, "grad_var", finite); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
