package agent

import "time"

// Clock is the agent's source of time: sample timestamps, the sampling
// ticker and the reconnection backoff. Tests inject a fake one through
// Config.Clock; the default is the wall clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time after d has passed.
	After(d time.Duration) <-chan time.Time
	// NewTicker returns a ticker that ticks every d.
	NewTicker(d time.Duration) Ticker
}

// Ticker delivers the sampling ticks.
type Ticker interface {
	// C returns the channel the ticks arrive on.
	C() <-chan time.Time
	// Stop turns the ticker off.
	Stop()
}

// RealClock is the wall clock, the default Clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NewTicker implements Clock with a time.Ticker.
func (RealClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// realTicker adapts a time.Ticker to Ticker.
type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
