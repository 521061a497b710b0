package forecast

import "math"

// A forecast is a distribution given by its quantiles q (ascending, in
// [0, 1]) at levels (ascending, in (0, 1), at least two). Between the
// knots (levels[i], q[i]) the quantile function is linear; beyond the end
// knots it continues the end segments' slopes until it reaches level 0
// and 1, clamped to [0, 1] utilisation. So the distribution has no mass
// below max(0, q[0] - levels[0]*s0), where s0 is the first segment's
// slope, nor above min(1, q[m-1] + (1-levels[m-1])*s1), s1 the last's.

// knots returns the quantile function's lower and upper end points (at
// levels 0 and 1).
func knots(levels, q []float64) (lo, hi float64) {
	m := len(levels)
	lo = q[0] - levels[0]*(q[1]-q[0])/(levels[1]-levels[0])
	hi = q[m-1] + (1-levels[m-1])*(q[m-1]-q[m-2])/(levels[m-1]-levels[m-2])
	return max(0, min(lo, q[0])), min(1, max(hi, q[m-1]))
}

// QuantileAt returns the tau-quantile (tau in [0, 1]) of the forecast
// given by quantiles q at levels (see above), interpolating linearly. It
// panics when levels and q differ in length or have fewer than two
// entries.
func QuantileAt(levels, q []float64, tau float64) float64 {
	check(levels, q)
	if math.IsNaN(tau) {
		return math.NaN()
	}
	lo, hi := knots(levels, q)
	tau = min(max(tau, 0), 1)
	prevT, prevQ := 0.0, lo
	for i, l := range levels {
		if tau <= l {
			return interp(prevT, prevQ, l, q[i], tau)
		}
		prevT, prevQ = l, q[i]
	}
	return interp(prevT, prevQ, 1, hi, tau)
}

// Exceed returns the probability that a value drawn from the forecast
// given by quantiles q at levels (see above) exceeds x: 1 - F(x), where
// F(x) is the largest level whose quantile is at most x. It panics like
// QuantileAt.
func Exceed(levels, q []float64, x float64) float64 {
	check(levels, q)
	if math.IsNaN(x) {
		return math.NaN()
	}
	lo, hi := knots(levels, q)
	if x < lo {
		return 1
	}
	if x >= hi {
		return 0
	}
	// The last knot at or below x, then the next one (above x).
	prevT, prevQ := 0.0, lo
	for i, l := range levels {
		if q[i] > x {
			return 1 - interp(prevQ, prevT, q[i], l, x)
		}
		prevT, prevQ = l, q[i]
	}
	return 1 - interp(prevQ, prevT, hi, 1, x)
}

// interp is the line through (x0, y0) and (x1, y1) at x, y0 when x0 == x1.
func interp(x0, y0, x1, y1, x float64) float64 {
	if x1 == x0 {
		return y0
	}
	return y0 + (y1-y0)*(x-x0)/(x1-x0)
}

func check(levels, q []float64) {
	if len(levels) != len(q) || len(levels) < 2 {
		panic("forecast: levels and quantiles mismatch")
	}
}
