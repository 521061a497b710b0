package background

import (
	"fmt"
	"math"
)

// Replay is a Source that replays measured machine series, resampled to a
// fixed step, on the nodes of a simulated cluster. It is immutable after
// NewReplay and safe for concurrent use.
type Replay struct {
	step     float64
	machines [][]Usage // per machine, one Usage per step
	node     []replayNode
}

type replayNode struct {
	machine int // index into machines
	offset  int // steps added to the node's step index
}

// goldenFrac is the fractional part of the golden ratio. The offsets
// frac(k*goldenFrac) for k = 1, 2, ... spread evenly over [0, 1) for any
// number of reuses (a Weyl sequence).
const goldenFrac = 0.6180339887498949

// NewReplay returns a Replay of series on nodes nodes, with At constant on
// steps of step seconds.
//
// Resampling: each machine's timeline is cut into steps [k*step,
// (k+1)*step) from the step of its first sample to the step of its last. A
// step's usage is the mean of the samples that fall in it; a step without
// samples (a gap in the trace) carries the previous step's usage forward.
// Missing MemBW samples are filled first (see below).
//
// Mapping: node i replays machine i mod M (M = len(series)), starting at
// the machine's first step and wrapping around at its end. The k-th reuse of
// a machine (k = i / M) starts floor(frac(k*0.618...)*L) steps into the
// machine's L steps, so nodes sharing a machine are not in lock-step. Node
// time 0 is the machine's first step whatever its absolute time in the
// trace.
//
// MemBW filling: a missing MemBW sample is predicted from the same sample's
// CPU by a least-squares line. The line is fitted on the machine's own
// samples that have both when it has at least 30, and otherwise on all such
// samples of all machines; the prediction is clamped to the range of the
// MemBW values the line was fitted on. Without any MemBW sample at all,
// MemBW is 0. (In the Alibaba v2018 trace mem_gps is reported only in the
// last 1.6 days, on 15 of the 16 machines. Within a machine it follows
// CPU, r = -0.52 to -0.83 on 12 machines and +0.17 to +0.81 on the other
// three, while it is unrelated to memory capacity used, r = 0.006 pooled.)
//
// It returns an error wrapping ErrBadSeries for a series that is empty,
// ragged, not sorted by time or has utilisations outside [0, 1], and an
// error when nodes < 1 or step is not positive and finite.
func NewReplay(series []Series, nodes int, step float64) (*Replay, error) {
	if nodes < 1 {
		return nil, fmt.Errorf("background: replay needs at least 1 node, got %d", nodes)
	}
	if err := checkStep(step); err != nil {
		return nil, err
	}
	machines, err := resampleAll(series, step)
	if err != nil {
		return nil, err
	}
	r := &Replay{step: step, machines: machines, node: make([]replayNode, nodes)}
	m := len(machines)
	for i := range r.node {
		k := i / m
		l := len(machines[i%m])
		_, frac := math.Modf(float64(k) * goldenFrac)
		r.node[i] = replayNode{machine: i % m, offset: int(frac*float64(l)) % l}
	}
	return r, nil
}

func checkStep(step float64) error {
	if !(step > 0) || math.IsInf(step, 0) {
		return fmt.Errorf("background: step %v must be positive and finite", step)
	}
	return nil
}

// At returns node's usage in the step holding t.
func (r *Replay) At(node int, t float64) Usage {
	checkNode(node, len(r.node))
	n := r.node[node]
	u := r.machines[n.machine]
	k := stepIndex(t, r.step)
	return u[(k%len(u)+n.offset)%len(u)]
}

// Step returns the resampling step in seconds.
func (r *Replay) Step() float64 { return r.step }

// resampleAll checks series, fills missing MemBW and resamples each series
// to step (see NewReplay).
func resampleAll(series []Series, step float64) ([][]Usage, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("%w: no series", ErrBadSeries)
	}
	for i, s := range series {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("series %d: %w", i, err)
		}
	}
	membw := fillMemBW(series)
	out := make([][]Usage, len(series))
	for i, s := range series {
		out[i] = resample(s.Time, s.CPU, membw[i], s.Net, step)
	}
	return out, nil
}

// resample averages the samples in each step and carries the last step
// forward over steps without samples.
func resample(time, cpu, membw, net []float64, step float64) []Usage {
	k0 := stepIndex(time[0], step)
	k1 := stepIndex(time[len(time)-1], step)
	out := make([]Usage, k1-k0+1)
	filled := make([]bool, len(out))
	for i := 0; i < len(time); {
		k := stepIndex(time[i], step)
		var sum Usage
		n := 0
		for ; i < len(time) && stepIndex(time[i], step) == k; i++ {
			sum.CPU += cpu[i]
			sum.MemBW += membw[i]
			sum.Net += net[i]
			n++
		}
		fn := float64(n)
		out[k-k0] = Usage{CPU: sum.CPU / fn, MemBW: sum.MemBW / fn, Net: sum.Net / fn}
		filled[k-k0] = true
	}
	for j := 1; j < len(out); j++ {
		if !filled[j] {
			out[j] = out[j-1]
		}
	}
	return out
}

// minOwnFit is the number of samples with both CPU and MemBW a machine
// needs for its own MemBW line.
const minOwnFit = 30

// line is MemBW = a + b*CPU, clamped to [lo, hi].
type line struct{ a, b, lo, hi float64 }

func (l line) at(cpu float64) float64 { return min(l.hi, max(l.lo, l.a+l.b*cpu)) }

// fitLine fits a line to the points with a non-NaN y; ok is false when
// there are none.
func fitLine(xs, ys []float64) (l line, n int) {
	var sx, sy float64
	l.lo, l.hi = math.Inf(1), math.Inf(-1)
	for i, y := range ys {
		if !math.IsNaN(y) {
			sx += xs[i]
			sy += y
			l.lo, l.hi = min(l.lo, y), max(l.hi, y)
			n++
		}
	}
	if n == 0 {
		return line{}, 0
	}
	mx, my := sx/float64(n), sy/float64(n)
	var sxx, sxy float64
	for i, y := range ys {
		if !math.IsNaN(y) {
			dx := xs[i] - mx
			sxx += dx * dx
			sxy += dx * (y - my)
		}
	}
	if sxx > 0 {
		l.b = sxy / sxx
	}
	l.a = my - l.b*mx
	return l, n
}

// fillMemBW returns each series' MemBW with missing samples predicted from
// CPU (see NewReplay).
func fillMemBW(series []Series) [][]float64 {
	var allX, allY []float64
	for _, s := range series {
		allX = append(allX, s.CPU...)
		allY = append(allY, s.MemBW...)
	}
	pooled, _ := fitLine(allX, allY) // the zero line when nothing was measured
	out := make([][]float64, len(series))
	for i, s := range series {
		l := pooled
		if own, n := fitLine(s.CPU, s.MemBW); n >= minOwnFit {
			l = own
		}
		f := make([]float64, len(s.MemBW))
		for j, v := range s.MemBW {
			if math.IsNaN(v) {
				v = l.at(s.CPU[j])
			}
			f[j] = v
		}
		out[i] = f
	}
	return out
}
