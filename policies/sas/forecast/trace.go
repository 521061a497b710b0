package forecast

import (
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/background"
)

// Trace is one machine's utilisation at fixed steps, as a node's
// predictor sees it: U[r][k] is resource r's mean over step k.
type Trace struct {
	// Name identifies the machine (e.g. the trace's machine_id).
	Name string
	// U holds one series per resource, all of the same length.
	U [NumResources][]float64
	// Measured[k] reports whether step k held a measurement; a step
	// without one (a gap in the trace) repeats the step before. Fit and
	// Evaluate score forecasts against measured steps only. Nil means
	// every step was measured.
	Measured []bool
}

// Len returns the number of steps.
func (t Trace) Len() int { return len(t.U[CPU]) }

// measured reports whether step k was measured.
func (t Trace) measured(k int) bool { return t.Measured == nil || t.Measured[k] }

// Head returns the trace's first n steps (sharing t's storage).
func (t Trace) Head(n int) Trace {
	h := Trace{Name: t.Name}
	for r := range t.U {
		h.U[r] = t.U[r][:n]
	}
	if t.Measured != nil {
		h.Measured = t.Measured[:n]
	}
	return h
}

// FromSeries resamples measured machine series to steps of step seconds,
// exactly as background.NewReplay does for the simulator (the mean of the
// samples in each step, gaps carrying the previous step forward, missing
// memory bandwidth derived from CPU), and marks the steps that held a
// sample. names, if not nil, names the traces. It returns NewReplay's
// errors for unusable series or step.
func FromSeries(series []background.Series, names []string, step float64) ([]Trace, error) {
	if names != nil && len(names) != len(series) {
		return nil, fmt.Errorf("forecast: %d names for %d series", len(names), len(series))
	}
	rp, err := background.NewReplay(series, max(len(series), 1), step)
	if err != nil {
		return nil, fmt.Errorf("forecast: resample: %w", err)
	}
	out := make([]Trace, len(series))
	for i, s := range series {
		// Node i replays machine i from its first step (NewReplay's
		// mapping), over the steps from its first sample's to its last's.
		k0, k1 := stepOf(s.Time[0], step), stepOf(s.Time[len(s.Time)-1], step)
		n := k1 - k0 + 1
		tr := Trace{Measured: make([]bool, n)}
		if names != nil {
			tr.Name = names[i]
		}
		for r := range tr.U {
			tr.U[r] = make([]float64, n)
		}
		for k := range n {
			u := rp.At(i, float64(k)*step)
			tr.U[CPU][k], tr.U[MemBW][k], tr.U[Net][k] = u.CPU, u.MemBW, u.Net
		}
		for _, t := range s.Time {
			tr.Measured[stepOf(t, step)-k0] = true
		}
		out[i] = tr
	}
	return out, nil
}

// stepOf is the step holding t, as background's replay counts them (times
// at or before 0 in step 0).
func stepOf(t, step float64) int {
	if t <= 0 {
		return 0
	}
	return int(math.Floor(t / step))
}

// FromSource samples nodes nodes of a background source (the simulator's
// background load) at steps of step seconds for steps steps: the traces a
// node's predictor sees in the simulator without its own jobs' load.
func FromSource(src background.Source, nodes, steps int, step float64) []Trace {
	out := make([]Trace, nodes)
	for n := range out {
		tr := Trace{Name: fmt.Sprintf("node %d", n)}
		for r := range tr.U {
			tr.U[r] = make([]float64, steps)
		}
		for k := range steps {
			u := src.At(n, float64(k)*step)
			tr.U[CPU][k], tr.U[MemBW][k], tr.U[Net][k] = u.CPU, u.MemBW, u.Net
		}
		out[n] = tr
	}
	return out
}
