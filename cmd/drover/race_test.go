//go:build race

package main

// raceEnabled is whether the race detector is on (slow tests skip).
const raceEnabled = true
