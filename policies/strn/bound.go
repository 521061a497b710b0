package strn

import (
	"math"

	"github.com/drover-sched/drover/env"
)

// The one-node scan skips the nodes that cannot be among the
// MaxPlacements kept: a node's score is at least its bound, the score
// with each risk replaced by risk's value at the grid point at or below
// the utilisation (risk grows with it), and a node whose bound is no less
// than the MaxPlacements-th least score so far would be dropped by
// leastFirst anyway. The bound costs two table reads where the score
// costs two logarithms and two exponentials (most of the per-worker
// model's scoring time).

// Grid of the risk table: utilisations from riskLo in steps of
// 1/riskScale, riskCells of them; below it the bound is 0, above it the
// last cell's.
const (
	riskLo    = -1.0
	riskScale = 512.0
	riskCells = 4 * 512
)

// boundSlack is the relative slack a bound must clear a score by to skip
// a node: far more than the rounding of the few operations the score and
// the bound may round differently.
const boundSlack = 1e-9

// riskTable holds risk at the grid points, for one Overload and
// Uncertainty.
type riskTable struct {
	over, unc float64
	t         []float64
}

// riskBelow returns a lower bound of risk(u) (to rounding), NaN for a NaN
// u.
func (s *STRN) riskBelow(u float64) float64 {
	if math.IsNaN(u) {
		return u
	}
	f := (u - riskLo) * riskScale
	if !(f >= 0) {
		return 0
	}
	i := riskCells - 1
	if f < riskCells-1 {
		i = int(f)
	}
	return s.rt.t[i]
}

// prepareBound makes the risk table for the current settings and reports
// whether sens lets the bound hold: every sensitivity the score
// multiplies by a non-negative term is itself non-negative.
func (s *STRN) prepareBound(sens Sensitivity) bool {
	if !(sens.CPU >= 0 && sens.MemBW >= 0 && sens.Straggling >= 0 && sens.Spread >= 0) {
		return false
	}
	if s.rt.t == nil || s.rt.over != s.Overload || s.rt.unc != s.Uncertainty {
		s.rt.over, s.rt.unc = s.Overload, s.Uncertainty
		s.rt.t = make([]float64, riskCells)
		for i := range s.rt.t {
			s.rt.t[i] = Risk(s.Overload, s.Uncertainty, riskLo+float64(i)/riskScale)
		}
	}
	return true
}

// bound is a lower bound of score for node n alone with g GPUs: score's
// expression with each risk replaced by riskBelow and the spread term
// (never negative for one node) left out. NaN when the score may be.
func (s *STRN) bound(c *env.Cluster, n, g int, sens Sensitivity) float64 {
	u := s.load[n]
	k := float64(g)
	cpu, mem := u.CPU+s.WorkerCPU*k, u.MemBW+s.WorkerMemBW*k
	r := sens.CPU*s.riskBelow(cpu) + sens.MemBW*s.riskBelow(mem)
	if sp := c.Nodes[n].Speed; sp > 0 && sp < 1 {
		r += 1/sp - 1
	}
	worst := max(0, r)
	pack := float64(s.free[n]-g) / float64(c.Nodes[n].GPUs)
	return worst + sens.Straggling*max(cpu, mem) + max(0, s.Pack)*pack
}

// bestScores keeps the MaxPlacements least of the scores offered,
// ascending, in best[:nb].
type bestScores struct {
	best [MaxPlacements]float64
	nb   int
}

// add offers score sc.
func (l *bestScores) add(sc float64) {
	j := l.nb
	if j == len(l.best) {
		if !(sc < l.best[j-1]) {
			return
		}
		j--
	} else {
		l.nb++
	}
	for j > 0 && sc < l.best[j-1] {
		l.best[j] = l.best[j-1]
		j--
	}
	l.best[j] = sc
}

// beaten reports whether a candidate whose score is at least b can be
// skipped: MaxPlacements scores are in and b, less its slack, is at least
// the greatest of them (strictly greater with tie false, for candidates
// that must keep their ties).
func (l *bestScores) beaten(b float64, tie bool) bool {
	if l.nb < len(l.best) {
		return false
	}
	b -= math.Abs(b) * boundSlack
	if tie {
		return !(b < l.best[l.nb-1])
	}
	return b > l.best[l.nb-1]
}

// scanOne fills s.cands with a candidate for every node that holds g
// GPUs, in index order, skipping those whose bound shows them beaten
// when prune is set. It reports false when prune is set and a bound or a
// score is NaN: the scan must then be made without.
func (s *STRN) scanOne(c *env.Cluster, g, gpn int, sens Sensitivity, prune bool) bool {
	s.cands = s.cands[:0]
	var l bestScores
	for n, f := range s.free {
		if f < g {
			continue
		}
		if prune {
			b := s.bound(c, n, g, sens)
			if math.IsNaN(b) {
				return false
			}
			if l.beaten(b, true) {
				continue
			}
		}
		s.order = append(s.order[:0], n)
		s.take = append(s.take[:0], g)
		pc := s.score(c, g, gpn, sens)
		if prune {
			if math.IsNaN(pc.score) {
				return false
			}
			l.add(pc.score)
		}
		pc.one = n + 1
		s.cands = append(s.cands, pc)
	}
	return true
}
