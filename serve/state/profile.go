package state

import (
	"math"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/strn"
	"slices"
	"time"
)

// Profile is what a job's first iterations say about it: the measured
// side of STRN's profile (policies/strn.Sensitivity). Fields without
// evidence have their Has flag false and are left to the model profile.
type Profile struct {
	// Model is the job's model name ("" if unknown).
	Model string
	// Workers and Iterations are the shape of the aligned sample: the
	// workers that reported, and the iterations every one of them did.
	Workers, Iterations int
	// Base is the median iteration time of the fastest worker, seconds.
	Base float64
	// Straggling is the slowdown straggling causes under BSP: the mean
	// over iterations of the slowest worker's time, over the mean time,
	// minus 1 (two workers or more).
	Straggling    float64
	HasStraggling bool
	// CPU and MemBW are slowdowns per unit of overload, (u - 0.8) / 0.2,
	// of the worker's node, fitted by non-negative least squares to the
	// workers' slowdowns against their nodes' measured load while they
	// ran; known only when the workers' nodes differ in that overload.
	CPU, MemBW       float64
	HasCPU, HasMemBW bool
	// Rel is the measured jitter: Rel[k][w] is worker w's time at
	// iteration k over the mean time of all (Iterations x Workers).
	Rel [][]float64
}

// Overload is the utilisation above which the profile counts a resource
// as overloaded (env.Workers' and STRN's default).
const Overload = strn.DefaultOverload

// MinIterations is the fewest aligned iterations a profile is computed
// from.
const MinIterations = 8

// Profile returns job id's measured profile, else that of the last
// finished job of model that had one; false when neither exists.
func (st *Store) Profile(id, model string) (Profile, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if j := st.jobs[id]; j != nil {
		if p, ok := st.profile(j); ok {
			return p, true
		}
	}
	if p := st.byMod[model]; p != nil && model != "" {
		return *p, true
	}
	return Profile{}, false
}

// finite reports whether every number of p is finite.
func (p *Profile) finite() bool {
	if !finite(p.Base) || !finite(p.Straggling) || !finite(p.CPU) || !finite(p.MemBW) {
		return false
	}
	for _, row := range p.Rel {
		for _, x := range row {
			if !finite(x) {
				return false
			}
		}
	}
	return true
}

// profile computes j's profile; the caller holds st.mu.
func (st *Store) profile(j *job) (Profile, bool) {
	var ws []int
	k := math.MaxInt
	for w, wk := range j.workers {
		if w >= 0 && len(wk.Seconds) > 0 {
			ws = append(ws, w)
			k = min(k, len(wk.Seconds))
		}
	}
	slices.Sort(ws)
	p := Profile{Model: j.model}
	if len(ws) == 0 || k < MinIterations {
		// Whole-job times give the base only.
		if wk := j.workers[-1]; wk != nil && len(wk.Seconds) >= MinIterations {
			p.Workers, p.Iterations, p.Base = 1, len(wk.Seconds), median(wk.Seconds)
			return p, true
		}
		return Profile{}, false
	}
	p.Workers, p.Iterations = len(ws), k
	mean, base := 0.0, math.Inf(1)
	means := make([]float64, len(ws))
	for i, w := range ws {
		s := j.workers[w].Seconds[:k]
		for _, x := range s {
			means[i] += x
		}
		mean += means[i]
		means[i] /= float64(k)
		base = min(base, median(s))
	}
	mean /= float64(k * len(ws))
	p.Base = base
	p.Rel = make([][]float64, k)
	slowest := 0.0
	for it := range k {
		p.Rel[it] = make([]float64, len(ws))
		worst := 0.0
		for i, w := range ws {
			x := j.workers[w].Seconds[it]
			p.Rel[it][i] = x / mean
			worst = max(worst, x)
		}
		slowest += worst
	}
	if len(ws) >= 2 {
		p.Straggling, p.HasStraggling = max(0, slowest/float64(k)/mean-1), true
	}
	st.fitLoad(j, ws, means, &p)
	if !p.finite() {
		return Profile{}, false
	}
	return p, true
}

// fitLoad fits the CPU and MemBW sensitivities: worker w's slowdown
// y_w = mean_w / min mean - 1 against x_w = the overload of its node's
// mean measured CPU and memory pressure since the job started.
func (st *Store) fitLoad(j *job, ws []int, means []float64, p *Profile) {
	fastest := slices.Min(means)
	var y, x1, x2 []float64
	for i, w := range ws {
		n := st.nodes[j.workers[w].Node]
		if n == nil {
			continue
		}
		u, c := meanSince(n, j.started)
		if c == 0 {
			continue
		}
		y = append(y, means[i]/fastest-1)
		x1 = append(x1, OverloadOf(u.CPU))
		x2 = append(x2, OverloadOf(u.MemBW))
	}
	p.CPU, p.MemBW, p.HasCPU, p.HasMemBW = nnls2(y, x1, x2)
}

// meanSince returns the mean load of n's samples after from (all of them
// when from is zero).
func meanSince(n *node, from time.Time) (env.Usage, int) {
	return n.mean(func(t time.Time) bool { return from.IsZero() || t.After(from) })
}

// OverloadOf is the overload of a resource at utilisation u, (u -
// Overload) / (1 - Overload) above Overload and 0 below: the unit of a
// profile's CPU and MemBW sensitivities (STRN's, unsmoothed), which the
// server's prober multiplies them by.
func OverloadOf(u float64) float64 { return max(0, u-Overload) / (1 - Overload) }

// nnls2 fits y = a x1 + b x2 with a, b >= 0 by least squares. A
// coefficient is identified (its flag true) only when its regressor takes
// at least two distinct values; an unidentified one is 0.
func nnls2(y, x1, x2 []float64) (a, b float64, okA, okB bool) {
	okA, okB = varies(x1), varies(x2)
	one := func(x []float64) float64 {
		sxy, sxx := 0.0, 0.0
		for i := range y {
			sxy += x[i] * y[i]
			sxx += x[i] * x[i]
		}
		if sxx == 0 {
			return 0
		}
		return max(0, sxy/sxx)
	}
	switch {
	case okA && okB:
		var s11, s12, s22, s1y, s2y float64
		for i := range y {
			s11 += x1[i] * x1[i]
			s12 += x1[i] * x2[i]
			s22 += x2[i] * x2[i]
			s1y += x1[i] * y[i]
			s2y += x2[i] * y[i]
		}
		if det := s11*s22 - s12*s12; det > 1e-12*s11*s22 {
			a, b = (s22*s1y-s12*s2y)/det, (s11*s2y-s12*s1y)/det
			if a >= 0 && b >= 0 {
				return a, b, true, true
			}
		}
		// A negative coefficient (or collinear regressors): the better of
		// the two one-variable fits, the other at 0.
		a1, b1 := one(x1), one(x2)
		if sse(y, x1, a1) <= sse(y, x2, b1) {
			return a1, 0, true, true
		}
		return 0, b1, true, true
	case okA:
		return one(x1), 0, true, false
	case okB:
		return 0, one(x2), false, true
	}
	return 0, 0, false, false
}

func sse(y, x []float64, c float64) float64 {
	s := 0.0
	for i := range y {
		d := y[i] - c*x[i]
		s += d * d
	}
	return s
}

func varies(x []float64) bool {
	for _, v := range x[min(1, len(x)):] {
		if v != x[0] {
			return true
		}
	}
	return false
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
