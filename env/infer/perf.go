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
type PerfTable struct {
	curves map[perfKey]*perfCurve
}

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
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBadPerfTable, err)
	}
	cols := map[string]int{"model": -1, "hardware": -1, "tensor_parallel": -1, "prompt_size": -1, "batch_size": -1, "prompt_time": -1, "token_time": -1}
	for i, h := range head {
		if _, ok := cols[h]; ok {
			cols[h] = i
		}
	}
	for name, i := range cols {
		if i < 0 {
			return nil, fmt.Errorf("%w: no column %q", ErrBadPerfTable, name)
		}
	}
	type group struct{ prompt, token []float64 }
	groups := map[perfKey]map[int64]*group{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPerfTable, err)
		}
		if line > maxPerfRows {
			return nil, fmt.Errorf("%w: more than %d rows", ErrBadPerfTable, maxPerfRows)
		}
		var ints [3]int64
		for j, c := range []string{"tensor_parallel", "prompt_size", "batch_size"} {
			v, err := strconv.ParseInt(rec[cols[c]], 10, 64)
			if err != nil || v <= 0 || v > MaxTokens {
				return nil, fmt.Errorf("%w: line %d: %s %q, want an integer in 1..%d", ErrBadPerfTable, line, c, rec[cols[c]], MaxTokens)
			}
			ints[j] = v
		}
		var times [2]float64
		for j, c := range []string{"prompt_time", "token_time"} {
			v, ok := ParseFloatPandas(rec[cols[c]])
			if !ok || !(v > 0) {
				return nil, fmt.Errorf("%w: line %d: %s %q, want a positive time in ms", ErrBadPerfTable, line, c, rec[cols[c]])
			}
			times[j] = v / 1000
		}
		k := perfKey{model: rec[cols["model"]], hardware: rec[cols["hardware"]], tp: int(ints[0])}
		if groups[k] == nil {
			groups[k] = map[int64]*group{}
		}
		bt := ints[1] * ints[2]
		g := groups[k][bt]
		if g == nil {
			g = &group{}
			groups[k][bt] = g
		}
		g.prompt = append(g.prompt, times[0])
		g.token = append(g.token, times[1])
	}
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
	return slope*(xn-x[lo]) + y[lo]
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
