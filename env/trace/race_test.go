//go:build race

package trace_test

// raceEnabled is whether the race detector is on (slow cases skip).
const raceEnabled = true
