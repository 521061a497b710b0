package infer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// PerfTable is a table of measured iteration latencies, SplitwiseSim's
// performance database (data/perf_model.csv; ../shared/traces/llm/
// calibration/splitwise_perf_model.csv), reduced the way SplitwiseSim's
// DatabasePerformanceModel.init_predictor (performance_model.py) reduces it:
// for each (model, hardware, tensor parallelism), the rows are grouped by
// batch tokens = prompt_size x batch_size, and each group's median prompt
// time and median token time (in seconds: the file's milliseconds / 1000,
// divided before the median as there) is one knot of a piecewise-linear
// curve, extrapolated linearly beyond the first and last knots
// (scipy.interpolate.interp1d(x, y, fill_value="extrapolate")).
//
// RooflinePerfTable builds a table of the same kind without measurements,
// from datasheets and the models' architectures (Derived reports it).
type PerfTable struct {
	curves map[perfKey]*perfCurve
	// derived marks a table built by RooflinePerfTable.
	derived bool
}

// Derived reports whether t's latencies are derived (RooflinePerfTable's
// built-in roofline) rather than measured.
func (t *PerfTable) Derived() bool { return t != nil && t.derived }

type perfKey struct {
	model, hardware string
	tp              int
}

// perfCurve is one (model, hardware, TP)'s knots: X the batch tokens in
// ascending order, Prompt and Token the median latencies in seconds.
type perfCurve struct {
	x, prompt, token []float64
}

// ErrBadPerfTable is returned for a performance table that cannot be read.
var ErrBadPerfTable = errors.New("infer: bad performance table")

// maxPerfRows bounds the rows ParsePerfTable reads (the real table has
// 1,260).
const maxPerfRows = 1 << 20

// ParsePerfTable reads a performance table in SplitwiseSim's CSV format:
// a header naming at least model, hardware, tensor_parallel, prompt_size,
// batch_size, prompt_time and token_time (ms), in any order, then one row
// per measurement. Times are read as pandas reads them (ParseFloatPandas),
// as SplitwiseSim does. It does no I/O: the caller reads the file.
func ParsePerfTable(data []byte) (*PerfTable, error) {
	names := [...]string{"model", "hardware", "tensor_parallel", "prompt_size", "batch_size", "prompt_time", "token_time"}
	var col [len(names)]int
	groups := map[perfKey]map[int64]*perfGroup{}
	var lastKey perfKey
	var last map[int64]*perfGroup // groups[lastKey]: rows come in runs of one key
	line := 0
	err := eachRecord(data, !isPlainCSV(data), func(rec []string) error {
		line++
		if line == 1 {
			for j, name := range names {
				col[j] = -1
				for i, h := range rec {
					if h == name {
						col[j] = i // the last of repeated names, as a map from name to column keeps
					}
				}
				if col[j] < 0 {
					return fmt.Errorf("%w: no column %q", ErrBadPerfTable, name)
				}
			}
			return nil
		}
		if line > maxPerfRows {
			return fmt.Errorf("%w: more than %d rows", ErrBadPerfTable, maxPerfRows)
		}
		var ints [3]int64
		for j := range ints {
			v, err := strconv.ParseInt(rec[col[2+j]], 10, 64)
			if err != nil || v <= 0 || v > MaxTokens {
				return fmt.Errorf("%w: line %d: %s %q, want an integer in 1..%d", ErrBadPerfTable, line, names[2+j], rec[col[2+j]], MaxTokens)
			}
			ints[j] = v
		}
		var times [2]float64
		for j := range times {
			v, ok := ParseFloatPandas(rec[col[5+j]])
			if !ok || !(v > 0) {
				return fmt.Errorf("%w: line %d: %s %q, want a positive time in ms", ErrBadPerfTable, line, names[5+j], rec[col[5+j]])
			}
			times[j] = v / 1000
		}
		k := perfKey{model: rec[col[0]], hardware: rec[col[1]], tp: int(ints[0])}
		if last == nil || k != lastKey {
			if last = groups[k]; last == nil {
				// The record may be reused: keep copies of its strings.
				k.model, k.hardware = strings.Clone(k.model), strings.Clone(k.hardware)
				last = map[int64]*perfGroup{}
				groups[k] = last
			}
			lastKey = k
		}
		bt := ints[1] * ints[2]
		g := last[bt]
		if g == nil {
			g = &perfGroup{}
			last[bt] = g
		}
		g.prompt = append(g.prompt, times[0])
		g.token = append(g.token, times[1])
		return nil
	})
	if err == nil && line == 0 {
		err = fmt.Errorf("header: %w", io.EOF)
	}
	if err != nil {
		if !errors.Is(err, ErrBadPerfTable) {
			err = fmt.Errorf("%w: %v", ErrBadPerfTable, err)
		}
		return nil, err
	}
	return reduceGroups(groups)
}

// perfGroup is the prompt and token times (s) of the rows of one
// (model, hardware, TP) and batch-token value.
type perfGroup struct{ prompt, token []float64 }

// reduceGroups makes each (model, hardware, TP)'s groups one curve: its
// batch-token values in ascending order as knots, the groups' median
// times as the values.
func reduceGroups(groups map[perfKey]map[int64]*perfGroup) (*PerfTable, error) {
	t := &PerfTable{curves: map[perfKey]*perfCurve{}}
	for k, gs := range groups {
		if len(gs) < 2 {
			return nil, fmt.Errorf("%w: %s on %s TP%d: %d batch-token value, want 2 or more to interpolate", ErrBadPerfTable, k.model, k.hardware, k.tp, len(gs))
		}
		xs := make([]int64, 0, len(gs))
		for x := range gs {
			xs = append(xs, x)
		}
		slices.Sort(xs)
		c := &perfCurve{}
		for _, x := range xs {
			c.x = append(c.x, float64(x))
			c.prompt = append(c.prompt, median(gs[x].prompt))
			c.token = append(c.token, median(gs[x].token))
		}
		t.curves[k] = c
	}
	return t, nil
}

// isPlainCSV reports whether data is CSV without quotes or carriage
// returns, which eachRecord splits itself (encoding/csv would read it the
// same way).
func isPlainCSV(data []byte) bool {
	return bytes.IndexByte(data, '"') < 0 && bytes.IndexByte(data, '\r') < 0
}

// eachRecord calls f with each record of the CSV data, in order, and
// stops at f's first error, or at a record whose field count differs from
// the first's (csv.ErrFieldCount). The record's slice is reused between
// calls. With useCSV it reads data with encoding/csv; without, data must
// be plain (isPlainCSV), and it splits lines at '\n' and fields at ',',
// skipping empty lines, as encoding/csv does on such data.
func eachRecord(data []byte, useCSV bool, f func(rec []string) error) error {
	if useCSV {
		r := csv.NewReader(bytes.NewReader(data))
		r.ReuseRecord = true
		for {
			rec, err := r.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := f(rec); err != nil {
				return err
			}
		}
	}
	// The fields are slices of data, read in place: ParsePerfTable keeps
	// none of them past the call (the curves' names are cloned), and a
	// table's bytes are not a small share of a short run's fresh memory.
	text := unsafe.String(unsafe.SliceData(data), len(data))
	var rec []string
	nf := -1
	for n := 1; len(text) > 0; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if line == "" {
			continue
		}
		rec = rec[:0]
		for {
			i := strings.IndexByte(line, ',')
			if i < 0 {
				break
			}
			rec = append(rec, line[:i])
			line = line[i+1:]
		}
		rec = append(rec, line)
		if nf < 0 {
			nf = len(rec)
		} else if len(rec) != nf {
			return fmt.Errorf("record on line %d: %w", n, csv.ErrFieldCount)
		}
		if err := f(rec); err != nil {
			return err
		}
	}
	return nil
}

// median is pandas' groupby median: the middle value, or the mean of the
// two middle values, (a + b) / 2.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// interp is scipy's interp1d linear call with extrapolation
// (interpolate/_interpolate.py, _call_linear): the knot index is
// searchsorted(x, xn) (leftmost), clipped to [1, len-1]; then
// slope = (y_hi - y_lo) / (x_hi - x_lo) and y = slope*(xn - x_lo) + y_lo,
// in that order, so that the results agree bit for bit.
func interp(x, y []float64, xn float64) float64 {
	i := sort.SearchFloat64s(x, xn)
	i = min(max(i, 1), len(x)-1)
	lo, hi := i-1, i
	slope := (y[hi] - y[lo]) / (x[hi] - x[lo])
	// float64() rounds the product apart, as NumPy does: the compiler may
	// not fuse it into a multiply-add (which GOAMD64=v3 builds would).
	return float64(slope*(xn-x[lo])) + y[lo]
}

// Has reports whether t holds measured rows for model on hardware at tensor
// parallelism tp.
func (t *PerfTable) Has(model, hardware string, tp int) bool {
	_, ok := t.curves[perfKey{model, hardware, tp}]
	return ok
}

// PromptTime is the measured-curve latency (s) of a prefill iteration of
// batchTokens tokens.
func (t *PerfTable) PromptTime(model, hardware string, tp, batchTokens int) (float64, bool) {
	c, ok := t.curves[perfKey{model, hardware, tp}]
	if !ok {
		return 0, false
	}
	return interp(c.x, c.prompt, float64(batchTokens)), true
}

// TokenTime is the measured-curve latency (s) of a decode iteration of
// batchTokens tokens (one per request in the batch; SplitwiseSim reads the
// same curve at the batch's size, whose knots are prompt_size x batch_size).
func (t *PerfTable) TokenTime(model, hardware string, tp, batchTokens int) (float64, bool) {
	c, ok := t.curves[perfKey{model, hardware, tp}]
	if !ok {
		return 0, false
	}
	return interp(c.x, c.token, float64(batchTokens)), true
}

// tps lists the tensor parallelisms t measured model on hardware with.
func (t *PerfTable) tps(model, hardware string) []int {
	var out []int
	for k := range t.curves {
		if k.model == model && k.hardware == hardware {
			out = append(out, k.tp)
		}
	}
	slices.Sort(out)
	return out
}

// ParsePerfTableFor reads a performance table as ParsePerfTable does, but
// parses only the rows that deployment cfg reads: its model's rows on its
// instances' GPU types at their tensor parallelism (each instance's curve
// is built from its own rows alone), skipping the others before their
// numbers are parsed, so that a table's rows of other models and GPUs
// cost a short run nothing. Those rows are then not checked either. It
// parses the whole table when it cannot tell which rows are read: a
// quoted field, a header without the model, hardware or tensor_parallel
// column, a row whose field count is not the header's, a tensor
// parallelism that is not an integer, or an instance without rows of its
// own (whose curve is extrapolated from other rows). An error is always
// the whole table's, at its own line.
func ParsePerfTableFor(data []byte, cfg Config) (*PerfTable, error) {
	used := usedPerfRows(data, cfg)
	t, err := ParsePerfTable(used)
	if err != nil && len(used) < len(data) {
		return ParsePerfTable(data) // the error's line in the whole table
	}
	return t, err
}

// usedPerfRows is the performance table's header and the rows cfg's
// instances read (ParsePerfTableFor), copied, or data itself when it
// cannot tell.
func usedPerfRows(data []byte, cfg Config) []byte {
	header, rest, _ := bytes.Cut(data, []byte{'\n'})
	col := map[string]int{"model": -1, "hardware": -1, "tensor_parallel": -1}
	nf := 0
	for f := range bytes.SplitSeq(bytes.TrimRight(header, "\r"), []byte{','}) {
		if _, ok := col[string(f)]; ok {
			col[string(f)] = nf // the last of repeated names, as ParsePerfTable reads
		}
		nf++
	}
	cm, ch, ct := col["model"], col["hardware"], col["tensor_parallel"]
	if cm < 0 || ch < 0 || ct < 0 || bytes.IndexByte(data, '"') >= 0 {
		return data
	}
	type key struct {
		gpu   string
		tp    int
		found bool
	}
	var want []key
	for _, ic := range cfg.Instances {
		g, err := cfg.lookupGPU(ic.GPU)
		if err != nil {
			return data
		}
		if !slices.ContainsFunc(want, func(k key) bool { return k.gpu == g.Name && k.tp == ic.TP }) {
			want = append(want, key{gpu: g.Name, tp: ic.TP})
		}
	}
	model := cfg.Model.Name
	last := max(cm, ch, ct)
	kept := make([]byte, 0, len(data)) // only the pages written are touched
	kept = append(kept, header...)
	kept = append(kept, '\n')
	fields := make([][]byte, last+1)
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		f := bytes.TrimRight(line, "\r")
		if len(f) == 0 {
			continue
		}
		if bytes.Count(f, []byte{','}) != nf-1 {
			return data // a row ParsePerfTable must see (and reject)
		}
		for i := range fields {
			j := bytes.IndexByte(f, ',')
			if j < 0 {
				j = len(f)
			}
			fields[i], f = f[:j], f[min(j+1, len(f)):]
		}
		if string(fields[cm]) != model {
			continue
		}
		tp, err := strconv.Atoi(string(fields[ct]))
		if err != nil {
			return data
		}
		i := slices.IndexFunc(want, func(k key) bool { return k.tp == tp && k.gpu == string(fields[ch]) })
		if i < 0 {
			continue
		}
		want[i].found = true
		kept = append(kept, line...)
		kept = append(kept, '\n')
	}
	for _, k := range want {
		if !k.found {
			return data
		}
	}
	return kept
}
