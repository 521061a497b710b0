package infer

import "math"

// validSteps reports whether every fixed format step time is finite and
// not negative.
func validSteps(m map[string]float64) bool {
	for _, v := range m {
		if !(v >= 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
