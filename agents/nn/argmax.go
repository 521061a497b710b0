package nn

import "math"

// MaskedArgmax is the valid action (mask[a] true, a < len(out)) of largest
// out[a], the lowest index on ties, and -1 when none is valid: the mode of
// an actor's logits, or the greedy action of a Q-network, as the learned
// policies take it. A NaN is never larger than another output, and none
// compares larger than it: a NaN at the first valid action stays.
func MaskedArgmax(out []float32, mask []bool) int {
	best, bv := -1, float32(math.Inf(-1))
	for a, ok := range mask {
		if ok && a < len(out) && (best < 0 || out[a] > bv) {
			best, bv = a, out[a]
		}
	}
	return best
}
