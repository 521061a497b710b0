package serve

import "time"

// Clock is the server's source of time: decision timestamps, deadline
// budgets, latency metrics and the checkpoint watcher's polling. Tests
// inject a fake one with WithClock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time after d has passed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock, the default.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
