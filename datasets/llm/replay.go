package llm

import (
	"errors"
	"fmt"
	"math"
)

// ErrBadReplay is wrapped by the error for a Replay that cannot apply.
var ErrBadReplay = errors.New("llm: bad replay")

// Replay says how to replay a trace with arrival times: which window of it,
// at what pace, from when. The zero Replay replays the whole trace as
// given.
type Replay struct {
	// Start and Duration select the window of requests arriving at or
	// after Start and before Start+Duration, in the trace's seconds;
	// Duration 0 runs to the end.
	Start, Duration float64
	// GapScale multiplies every gap between arrivals (and the window's
	// lead, the gap between Start and its first request): 0.5 halves the
	// window's span and doubles the arrival rate; 2 halves the rate. To
	// multiply the rate by k, set 1/k. 0 means 1.
	GapScale float64
	// Shift is added to every arrival after scaling, in seconds (>= 0).
	// SplitwiseSim fails on a request arriving at t = 0, so comparisons
	// with it shift the trace by 1 s.
	Shift float64
}

// Apply returns the requests of reqs (sorted by arrival, as a Trace's are)
// that fall in p's window, arriving at (a - Start) * GapScale + Shift, and
// sorted again (stably) and renumbered 0, 1, ... in order; reqs is not
// modified. With GapScale 1
// and Start 0 an arrival is a + Shift, the trace's own time when Shift is
// 0. A window with no request is ErrEmpty; a replay that moves an arrival
// past MaxArrival, or a negative, NaN or infinite parameter, is
// ErrBadReplay.
func (p Replay) Apply(reqs []Request) ([]Request, error) {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	scale := p.GapScale
	if scale == 0 {
		scale = 1
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"start", p.Start}, {"duration", p.Duration}, {"gap scale", scale}, {"shift", p.Shift}} {
		if !finite(v.x) || v.x < 0 {
			return nil, fmt.Errorf("%w: %s %v, want a finite value >= 0", ErrBadReplay, v.name, v.x)
		}
	}
	end := math.Inf(1)
	if p.Duration > 0 {
		end = p.Start + p.Duration
	}
	out := make([]Request, 0, len(reqs))
	for _, r := range reqs {
		if r.Arrival < p.Start || r.Arrival >= end {
			continue
		}
		r.Arrival = (r.Arrival-p.Start)*scale + p.Shift
		if !(r.Arrival <= MaxArrival) {
			return nil, fmt.Errorf("%w: request %d would arrive at %g s, past MaxArrival (%g s)", ErrBadReplay, r.ID, r.Arrival, float64(MaxArrival))
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no request in [%g, %g) s", ErrEmpty, p.Start, end)
	}
	return finish(out)
}
