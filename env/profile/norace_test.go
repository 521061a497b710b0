//go:build !race

package profile

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
