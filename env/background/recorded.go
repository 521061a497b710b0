package background

import (
	"fmt"
	"math"
	"sort"
)

// Reading is one recorded sample of a node's load: the time in seconds
// from the start of the simulation, and the usage.
type Reading struct {
	// T is the sample's time in seconds (simulation time).
	T float64
	// Usage is the node's utilisation then.
	Usage Usage
}

// Recorded is a Source that replays recorded per-node samples (a live
// cluster's telemetry log, datasets/telemlog, mapped to node indices and
// simulation time by the caller). It is immutable after NewRecorded and
// safe for concurrent use.
//
// At(node, t) is the node's last reading at or before the start of t's
// step, floor(t/Step())*Step(); before the node's first reading, its
// first. With readings taken at the step boundaries (as drover sim
// --remote records them) that is the last reading at or before t; with
// readings in between, resampling them to the step start is what keeps
// the Source contract (constant on each step) exact. A node without
// readings reads the fallback Source (no load when it is nil).
type Recorded struct {
	step     float64
	nodes    [][]Reading // per node, sorted by time
	fallback Source
}

// NewRecorded returns a Recorded source of len(readings) nodes (node i
// replays readings[i]) with steps of step seconds. Each node's readings
// are sorted by time (stably: of two readings at one time the later in
// the slice wins) and copied. fallback answers for nodes without readings;
// its Step must be a whole multiple of step so that the result is constant
// on steps of step seconds (nil: no load). It returns an error for a step
// that is not positive and finite, a reading whose time is NaN or
// infinite or whose usage is outside [0, 1], or an incompatible fallback.
func NewRecorded(readings [][]Reading, step float64, fallback Source) (*Recorded, error) {
	if err := checkStep(step); err != nil {
		return nil, err
	}
	if len(readings) == 0 {
		return nil, fmt.Errorf("background: recorded source needs at least 1 node")
	}
	if fallback != nil {
		k := fallback.Step() / step
		if !(k >= 1) || k != math.Trunc(k) || math.IsInf(k, 0) {
			return nil, fmt.Errorf("background: fallback step %v is not a whole multiple of %v", fallback.Step(), step)
		}
	}
	r := &Recorded{step: step, nodes: make([][]Reading, len(readings)), fallback: fallback}
	for n, rs := range readings {
		for i, x := range rs {
			u := x.Usage
			if math.IsNaN(x.T) || math.IsInf(x.T, 0) {
				return nil, fmt.Errorf("%w: node %d, reading %d: time %v", ErrBadSeries, n, i, x.T)
			}
			if !unit(u.CPU) || !unit(u.MemBW) || !unit(u.Net) {
				return nil, fmt.Errorf("%w: node %d, reading %d: utilisation %v/%v/%v not in [0, 1]", ErrBadSeries, n, i, u.CPU, u.MemBW, u.Net)
			}
		}
		c := append([]Reading(nil), rs...)
		sort.SliceStable(c, func(a, b int) bool { return c[a].T < c[b].T })
		r.nodes[n] = c
	}
	return r, nil
}

// At implements Source.
func (r *Recorded) At(node int, t float64) Usage {
	checkNode(node, len(r.nodes))
	k := stepIndex(t, r.step)
	rs := r.nodes[node]
	if len(rs) == 0 {
		if r.fallback == nil {
			return Usage{}
		}
		return r.fallback.At(node, float64(k)*r.step)
	}
	start := float64(k) * r.step
	// The first reading after the step's start; the one before it holds.
	i := sort.Search(len(rs), func(i int) bool { return rs[i].T > start })
	if i == 0 {
		return rs[0].Usage
	}
	return rs[i-1].Usage
}

// Step implements Source.
func (r *Recorded) Step() float64 { return r.step }

// Occupant is a job whose load the model adds to its nodes' measured
// load while it runs: what Subtract takes away.
type Occupant struct {
	// Start and End bound the time the job held its nodes, in seconds
	// (simulation time): from its Started outcome to its Finished one
	// (End = +Inf while it runs). It counts in the readings strictly
	// between the two: a reading at a step boundary is taken after the
	// jobs ending then have left and before the jobs starting then are
	// placed (the simulator refreshes its loads before each decision
	// point).
	Start, End float64
	// Nodes holds the node index of each worker.
	Nodes []int
	// Duty is the share of time the job's NIC flows are active (its
	// exchange's share of an iteration, exchange / (compute + exchange),
	// over H iterations for local SGD(H), as env.Drover counts it: it
	// depends on the job's compute and exchange times); NaN when unknown.
	// It counts only for a job on two or more nodes.
	Duty float64
}

// WorkerLoad is the load the model puts on a node per worker and per NIC
// flow, in the units of Usage (env.Workers' CPUPerWorker and
// MemBWPerWorker; env.Drover's NodeLoad counts a flow as half the NIC).
type WorkerLoad struct {
	// CPU and MemBW are one worker's shares of its node.
	CPU, MemBW float64
	// NetPerFlow is the NIC share of one flow at duty cycle 1.
	NetPerFlow float64
}

// Subtract turns measured total node loads (the telemetry, which includes
// the jobs' own load) into background load, reading by reading, for a
// Recorded source. For node n at a reading's time t, with the occupants
// running there at t (Start < t < End):
//
//	modelled.CPU   = load.CPU   x (workers on n)
//	modelled.MemBW = load.MemBW x (workers on n)
//	modelled.Net   = load.NetPerFlow x (sum of Duty over the occupants on n that span 2+ nodes)
//	background     = max(0, measured - modelled), per resource
//
// the inverse of env.Drover's NodeLoad (background + modelled, capped at
// 1). That difference is exact where the measured share is below 1 and,
// for Net, every multi-node occupant's Duty is known. Elsewhere it is not:
// a measured share of 1 is saturated (the cap hid part of the sum), and an
// unknown Duty (NaN: an asynchronous job, whose duty cycle the log does
// not hold) leaves the modelled share open. There Subtract takes the
// node's nearest exact estimate of the resource in time (on ties the last
// reading before it, else the first after it), raised to at least the lower bound max(0, measured -
// modelled) with unknown duties counted as 1; without any exact estimate
// on the node, the bound itself. The background moves slowly next to the
// readings (the fitted Net process has a time constant of 2.6 days, CPU
// of 24 minutes), which is what makes the nearest estimate a good one.
// The result has measured's shape, each node's readings sorted by time.
// It costs O(R log R + J log J) for R readings and J occupants, plus the
// occupants running at each reading.
func Subtract(measured [][]Reading, occupants []Occupant, load WorkerLoad) [][]Reading {
	// Each node's share of each occupant: its workers there and its flow.
	type share struct {
		start, end float64
		workers    int
		flow       float64 // NaN: unknown duty
	}
	on := make([][]share, len(measured))
	for _, o := range occupants {
		var distinct, count []int
		for _, m := range o.Nodes {
			k := 0
			for k < len(distinct) && distinct[k] != m {
				k++
			}
			if k == len(distinct) {
				distinct, count = append(distinct, m), append(count, 0)
			}
			count[k]++
		}
		flow := 0.0
		if len(distinct) > 1 {
			flow = o.Duty
		}
		for k, m := range distinct {
			if m >= 0 && m < len(on) {
				on[m] = append(on[m], share{o.Start, o.End, count[k], flow})
			}
		}
	}
	out := make([][]Reading, len(measured))
	var exact [3][]bool
	var next []int
	var active []share
	for n, rs := range measured {
		if !sort.SliceIsSorted(rs, func(a, b int) bool { return rs[a].T < rs[b].T }) {
			rs = append([]Reading(nil), rs...)
			sort.SliceStable(rs, func(a, b int) bool { return rs[a].T < rs[b].T })
		}
		out[n] = make([]Reading, len(rs))
		for r := range exact {
			exact[r] = append(exact[r][:0], make([]bool, len(rs))...)
		}
		// Sweep the readings in time order over the node's occupants by
		// start: active holds those started before the reading and not
		// yet ended.
		shares := on[n]
		sort.SliceStable(shares, func(a, b int) bool { return shares[a].start < shares[b].start })
		active = active[:0]
		at := 0
		for i, x := range rs {
			for at < len(shares) && shares[at].start < x.T {
				active = append(active, shares[at])
				at++
			}
			keep := active[:0]
			for _, sh := range active {
				if sh.end > x.T {
					keep = append(keep, sh)
				}
			}
			active = keep
			workers, flows, unknown := 0, 0.0, false
			for _, sh := range active {
				workers += sh.workers
				if math.IsNaN(sh.flow) {
					flows++
					unknown = true
				} else {
					flows += sh.flow
				}
			}
			w := float64(workers)
			m := x.Usage
			out[n][i] = Reading{T: x.T, Usage: Usage{
				CPU:   max(0, m.CPU-load.CPU*w),
				MemBW: max(0, m.MemBW-load.MemBW*w),
				Net:   max(0, m.Net-load.NetPerFlow*flows),
			}}
			exact[0][i], exact[1][i], exact[2][i] = m.CPU < 1, m.MemBW < 1, m.Net < 1 && !unknown
		}
		// The inexact readings: the nearest exact estimate, at least the bound.
		for r, get := range []func(*Usage) *float64{
			func(u *Usage) *float64 { return &u.CPU },
			func(u *Usage) *float64 { return &u.MemBW },
			func(u *Usage) *float64 { return &u.Net },
		} {
			row := out[n]
			// next[i]: the first exact reading at or after i (-1: none).
			next = append(next[:0], make([]int, len(row))...)
			k := -1
			for i := len(row) - 1; i >= 0; i-- {
				if exact[r][i] {
					k = i
				}
				next[i] = k
			}
			prev := -1 // the last exact reading before i
			for i := range row {
				if exact[r][i] {
					prev = i
					continue
				}
				best := prev
				if nx := next[i]; nx >= 0 && (best < 0 || row[nx].T-row[i].T < row[i].T-row[best].T) {
					best = nx
				}
				if best >= 0 {
					*get(&row[i].Usage) = max(*get(&row[i].Usage), *get(&row[best].Usage))
				}
			}
		}
	}
	return out
}
