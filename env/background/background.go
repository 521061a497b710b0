package background

import (
	"errors"
	"fmt"
	"math"
)

// DefaultStep is the default resampling step in seconds (5 minutes). The
// simulator recomputes the speeds of running jobs at every step boundary, so
// the step trades fidelity for speed. The Alibaba v2018 trace samples every
// 60-70 s; at 300 s its CPU load is still strongly correlated from one step
// to the next (lag-1 autocorrelation 0.81), so little is lost at a fifth of
// the updates.
const DefaultStep = 300

// Usage is a node's background utilisation of each resource, as a fraction
// of the node's capacity in [0, 1].
type Usage struct {
	CPU   float64 // CPU cores in use
	MemBW float64 // memory bandwidth in use
	Net   float64 // NIC bandwidth in use, the larger of inbound and outbound
}

// Source gives the background load of every node over simulated time.
type Source interface {
	// At returns node's background usage at time t (seconds from the start
	// of the simulation). It is constant on each step [k*Step(), (k+1)*Step())
	// and a pure function of (node, t): the answer does not depend on what
	// was asked before. Times before 0 read as time 0. It panics when node
	// is out of range or t is NaN.
	At(node int, t float64) Usage
	// Step returns the length in seconds of the steps on which At is constant.
	Step() float64
}

// ErrBadSeries is wrapped by the errors that report an unusable Series.
var ErrBadSeries = errors.New("background: bad series")

// Series is one machine's measured utilisation over time, the input of
// NewReplay and Fit. All slices have one entry per sample; values are
// fractions in [0, 1]. Callers convert their trace to it; for the Alibaba
// v2018 trace (datasets.MachineSeries) that is Time, CPU and MemBW copied
// and Net = max(NetIn, NetOut) element by element (see the package doc).
type Series struct {
	Time []float64 // seconds, non-decreasing
	CPU  []float64 // CPU utilisation
	// MemBW is the memory-bandwidth utilisation, NaN where not measured;
	// missing values are derived from CPU (see NewReplay).
	MemBW []float64
	Net   []float64 // network utilisation
}

// FromTraffic builds a Series from a machine's recorded time, CPU and
// memory-bandwidth utilisation and its inbound and outbound network
// utilisation, taking Net as the larger of the two at each sample (the
// Alibaba v2018 trace's columns; see datasets.MachineSeries).
func FromTraffic(time, cpu, membw, netIn, netOut []float64) Series {
	net := make([]float64, len(time))
	for k := range net {
		net[k] = max(netIn[k], netOut[k])
	}
	return Series{Time: time, CPU: cpu, MemBW: membw, Net: net}
}

// check reports why s is unusable, or nil.
func (s Series) check() error {
	n := len(s.Time)
	switch {
	case n == 0:
		return fmt.Errorf("%w: no samples", ErrBadSeries)
	case len(s.CPU) != n || len(s.MemBW) != n || len(s.Net) != n:
		return fmt.Errorf("%w: %d times but %d CPU, %d MemBW and %d Net values",
			ErrBadSeries, n, len(s.CPU), len(s.MemBW), len(s.Net))
	}
	for i, t := range s.Time {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("%w: sample %d: time %v", ErrBadSeries, i, t)
		}
		if i > 0 && t < s.Time[i-1] {
			return fmt.Errorf("%w: sample %d: time %v before %v", ErrBadSeries, i, t, s.Time[i-1])
		}
		if !unit(s.CPU[i]) || !unit(s.Net[i]) || !(math.IsNaN(s.MemBW[i]) || unit(s.MemBW[i])) {
			return fmt.Errorf("%w: sample %d: utilisation %v/%v/%v not in [0, 1]",
				ErrBadSeries, i, s.CPU[i], s.MemBW[i], s.Net[i])
		}
	}
	return nil
}

func unit(v float64) bool { return v >= 0 && v <= 1 }

// stepIndex returns the index of the step of length step holding t, with
// times before 0 in step 0.
func stepIndex(t, step float64) int {
	if math.IsNaN(t) {
		panic("background: time is NaN")
	}
	if t <= 0 {
		return 0
	}
	k := math.Floor(t / step)
	if k > math.MaxInt32*float64(1<<20) {
		panic(fmt.Sprintf("background: time %v too large", t))
	}
	return int(k)
}

func checkNode(node, nodes int) {
	if node < 0 || node >= nodes {
		panic(fmt.Sprintf("background: node %d out of range [0, %d)", node, nodes))
	}
}

// Constant is a Source with the same usage on every node at every time,
// e.g. Constant{} for no background load.
type Constant struct {
	Usage Usage
}

// At returns c.Usage.
func (c Constant) At(node int, t float64) Usage {
	if node < 0 {
		panic("background: negative node")
	}
	if math.IsNaN(t) {
		panic("background: time is NaN")
	}
	return c.Usage
}

// Step returns DefaultStep; a constant source needs no updates, but a
// finite step keeps callers free of special cases.
func (c Constant) Step() float64 { return DefaultStep }

// Scaled returns a Source whose usage is src's multiplied by f and capped at
// 1, for experiments under heavier (f > 1) or lighter (f < 1) background
// load. It panics when f is negative or not finite.
func Scaled(src Source, f float64) Source {
	if !(f >= 0) || math.IsInf(f, 0) {
		panic(fmt.Sprintf("background: scale %v must be finite and >= 0", f))
	}
	return scaled{src, f}
}

type scaled struct {
	src Source
	f   float64
}

func (s scaled) At(node int, t float64) Usage {
	u := s.src.At(node, t)
	return Usage{CPU: min(1, u.CPU*s.f), MemBW: min(1, u.MemBW*s.f), Net: min(1, u.Net*s.f)}
}

func (s scaled) Step() float64 { return s.src.Step() }
