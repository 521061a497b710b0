package gym

import (
	"fmt"
	"math"
)

// Box is a one-dimensional space of real vectors: x is in the box when
// len(x) == len(Low) and Low[i] <= x[i] <= High[i] for every i. A bound
// may be ±Inf (or ±math.MaxFloat32, as Gymnasium writes "unbounded" for
// float32 spaces). It is the observation space of every Env.
type Box struct {
	Low, High []float64
}

// Shape returns the length of the vectors in the box, len(Low). Boxes
// are flat, so Gymnasium's shape tuple (n,) is the single number n.
func (b Box) Shape() int { return len(b.Low) }

// Contains reports whether x lies in the box. A NaN is in no box.
func (b Box) Contains(x []float64) bool {
	if len(x) != len(b.Low) {
		return false
	}
	for i, v := range x {
		if !(b.Low[i] <= v && v <= b.High[i]) { // false for NaN
			return false
		}
	}
	return true
}

// validate returns an error when the box is malformed: bounds of unequal
// length, a NaN bound, or Low[i] > High[i].
func (b Box) validate() error {
	if len(b.Low) != len(b.High) {
		return fmt.Errorf("gym: box has %d low and %d high bounds", len(b.Low), len(b.High))
	}
	for i := range b.Low {
		lo, hi := b.Low[i], b.High[i]
		if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
			return fmt.Errorf("gym: box bound %d is [%v, %v]", i, lo, hi)
		}
	}
	return nil
}

// equal reports whether two boxes have bit-identical bounds.
func (b Box) equal(c Box) bool {
	return floatsIdentical(b.Low, c.Low) && floatsIdentical(b.High, c.High)
}

// Discrete is the action space {0, 1, ..., N-1} (Gymnasium's Discrete
// with start 0). It is the action space of every Env.
type Discrete struct {
	N int
}

// Contains reports whether a is a valid action, 0 <= a < N.
func (d Discrete) Contains(a int) bool { return 0 <= a && a < d.N }

// floatsIdentical reports whether a and b hold the same float64 bit
// patterns: NaN equals a NaN with the same bits, and -0 differs from +0.
func floatsIdentical(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
