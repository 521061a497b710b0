//go:build !race

package serve_test

// raceEnabled is whether the race detector is on: sync.Pool then drops
// items at random, so allocation counts mean nothing.
const raceEnabled = false
