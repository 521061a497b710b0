package autoscale

import (
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/infer/mm"
)

// Sample is a deployment's state at the end of one monitoring window.
type Sample struct {
	// T is the window's end (s since the trace's start).
	T float64
	// Sizes is the pools' instances (starting or active) after the
	// window's decision; GPUs the GPUs they hold, draining ones included.
	Sizes Sizes
	GPUs  int
	// Arrived is the requests that arrived in the window; Finished those
	// that made their first token in it and Met those of them within
	// their TTFT objective.
	Arrived, Finished, Met int
}

// Outcome is a driven run's result.
type Outcome struct {
	// Summary is the simulator's summary of the whole run.
	Summary mm.Summary
	// Samples are the monitoring windows, in order.
	Samples []Sample
	// Added and Removed count the scaling actions taken.
	Added, Removed int
	// Triggers counts the monitoring windows whose SLO attainment fell
	// below the threshold (whether or not sizes changed).
	Triggers int
	// Met is the requests whose TTFT met their objective (Config.SLO); Attainment is Met over all requests
	// (a request never served counts as a miss).
	Met        int
	Attainment float64
}

// Run drives s, the simulation of reqs, to its end under router r and
// scaler sc: it sets the pools
// to sc.Initial(), then every cfg.Monitor seconds runs the simulation to
// the window's end, asks sc.Decide (with the monitoring window, or with
// the whole period when one ends) and adds or removes instances to reach
// the targets. cfg must be the scaler's own. Removals take starting
// instances first (they hold GPUs and serve nothing yet), then the active
// instances with the fewest outstanding requests; a pool keeps one active
// instance (the simulator's rule), so a removal it refuses waits for the
// next decision.
func Run(s *mm.Sim, reqs []mm.Request, r mm.Router, sc Scaler, cfg Config) (Outcome, error) {
	d, err := NewDriver(s, reqs, r, cfg, sc.Initial())
	if err != nil {
		return Outcome{}, err
	}
	for !d.Done() {
		w, tick, err := d.Next()
		if err != nil {
			return d.Outcome(), err
		}
		if err := d.Set(sc.Decide(w, d.Sizes(), tick)); err != nil {
			return d.Outcome(), err
		}
	}
	return d.Outcome(), nil
}

// Driver is Run's loop turned inside out, for a caller that decides
// between windows itself (a gym environment): Next runs the simulation to
// the next monitoring window's end and returns what it saw, Set applies
// the sizes decided on it.
type Driver struct {
	d      driver
	r      mm.Router
	cfg    Config
	out    Outcome
	cur    Sizes
	k      int
	ticks  int
	period Window
	last   Window // the last monitoring window
	done   bool
	// finished and met count the windows' requests so far.
	finished, met int
}

// NewDriver returns a driver of s, the simulation of reqs, under router
// r, with the pools set to initial.
func NewDriver(s *mm.Sim, reqs []mm.Request, r mm.Router, cfg Config, initial Sizes) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if s.Now() != 0 {
		return nil, fmt.Errorf("%w: the simulation has already run to %v s", ErrBadConfig, s.Now())
	}
	d := &Driver{d: driver{s: s, reqs: reqs, slo: cfg.SLO, decoupled: s.Config().Decoupled(), model: s.Config().Model}, r: r, cfg: cfg,
		ticks: max(1, int(math.Round(cfg.Period/cfg.Monitor)))}
	if err := d.d.apply(initial, &d.out); err != nil {
		return nil, err
	}
	d.cur = d.d.sizes()
	return d, nil
}

// Next runs the simulation to the next monitoring window's end and
// returns the window; when it closes a period (tick), the period's
// window instead (its loads summed, Peak its busiest window's rates, its
// backlog the last window's).
func (d *Driver) Next() (Window, bool, error) {
	d.k++
	t := float64(d.k) * d.cfg.Monitor
	if err := d.d.s.RunUntil(t, d.r); err != nil {
		return Window{}, false, err
	}
	w := d.d.window(t)
	d.last = w
	d.period.add(w)
	if w.Attainment() < d.cfg.Threshold {
		d.out.Triggers++
	}
	if d.k%d.ticks != 0 {
		return w, false, nil
	}
	p := d.period
	p.pending(w)
	d.period = Window{}
	return p, true, nil
}

// Set sets the pools' targets after the window Next returned and records
// the window's sample.
func (d *Driver) Set(next Sizes) error {
	if err := d.d.apply(next, &d.out); err != nil {
		return err
	}
	d.cur = d.d.sizes()
	w := d.last
	d.finished += w.Finished
	d.met += w.Met
	d.out.Samples = append(d.out.Samples, Sample{T: float64(d.k) * d.cfg.Monitor, Sizes: d.cur, GPUs: d.d.gpus(), Arrived: w.Requests, Finished: w.Finished, Met: w.Met})
	d.done = d.d.done()
	return nil
}

// Totals returns the requests that made their first token in the
// windows set so far, and how many of them met their objective.
func (d *Driver) Totals() (finished, met int) { return d.finished, d.met }

// Sizes returns the pools' current instances (starting or active).
func (d *Driver) Sizes() Sizes { return d.cur }

// Done reports whether every request has arrived and none is in flight.
func (d *Driver) Done() bool { return d.done }

// Now is the simulated time (s).
func (d *Driver) Now() float64 { return d.d.s.Now() }

// GPUSeconds is the GPU time held so far.
func (d *Driver) GPUSeconds() float64 { return d.d.s.GPUSeconds() }

// Outcome returns the run's outcome so far.
func (d *Driver) Outcome() Outcome {
	out := d.out
	out.Samples = append([]Sample(nil), d.out.Samples...)
	out.Summary = d.d.s.Summary()
	out.Met = 0
	for _, x := range out.Samples {
		out.Met += x.Met
	}
	out.Attainment = 1
	if n := len(d.d.reqs); n > 0 {
		out.Attainment = float64(out.Met) / float64(n)
	}
	return out
}

// add accumulates window v into a period, keeping the busiest window's
// rates in Peak.
func (w *Window) add(v Window) {
	w.Seconds += v.Seconds
	w.Requests += v.Requests
	w.ImageTokens += v.ImageTokens
	w.TextLoad += v.TextLoad
	w.Finished += v.Finished
	w.Met += v.Met
	w.ImageWait += v.ImageWait
	w.TextWait += v.TextWait
	r := v.Rates()
	w.Peak = Rates{max(w.Peak.Requests, r.Requests), max(w.Peak.ImageTokens, r.ImageTokens), max(w.Peak.TextLoad, r.TextLoad)}
}

// pending sets a period's backlog to its last window's.
func (w *Window) pending(v Window) {
	w.PendingImageTokens, w.PendingTextLoad, w.PendingRequests = v.PendingImageTokens, v.PendingTextLoad, v.PendingRequests
}

// driver is Run's state: where it is in the trace and which requests have
// not made their first token yet.
type driver struct {
	s         *mm.Sim
	reqs      []mm.Request
	slo       Objective
	decoupled bool
	model     mm.Model
	next      int   // the next request (by ID) not yet counted as arrived
	waiting   []int // requests arrived, first token not yet made
	last      float64
}

// window closes the monitoring window ending at t.
func (d *driver) window(t float64) Window {
	w := Window{Seconds: t - d.last}
	d.last = t
	v := d.s.View()
	// Arrivals: the requests the simulation has taken in since the last
	// window (RunUntil(t) routes every arrival at or before t; results are
	// by ID in arrival order).
	for ; d.next < len(d.reqs) && d.reqs[d.next].Arrival <= t; d.next++ {
		res := d.s.Result(d.next)
		w.Requests++
		img, txt := d.load(res)
		w.ImageTokens += img
		w.TextLoad += txt
		d.waiting = append(d.waiting, d.next)
	}
	keep := d.waiting[:0]
	for _, id := range d.waiting {
		res := d.s.Result(id)
		if math.IsNaN(res.FirstToken) || res.FirstToken > t {
			if res.Dropped { // never runs
				continue
			}
			keep = append(keep, id)
			w.PendingRequests++
			continue
		}
		w.Finished++
		if res.TTFT() <= d.slo.Of(d.s.IsolatedTTFT(&d.reqs[id]), int(res.Images)) {
			w.Met++
		} else {
			w.ImageWait += res.Ready - res.Arrival
			w.TextWait += res.FirstToken - res.Ready
		}
	}
	d.waiting = keep
	for _, i := range v.Live() {
		iv := &v.Instances[i]
		w.PendingImageTokens += float64(iv.PendingImageTokens)
		if iv.Pool != mm.Image {
			w.PendingTextLoad += float64(iv.PendingTokens)
		}
	}
	return w
}

// load is a request's image tokens and its text instance's prompt load
// (text tokens for a cross-attention model, text and image tokens for a
// decoder-only one).
func (d *driver) load(res mm.Result) (img, txt float64) {
	img = float64(res.ImageTokens)
	txt = float64(res.Prompt)
	if d.model.Arch == mm.DecoderOnly {
		txt += img
	}
	return img, txt
}

// sizes returns the pools' starting and active instances.
func (d *driver) sizes() Sizes {
	if d.decoupled {
		return Sizes{Image: d.s.PoolSize(mm.Image), Text: d.s.PoolSize(mm.Text)}
	}
	return Sizes{Mono: d.s.PoolSize(mm.Mono)}
}

// gpus returns the GPUs held now (draining instances included).
func (d *driver) gpus() int {
	n := 0
	v := d.s.View()
	for _, i := range v.Live() {
		n += v.Instances[i].TP
	}
	return n
}

// done reports whether the run is over: every request arrived and none
// in flight.
func (d *driver) done() bool { return d.s.Done() }

// apply adds or removes instances until the pools reach want.
func (d *driver) apply(want Sizes, out *Outcome) error {
	pools := []struct {
		p mm.Pool
		n int
	}{{mm.Mono, want.Mono}}
	if d.decoupled {
		pools = []struct {
			p mm.Pool
			n int
		}{{mm.Image, want.Image}, {mm.Text, want.Text}}
	}
	for _, pl := range pools {
		for d.s.PoolSize(pl.p) < pl.n {
			if _, err := d.s.AddInstance(pl.p); err != nil {
				return err
			}
			out.Added++
		}
		for d.s.PoolSize(pl.p) > pl.n {
			i := d.victim(pl.p)
			if i < 0 || d.s.RemoveInstance(i) != nil {
				break // the pool's last active instance stays
			}
			out.Removed++
		}
	}
	return nil
}

// victim is the instance of pool p to remove: the newest starting one,
// else the active one with the fewest outstanding requests (the newest
// among equals); -1 if the pool has a single active instance and nothing
// starting.
func (d *driver) victim(p mm.Pool) int {
	v := d.s.View()
	best, active := -1, 0
	live := v.Live()
	for k := len(live) - 1; k >= 0; k-- {
		i := live[k]
		iv := &v.Instances[i]
		if iv.Pool != p {
			continue
		}
		switch iv.State {
		case mm.Starting:
			return i
		case mm.Active:
			active++
			if best < 0 || iv.Outstanding < v.Instances[best].Outstanding {
				best = i
			}
		}
	}
	if active <= 1 {
		return -1
	}
	return best
}
