package converge

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// measurementsCSV is the digitised table of published measurements the
// model is fitted to; every row names its source (repository, commit, file
// and row). See doc.go for what each source measured.
//
//go:embed measurements.csv
var measurementsCSV []byte

// Kind says what a Measurement's Value is.
type Kind string

// The kinds of measurement in the table.
const (
	// KindAccuracy is a test accuracy (fraction or percent, as the source
	// recorded it) at Progress.
	KindAccuracy Kind = "acc"
	// KindFinal is the test accuracy at the end of a run's schedule,
	// which ran for Progress.
	KindFinal Kind = "final"
	// KindPGNS is the gradient noise scale (gradient variance over squared
	// gradient norm, in examples) measured during the epoch ending at
	// Progress.
	KindPGNS Kind = "pgns"
	// KindDiverged records a configuration whose training failed; Value
	// is NaN.
	KindDiverged Kind = "diverged"
)

// Measurement is one row of the measurement table.
type Measurement struct {
	// Source is the short name of the source (tsm, syncswitch, blogcode,
	// paddle, slowmo).
	Source string
	// Family is the model family the row belongs to.
	Family string
	// Sync is the synchronization strategy of the run: bsp, asp, or
	// local(H) for local SGD averaging every H steps (ParsePeriod).
	Sync string
	// Workers is the number of workers, 0 where the source does not say.
	Workers int
	// Batch is the global batch size, 0 where the source does not say.
	Batch int
	// Run numbers repeated runs of one configuration.
	Run int
	// Kind says what Value is.
	Kind Kind
	// Progress is where in training the value was measured, in Unit; 0
	// for a final accuracy whose schedule the source does not state.
	Progress float64
	// Unit is Progress's unit: epoch (passes over the training set) or
	// worker-batch (one worker's mini-batch; a BSP step of w workers is w).
	Unit string
	// Value is the measured value.
	Value float64
	// Ref is where the value was read: repository@commit:path#row, or
	// paper:authors - title, Table N#row for a number printed in a paper.
	Ref string
}

var measurementsHeader = []string{"source", "family", "sync", "workers", "batch", "run", "kind", "progress", "unit", "value", "ref"}

// ErrBadTable is returned by ParseMeasurements for a table that does not
// have the expected columns or values.
var ErrBadTable = errors.New("converge: bad measurement table")

// ParseMeasurements decodes a measurement table (CSV with the header
// source,family,sync,workers,batch,run,kind,progress,unit,value,ref).
func ParseMeasurements(data []byte) ([]Measurement, error) {
	r := csv.NewReader(strings.NewReader(string(data)))
	r.FieldsPerRecord = len(measurementsHeader)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTable, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadTable)
	}
	for i, h := range measurementsHeader {
		if recs[0][i] != h {
			return nil, fmt.Errorf("%w: column %d is %q, want %q", ErrBadTable, i+1, recs[0][i], h)
		}
	}
	out := make([]Measurement, 0, len(recs)-1)
	for i, c := range recs[1:] {
		line := i + 2
		m := Measurement{Source: c[0], Family: c[1], Sync: c[2], Kind: Kind(c[6]), Unit: c[8], Ref: c[10]}
		ints := []*int{&m.Workers, &m.Batch, &m.Run}
		for j, p := range ints {
			v, err := strconv.Atoi(c[3+j])
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%w: line %d: %s %q", ErrBadTable, line, measurementsHeader[3+j], c[3+j])
			}
			*p = v
		}
		if m.Progress, err = strconv.ParseFloat(c[7], 64); err != nil || m.Progress < 0 || math.IsInf(m.Progress, 0) || math.IsNaN(m.Progress) {
			return nil, fmt.Errorf("%w: line %d: progress %q", ErrBadTable, line, c[7])
		}
		if m.Value, err = strconv.ParseFloat(c[9], 64); err != nil || math.IsInf(m.Value, 0) {
			return nil, fmt.Errorf("%w: line %d: value %q", ErrBadTable, line, c[9])
		}
		switch m.Kind {
		case KindAccuracy, KindFinal, KindPGNS:
			if math.IsNaN(m.Value) {
				return nil, fmt.Errorf("%w: line %d: %s value is NaN", ErrBadTable, line, m.Kind)
			}
		case KindDiverged:
		default:
			return nil, fmt.Errorf("%w: line %d: unknown kind %q", ErrBadTable, line, c[6])
		}
		if m.Source == "" || m.Family == "" || m.Ref == "" {
			return nil, fmt.Errorf("%w: line %d: source, family and ref are required", ErrBadTable, line)
		}
		out = append(out, m)
	}
	return out, nil
}

// Measurements returns the embedded measurement table.
func Measurements() []Measurement {
	ms, err := ParseMeasurements(measurementsCSV)
	if err != nil {
		panic("converge: embedded table: " + err.Error())
	}
	return ms
}

// selectRows returns the rows of ms for which keep is true.
func selectRows(ms []Measurement, keep func(Measurement) bool) []Measurement {
	var out []Measurement
	for _, m := range ms {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// crossing returns where a curve (points sorted by progress) first reaches
// target, interpolating linearly between the last point below and the first
// at or above it; ok is false when no point reaches it. A curve already at
// the target at its first point crosses there.
func crossing(progress, value []float64, target float64) (at float64, ok bool) {
	for i := range value {
		if value[i] >= target {
			if i == 0 {
				return progress[0], true
			}
			x0, y0, x1, y1 := progress[i-1], value[i-1], progress[i], value[i]
			return x0 + (target-y0)/(y1-y0)*(x1-x0), true
		}
	}
	return 0, false
}
