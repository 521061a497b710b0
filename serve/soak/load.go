package soak

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/drover-sched/drover/internal/loadgen"
)

// load runs every client against the server for d: the hostile ones
// (startHostile) and the well-behaved Place client; it samples the
// server and probes every listener once a window, then makes every
// client leave (closing its connections) and returns what they
// delivered.
func (r *runner) load(ctx context.Context, phase string, d time.Duration, jobs int, w *Windows) (Load, error) {
	c := r.c
	placeAddr := c.Addrs.Fast
	if c.PlaceVia == "grpc" {
		placeAddr = c.Addrs.GRPC
	}
	placeConn, err := dial(placeAddr)
	if err != nil {
		return Load{}, err
	}
	defer placeConn.Close()
	// Connected before the schedule starts, so that the first calls do
	// not count the dial.
	if err := waitReady(ctx, placeConn); err != nil {
		return Load{}, fmt.Errorf("soak: connect to %s: %w", placeAddr, err)
	}
	hostile, err := startHostile(ctx, HostileSpec{Config: c, Phase: phase, Duration: d, Jobs: jobs})
	if err != nil {
		return Load{}, err
	}
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	place := &placeClient{conn: placeConn, req: PlaceRequest(c.Nodes), rate: c.PlaceRate, timeout: c.PlaceTimeout, slots: c.PlaceSlots,
		end: d, lag: loadgen.NewHistogram()}
	probes := &prober{addrs: c.Addrs}
	var wg sync.WaitGroup
	wg.Go(func() { place.run(lctx, w) })
	err = r.tick(ctx, lctx, phase, w, probes)
	cancel()
	wg.Wait()
	h, herr := hostile()
	if err == nil {
		err = herr
	}
	load := Load{AgentsAsked: h.AgentsAsked, AgentSessions: h.AgentSessions, AgentFailures: h.AgentFailures,
		JobsAsked: jobs, JobsReported: h.JobsReported, ReportErrors: h.ReportErrors, Slow: h.Slow, Probes: probes.results(),
		PlaceLagP99: place.lag.Quantile(0.99), PlaceLagMax: place.lag.Max()}
	r.mu.Lock()
	load.SampleFailures = r.failed[phase]
	if last, ok := lastOf(r.samples, phase); ok {
		first := firstOf(r.samples, phase)
		load.ServedPlace, load.ServedWithin = last.PlaceServed-first.PlaceServed, last.PlaceServedWithin-first.PlaceServedWithin
	}
	r.mu.Unlock()
	if r.c.Progress != nil {
		fmt.Fprintf(r.c.Progress, "%s: %s\n", phase, judgeLoad(load).Detail)
		if h.LastReportError != "" {
			fmt.Fprintf(r.c.Progress, "%s: last Report error: %s\n", phase, h.LastReportError)
		}
	}
	return load, err
}

// tick samples the server every SampleEvery and probes the listeners
// every Window until lctx ends, and samples once more at its end (on
// ctx, before the clients leave); it prints each window's Place latency
// once the window is over.
func (r *runner) tick(ctx, lctx context.Context, phase string, w *Windows, probes *prober) error {
	t := time.NewTicker(r.c.SampleEvery)
	defer t.Stop()
	start, nextProbe, printed := time.Now(), time.Duration(0), 0
	for {
		if _, err := r.sample(ctx, phase); err != nil {
			return err
		}
		if time.Since(start) >= nextProbe {
			probes.probeAll()
			nextProbe += r.c.Window
		}
		printed = r.printWindows(w, printed, false)
		select {
		case <-lctx.Done():
			if _, err := r.sample(ctx, phase); err != nil {
				return err
			}
			r.printWindows(w, printed, true)
			return nil
		case <-t.C:
		}
	}
}

// printWindows prints the windows from the printed-th on: those over
// (all but the last one), or all when final. It returns how many are
// printed now.
func (r *runner) printWindows(w *Windows, printed int, final bool) int {
	st := w.Stats()
	n := len(st) - 1
	if final {
		n = len(st)
	}
	for ; printed < n; printed++ {
		p := st[printed]
		if r.c.Progress != nil {
			fmt.Fprintf(r.c.Progress, "%7s  Place window %3.0f-%3.0f s: p50 %s  p99 %s  max %s  ok %d  failed %d\n",
				"", p.Start.Seconds(), (p.Start + r.c.Window).Seconds(), ms(p.P50), ms(p.P99), ms(p.Max), p.OK, p.Errors)
		}
	}
	return max(printed, n)
}

// slowlorises returns the slow connections of every listener: idle and
// preface-only ones on the gRPC port, preface-only on the fast
// listener, slow bodies on the extender, slow headers on the metrics
// listener.
func slowlorises(c Config) []*slowloris {
	if c.SlowConns == 0 {
		return nil
	}
	mk := func(name, addr string, kinds ...slowKind) *slowloris {
		return &slowloris{name: name, addr: addr, kinds: kinds, conns: c.SlowConns, peers: c.SlowPeers, every: c.SlowEvery}
	}
	a := c.Addrs
	return []*slowloris{mk("grpc", a.GRPC, slowIdle, slowPreface), mk("fast", a.Fast, slowPreface),
		mk("extender", a.Extender, slowBody), mk("metrics", a.Metrics, slowHeaders)}
}
