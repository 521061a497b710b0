package checkpoints

import (
	"fmt"
	"math"
)

// Support is the box the training contexts span over the first len(Lo)
// dimensions of the observation: per dimension, the least and the greatest
// value seen. A learned value is an extrapolation outside it, however
// confident an ensemble's heads are (they were all fitted on the same
// contexts and can agree on the same wrong answer), so Gate keeps the
// heuristic's action there. The box is a coarse test: a context inside it
// can still be unlike every training context, but one outside it surely
// is (a job larger than any trained on, say).
type Support struct {
	// Lo and Hi are the bounds per dimension (Lo[i] <= Hi[i]).
	Lo []float64 `json:"lo"`
	Hi []float64 `json:"hi"`
	n  int       // contexts added
}

// NewSupport returns the empty support of the first dims dimensions; it
// contains nothing until Add widens it.
func NewSupport(dims int) *Support {
	s := &Support{Lo: make([]float64, dims), Hi: make([]float64, dims)}
	for i := range dims {
		s.Lo[i], s.Hi[i] = math.Inf(1), math.Inf(-1)
	}
	return s
}

// Add widens s to hold obs (its first len(s.Lo) values; NaN values are
// skipped). It panics when obs is shorter.
func (s *Support) Add(obs []float32) {
	if len(obs) < len(s.Lo) {
		panic(fmt.Sprintf("checkpoints: support of %d dimensions, context of %d", len(s.Lo), len(obs)))
	}
	for i := range s.Lo {
		v := float64(obs[i])
		if math.IsNaN(v) {
			continue
		}
		s.Lo[i], s.Hi[i] = min(s.Lo[i], v), max(s.Hi[i], v)
	}
	s.n++
}

// Added returns the number of contexts Add has taken.
func (s *Support) Added() int { return s.n }

// Contains reports whether obs's first len(s.Lo) values lie in the box.
// A NaN value does not.
func (s *Support) Contains(obs []float64) bool {
	if len(obs) < len(s.Lo) {
		return false
	}
	for i, lo := range s.Lo {
		if !(obs[i] >= lo && obs[i] <= s.Hi[i]) {
			return false
		}
	}
	return true
}

// Gate returns act restricted to s: outside the box it answers action 0,
// the heuristic's own choice, without calling act.
func (s *Support) Gate(act func(obs []float64, mask []bool) int) func(obs []float64, mask []bool) int {
	return func(obs []float64, mask []bool) int {
		if !s.Contains(obs) {
			return 0
		}
		return act(obs, mask)
	}
}

// Validate checks a support read from a checkpoint against its
// observation size: at most obsDim dimensions, finite bounds, Lo <= Hi.
func (s *Support) Validate(obsDim int) error {
	switch {
	case len(s.Lo) != len(s.Hi):
		return fmt.Errorf("support: %d lower and %d upper bounds", len(s.Lo), len(s.Hi))
	case len(s.Lo) == 0 || len(s.Lo) > obsDim:
		return fmt.Errorf("support: %d dimensions, want 1 to %d", len(s.Lo), obsDim)
	}
	for i, lo := range s.Lo {
		hi := s.Hi[i]
		if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) || lo > hi {
			return fmt.Errorf("support: dimension %d: bounds [%v, %v]", i, lo, hi)
		}
	}
	return nil
}
