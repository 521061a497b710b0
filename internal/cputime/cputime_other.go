//go:build !unix

package cputime

import "math"

// Seconds returns NaN: CPU time is not measured on this platform.
func Seconds() float64 { return math.NaN() }
