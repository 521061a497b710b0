package strn

import "math"

// Risk is STRN's expected overload at predicted utilisation u, with the
// overload threshold and the smoothing width Uncertainty as in STRN: the
// overload function smoothed by a softplus, so that a node just under
// the threshold already counts a little and one far over counts in
// proportion to how far. The policy server's fast path computes its
// placements with it too.
func Risk(overload, uncertainty, u float64) float64 {
	tau := uncertainty / (1 - overload)
	x := (u - overload) / (1 - overload) / tau
	if x > 30 {
		return tau * x
	}
	return tau * math.Log1p(math.Exp(x))
}

// RiskMemo remembers Risk's answers by argument. Telemetry repeats
// itself (idle nodes, or none, read the same few utilisations; a live
// node's load changes only when its agent reports), so a placement asks
// Risk the same questions again and again, and the softplus's log1p and
// exp were a fifth of a served Place. Direct-mapped, 256 entries; it
// belongs to one pair of settings and starts over for another. Its
// answers are Risk's, bit for bit. The zero value is ready to use.
type RiskMemo struct {
	overload, uncertainty float64
	ready                 bool
	keys                  [256]uint64 // the argument's bits; all ones when empty
	vals                  [256]float64
}

// Risk returns Risk(overload, uncertainty, u), remembered.
func (m *RiskMemo) Risk(overload, uncertainty, u float64) float64 {
	if u != u { // NaN: never a key (all ones is a NaN's bits)
		return Risk(overload, uncertainty, u)
	}
	if !m.ready || m.overload != overload || m.uncertainty != uncertainty {
		for i := range m.keys {
			m.keys[i] = ^uint64(0)
		}
		m.overload, m.uncertainty, m.ready = overload, uncertainty, true
	}
	b := math.Float64bits(u)
	i := (b * 0x9e3779b97f4a7c15) >> 56
	if m.keys[i] == b {
		return m.vals[i]
	}
	r := Risk(overload, uncertainty, u)
	m.keys[i], m.vals[i] = b, r
	return r
}
