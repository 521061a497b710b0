package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/internal/inputfile"
)

// MachineSeries is the resource-usage time series of one machine of the
// Alibaba cluster-trace-v2018 machine_usage table. All slices have one entry
// per row, sorted by Time (stable with respect to file order). Utilisations
// are fractions in [0, 1] (the file's percentages divided by 100).
type MachineSeries struct {
	Machine string    // machine_id, e.g. "m_1932"
	Time    []float64 // time_stamp, seconds since the start of the trace
	CPU     []float64 // cpu_util_percent / 100
	Mem     []float64 // mem_util_percent / 100 (memory capacity used)
	// MemBW is mem_gps / 100, the normalised memory bandwidth in use. It is
	// NaN where the field is empty, which is most rows of the trace.
	MemBW []float64
	// NetIn and NetOut are net_in / 100 and net_out / 100, the normalised
	// network traffic. In the v2018 trace they never decrease within a
	// machine, so they behave like cumulative counters rather than
	// utilisation (alibaba/clusterdata issue #55); they are returned as
	// recorded.
	NetIn  []float64
	NetOut []float64
}

// machineUsageColumns are the columns of machine_usage.csv, which has no
// header (cluster-trace-v2018/schema.txt).
var machineUsageColumns = [...]string{
	"machine_id", "time_stamp", "cpu_util_percent", "mem_util_percent",
	"mem_gps", "mkpi", "net_in", "net_out", "disk_io_percent",
}

// ErrOutOfRange reports a utilisation outside 0-100 percent.
var ErrOutOfRange = errors.New("datasets: value out of range")

// ReasonOutOfRange counts machine-usage rows skipped because a time was
// negative or not finite or a utilisation lay outside 0-100 percent.
const ReasonOutOfRange = "out of range"

// DecodeMachineUsage parses an Alibaba cluster-trace-v2018 machine_usage
// table (no header; machine_id, time_stamp, cpu_util_percent,
// mem_util_percent, mem_gps, mkpi, net_in, net_out, disk_io_percent). It is
// pure: no I/O. Gzip-compressed data is decompressed first.
//
// It returns one MachineSeries per machine, in order of first appearance.
// A row must have 9 fields, a non-empty machine_id and a finite, non-negative
// time_stamp; cpu_util_percent, mem_util_percent, net_in and net_out must be
// numbers in [0, 100], and mem_gps empty or in [0, 100]. mkpi and
// disk_io_percent are not used and not checked. A row that breaks these
// rules is a *ParseError naming the line and column (wrapping ErrOutOfRange,
// ErrNegative or ErrNotFinite where they apply), or is skipped under
// o.SkipBad (see DecodeMachineUsageSkips for the counts). A table with no
// rows left is an error (ErrEmpty).
func DecodeMachineUsage(data []byte, o Options) ([]MachineSeries, error) {
	ms, _, err := DecodeMachineUsageSkips(data, o)
	return ms, err
}

// DecodeMachineUsageSkips is DecodeMachineUsage that also returns how many
// rows were skipped under o.SkipBad, by reason (ReasonMalformed,
// ReasonOutOfRange). The map is nil when nothing was skipped.
func DecodeMachineUsageSkips(data []byte, o Options) ([]MachineSeries, map[string]int, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return nil, nil, err
	}
	r := csv.NewReader(bytes.NewReader(inputfile.TrimBOM(data)))
	r.ReuseRecord = true
	r.FieldsPerRecord = -1

	var (
		series []MachineSeries
		index  = make(map[string]int)
		skips  map[string]int
	)
	// bad handles a bad row: skipped and counted under SkipBad, otherwise
	// a *ParseError.
	bad := func(line int, field string, reason string, err error) error {
		if !o.SkipBad {
			return &ParseError{File: o.Source, Line: line, Field: field, Err: err}
		}
		if skips == nil {
			skips = make(map[string]int)
		}
		skips[reason]++
		return nil
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
				line, err = pe.StartLine, pe.Err
			}
			if err := bad(line, "row", ReasonMalformed, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(machineUsageColumns) {
			err := fmt.Errorf("got %d fields, want %d", len(rec), len(machineUsageColumns))
			if err := bad(line, "row", ReasonMalformed, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		u, field, reason, err := parseMachineUsageRow(rec)
		if err != nil {
			if err := bad(line, field, reason, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		i, ok := index[u.machine]
		if !ok {
			i = len(series)
			index[u.machine] = i
			series = append(series, MachineSeries{Machine: u.machine})
		}
		s := &series[i]
		s.Time = append(s.Time, u.time)
		s.CPU = append(s.CPU, u.cpu)
		s.Mem = append(s.Mem, u.mem)
		s.MemBW = append(s.MemBW, u.membw)
		s.NetIn = append(s.NetIn, u.netIn)
		s.NetOut = append(s.NetOut, u.netOut)
	}
	if len(series) == 0 {
		return nil, skips, &ParseError{File: o.Source, Field: "row", Err: ErrEmpty}
	}
	for i := range series {
		series[i].sortByTime()
	}
	return series, skips, nil
}

// machineUsageRow is one parsed row, utilisations as fractions.
type machineUsageRow struct {
	machine                              string
	time, cpu, mem, membw, netIn, netOut float64
}

// parseMachineUsageRow parses and checks one 9-field record. On failure it
// returns the column at fault, the skip reason and the error.
func parseMachineUsageRow(rec []string) (u machineUsageRow, field, reason string, err error) {
	u.machine = strings.TrimSpace(rec[0])
	if u.machine == "" {
		return u, machineUsageColumns[0], ReasonMalformed, errors.New("empty machine_id")
	}
	num := func(i int) (float64, error) {
		s := strings.TrimSpace(rec[i])
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %q as number", s)
		}
		return v, nil
	}
	u.time, err = num(1)
	switch {
	case err != nil:
		return u, machineUsageColumns[1], ReasonMalformed, err
	case math.IsNaN(u.time) || math.IsInf(u.time, 0):
		return u, machineUsageColumns[1], ReasonOutOfRange, fmt.Errorf("%w: %v", ErrNotFinite, u.time)
	case u.time < 0:
		return u, machineUsageColumns[1], ReasonOutOfRange, fmt.Errorf("%w: %v", ErrNegative, u.time)
	}
	pct := func(i int, optional bool) (float64, string, error) {
		if optional && strings.TrimSpace(rec[i]) == "" {
			return math.NaN(), "", nil
		}
		v, err := num(i)
		if err != nil {
			return 0, ReasonMalformed, err
		}
		if !(v >= 0 && v <= 100) { // also catches NaN
			return 0, ReasonOutOfRange, fmt.Errorf("%w: %v not in [0, 100]", ErrOutOfRange, v)
		}
		return v / 100, "", nil
	}
	for _, c := range []struct {
		col      int
		optional bool
		dst      *float64
	}{
		{2, false, &u.cpu},
		{3, false, &u.mem},
		{4, true, &u.membw},
		{6, false, &u.netIn},
		{7, false, &u.netOut},
	} {
		var v float64
		if v, reason, err = pct(c.col, c.optional); err != nil {
			return u, machineUsageColumns[c.col], reason, err
		}
		*c.dst = v
	}
	return u, "", "", nil
}

// sortByTime sorts the rows of s by Time, keeping file order among equal
// times. The trace is already sorted, so this usually only checks.
func (s *MachineSeries) sortByTime() {
	if slices.IsSorted(s.Time) {
		return
	}
	idx := make([]int, len(s.Time))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case s.Time[a] < s.Time[b]:
			return -1
		case s.Time[a] > s.Time[b]:
			return 1
		}
		return 0
	})
	for _, col := range []*[]float64{&s.Time, &s.CPU, &s.Mem, &s.MemBW, &s.NetIn, &s.NetOut} {
		old := *col
		sorted := make([]float64, len(old))
		for i, j := range idx {
			sorted[i] = old[j]
		}
		*col = sorted
	}
}

// ReadMachineUsage reads and decodes a machine_usage.csv file (*.gz or any
// gzip data is decompressed). Bad rows are errors; use os.ReadFile and
// DecodeMachineUsage with Options.SkipBad to skip them instead.
func ReadMachineUsage(path string) ([]MachineSeries, error) {
	return readWith(path, "machine usage", Options{}, DecodeMachineUsage)
}
