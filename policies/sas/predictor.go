package sas

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// Resource names one of the three node resources the predictor tracks.
type Resource int

// The resources, in the order of env.Usage's fields.
const (
	CPU Resource = iota
	MemBW
	Net
	numResources
)

// String returns the Resource's name as the command line and logs spell it.
func (r Resource) String() string {
	switch r {
	case CPU:
		return "cpu"
	case MemBW:
		return "membw"
	case Net:
		return "net"
	}
	return fmt.Sprintf("Resource(%d)", int(r))
}

// of returns u's utilisation of r.
func (r Resource) of(u env.Usage) float64 {
	switch r {
	case CPU:
		return u.CPU
	case MemBW:
		return u.MemBW
	case Net:
		return u.Net
	}
	panic("sas: unknown resource")
}

// Forecast is a node's predicted utilisation over a job's future run: the
// learned model's quantiles, or those of its recent history.
type Forecast struct {
	// P10, P50 and P90 are the 10th, 50th and 90th percentiles of each
	// resource's utilisation.
	P10, P50, P90 env.Usage
}

// Predictor keeps a bounded history of each node's utilisation (a ring
// buffer of the last Capacity samples, taken at most once per Period of
// simulated time) and predicts the node's utilisation over a job's future
// run: quantiles, and the probability that a resource ends up above an
// overload threshold once a given extra load is added.
//
// With a Model (SAS's default: forecast.Default), a node with at least
// Model.MinHistory samples is forecast by the model from its history: the
// distribution of its utilisation over the model's horizon, given by
// quantiles at the model's levels and interpolated between them (see
// forecast.QuantileAt and forecast.Exceed). Before that, without a Model,
// when the sample period differs from the model's step, or when the
// node's history holds a NaN, the history itself stands in for the
// future: its quantiles and the smoothed share of its samples above the
// threshold (the empirical window). It is not safe for concurrent use.
type Predictor struct {
	// PriorOver and PriorUnder are the pseudo-counts of a Beta prior on
	// every overload probability: with n samples of which k are over,
	// OverloadProb is (k + PriorOver) / (n + PriorOver + PriorUnder), so a
	// node with no history is neither certainly fine nor certainly
	// overloaded. NewPredictor sets both to 1 (Laplace's rule of
	// succession).
	PriorOver, PriorUnder float64

	// Model, when not nil, forecasts every node with enough history (see
	// above). Set it before the first Observe; changing it later drops
	// nothing but takes effect only at the next sample.
	Model *forecast.Model

	period float64
	cap    int
	last   float64 // time of the last sample, NaN before the first
	hist   [][]env.Usage
	head   []int // per node: next slot to write once the ring is full
	sorted [][numResources][]float64
	dirty  []bool

	// The model's forecasts per node and resource, valid while known
	// (cleared by each sample of the node that changes its history, read
	// oldest first, or that comes under another model), and scratch for
	// the history. run counts per node and resource the latest samples
	// equal (to the bit) to the last, at most the capacity; by is the
	// model of the last sample.
	learned [][numResources][]float64
	known   [][numResources]bool
	scratch []float64
	run     [][numResources]int
	by      *forecast.Model
	ver     []uint64 // per node: bumped by every sample that may change its forecasts

	// odd counts per node the non-finite values its ring holds (see
	// nonFinite), and oddNodes the nodes with any: SAS's pruned search
	// relies on every forecast being a number.
	odd      []int
	oddNodes int
}

// NewPredictor returns a predictor for nodes nodes that keeps the last
// capacity samples of each, taken at most once per period seconds. It
// panics on a non-positive size or capacity, or a negative period.
func NewPredictor(nodes, capacity int, period float64) *Predictor {
	if nodes <= 0 || capacity <= 0 || !(period >= 0) {
		panic(fmt.Sprintf("sas: predictor with %d nodes, capacity %d, period %v", nodes, capacity, period))
	}
	return &Predictor{
		PriorOver:  1,
		PriorUnder: 1,
		period:     period,
		cap:        capacity,
		last:       math.NaN(),
		hist:       make([][]env.Usage, nodes),
		head:       make([]int, nodes),
		sorted:     make([][numResources][]float64, nodes),
		dirty:      make([]bool, nodes),
		learned:    make([][numResources][]float64, nodes),
		known:      make([][numResources]bool, nodes),
		run:        make([][numResources]int, nodes),
		ver:        make([]uint64, nodes),
		odd:        make([]int, nodes),
	}
}

// Nodes returns the number of nodes the predictor tracks.
func (p *Predictor) Nodes() int { return len(p.hist) }

// Due reports whether a sample taken at now would be recorded: none was
// taken yet, or the last one is at least a period old.
func (p *Predictor) Due(now float64) bool {
	return math.IsNaN(p.last) || now-p.last >= p.period
}

// Observe records one sample of every node's utilisation at now, if one is
// due, and reports whether it did. It panics if len(loads) differs from
// Nodes.
func (p *Predictor) Observe(now float64, loads []env.Usage) bool {
	if len(loads) != len(p.hist) {
		panic(fmt.Sprintf("sas: %d loads for %d nodes", len(loads), len(p.hist)))
	}
	if !p.Due(now) {
		return false
	}
	p.last = now
	keep := p.Model == p.by
	p.by = p.Model
	for n, u := range loads {
		p.push(n, u, keep)
	}
	return true
}

// push appends u to node n's ring and keeps the node's sorted copies in
// step: the evicted sample's values leave them and u's enter, each by a
// binary search, instead of a sort of the whole history per sample (with
// every node sampled at once, that sort was most of SAS's time on large
// clusters). A NaN, which has no place in the order, makes the node dirty:
// values then sorts afresh. A resource's forecast stays known (with keep:
// under the same model) when its full history holds one value and u
// brings it again, so that the history, read oldest first, is unchanged:
// an idle node's forecast is computed once, not at every sample.
func (p *Predictor) push(n int, u env.Usage, keep bool) {
	var old env.Usage
	evict := len(p.hist[n]) == p.cap
	if h := p.hist[n]; len(h) > 0 {
		last := h[len(h)-1]
		if evict {
			last = h[(p.head[n]+p.cap-1)%p.cap]
		}
		steady := keep && evict
		for q := range numResources {
			same := math.Float64bits(q.of(u)) == math.Float64bits(q.of(last))
			kept := keep && evict && same && p.run[n][q] >= p.cap
			p.known[n][q] = p.known[n][q] && kept
			steady = steady && kept
			if same {
				p.run[n][q] = min(p.run[n][q]+1, p.cap)
			} else {
				p.run[n][q] = 1
			}
		}
		if !steady {
			p.ver[n]++
		}
	} else {
		p.known[n] = [numResources]bool{}
		p.run[n] = [numResources]int{1, 1, 1}
		p.ver[n]++
	}
	if !evict {
		p.hist[n] = append(p.hist[n], u)
	} else {
		old = p.hist[n][p.head[n]]
		p.hist[n][p.head[n]] = u
		p.head[n] = (p.head[n] + 1) % p.cap
	}
	if d := nonFinite(u) - nonFinite(old); d != 0 {
		was := p.odd[n] > 0
		p.odd[n] += d
		if now := p.odd[n] > 0; now != was {
			if now {
				p.oddNodes++
			} else {
				p.oddNodes--
			}
		}
	}
	if p.dirty[n] {
		return
	}
	for q := range numResources {
		s := p.sorted[n][q] // sorted, so a NaN in it is first
		if math.IsNaN(q.of(u)) || (evict && math.IsNaN(q.of(old))) || (len(s) > 0 && math.IsNaN(s[0])) {
			p.dirty[n] = true
			return
		}
	}
	for q := range numResources {
		s := p.sorted[n][q]
		if evict && math.Float64bits(q.of(old)) == math.Float64bits(q.of(u)) {
			continue // the value leaving is the one coming: the order stays
		}
		if evict {
			i := searchFloat(s, q.of(old))
			s = slices.Delete(s, i, i+1)
		}
		x := q.of(u)
		s = slices.Insert(s, searchFloat(s, x), x)
		p.sorted[n][q] = s
	}
}

// nonFinite returns how many of u's values are NaN, infinite or so large
// (beyond 1e150) that a forecast's arithmetic could overflow.
func nonFinite(u env.Usage) int {
	k := 0
	for _, x := range [...]float64{u.CPU, u.MemBW, u.Net} {
		if !(math.Abs(x) <= 1e150) {
			k++
		}
	}
	return k
}

// finite reports whether every sample held is finite, so that every
// forecast and overload probability is a number.
func (p *Predictor) finite() bool { return p.oddNodes == 0 }

// version returns a number that changes whenever node's forecasts
// (Quantile, OverloadProb, Forecast) may change: at every sample but one
// that brings its full, constant history's value again under the same
// model.
func (p *Predictor) version(node int) uint64 { return p.ver[node] }

// Len returns the number of samples held for node.
func (p *Predictor) Len(node int) int { return len(p.hist[node]) }

// History returns node's samples, oldest first.
func (p *Predictor) History(node int) []env.Usage {
	h := p.hist[node]
	if len(h) < p.cap {
		return slices.Clone(h)
	}
	return append(slices.Clone(h[p.head[node]:]), h[:p.head[node]]...)
}

// searchFloat is sort.SearchFloat64s (the first index i with s[i] >= x)
// without its closure call per step.
func searchFloat(s []float64, x float64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] >= x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// values returns node's samples of r in ascending order (kept by push;
// sorted afresh after a NaN).
func (p *Predictor) values(node int, r Resource) []float64 {
	if p.dirty[node] {
		for q := range numResources {
			s := p.sorted[node][q][:0]
			for _, u := range p.hist[node] {
				s = append(s, q.of(u))
			}
			sort.Float64s(s)
			p.sorted[node][q] = s
		}
		p.dirty[node] = false
	}
	return p.sorted[node][r]
}

// Quantile returns the q-quantile (q in [0, 1]) of node's utilisation of
// r: the model's, interpolated between its levels (forecast.QuantileAt),
// when it forecasts the node; otherwise that of the node's history,
// interpolated linearly between order statistics: with the n samples
// sorted as x[0] <= ... <= x[n-1] and h = (n-1)q, it is x[floor(h)] +
// (h - floor(h))(x[floor(h)+1] - x[floor(h)]) (Hyndman and Fan's type 7,
// numpy's default). It is NaN for a node without history.
func (p *Predictor) Quantile(node int, r Resource, q float64) float64 {
	if f := p.forecast(node, r); f != nil {
		return forecast.QuantileAt(p.Model.Levels, f, q)
	}
	return env.Quantile(p.values(node, r), q)
}

// Learned reports whether the model forecasts node's r (see Predictor).
func (p *Predictor) Learned(node int, r Resource) bool { return p.forecast(node, r) != nil }

// forecast returns the model's quantiles of node's r at its levels, or
// nil when the window stands in (no model, too short a history, a sample
// period other than the model's step, or a NaN in the history). They are
// computed on first use after a sample.
func (p *Predictor) forecast(node int, r Resource) []float64 {
	m := p.Model
	if m == nil || len(p.hist[node]) < m.MinHistory || p.period != m.Step {
		return nil
	}
	if !p.known[node][r] {
		p.known[node][r] = true
		p.learned[node][r] = p.predict(node, r)
	}
	return p.learned[node][r]
}

// predict runs the model on node's history of r; nil when it holds a NaN.
func (p *Predictor) predict(node int, r Resource) []float64 {
	m := p.Model
	h, head := p.hist[node], p.head[node]
	if len(h) < p.cap {
		head = 0
	}
	// Oldest first: the ring from its head, then the part before it.
	xs := slices.Grow(p.scratch[:0], len(h))[:len(h)]
	i := 0
	for _, part := range [2][]env.Usage{h[head:], h[:head]} {
		switch r {
		case CPU:
			for _, u := range part {
				xs[i] = u.CPU
				i++
			}
		case MemBW:
			for _, u := range part {
				xs[i] = u.MemBW
				i++
			}
		default:
			for _, u := range part {
				xs[i] = u.Net
				i++
			}
		}
	}
	p.scratch = xs
	sorted := p.values(node, r)
	if len(sorted) > 0 && math.IsNaN(sorted[0]) { // sorted, so a NaN is first
		return nil
	}
	if len(sorted) > m.Window {
		sorted = nil // the model reads the last Window samples only
	}
	return m.Predict(forecast.Resource(r), xs, sorted, p.learned[node][r])
}

// Forecast returns node's P10, P50 and P90 (NaN without history).
func (p *Predictor) Forecast(node int) Forecast {
	var f Forecast
	for _, x := range []struct {
		q   float64
		dst *env.Usage
	}{{0.1, &f.P10}, {0.5, &f.P50}, {0.9, &f.P90}} {
		x.dst.CPU = p.Quantile(node, CPU, x.q)
		x.dst.MemBW = p.Quantile(node, MemBW, x.q)
		x.dst.Net = p.Quantile(node, Net, x.q)
	}
	return f
}

// OverloadProb returns the probability that node's utilisation of r, plus
// add, exceeds theta over the job's run: the model's forecast probability
// (forecast.Exceed) when it forecasts the node, otherwise the smoothed
// share of the node's samples x with x + add > theta (see PriorOver). It
// costs a binary search or a pass over the model's levels.
func (p *Predictor) OverloadProb(node int, r Resource, add, theta float64) float64 {
	if f := p.forecast(node, r); f != nil {
		return forecast.Exceed(p.Model.Levels, f, theta-add)
	}
	xs := p.values(node, r)
	cut := theta - add
	i := sort.Search(len(xs), func(i int) bool { return xs[i] > cut })
	k := float64(len(xs) - i)
	return (k + p.PriorOver) / (float64(len(xs)) + p.PriorOver + p.PriorUnder)
}
