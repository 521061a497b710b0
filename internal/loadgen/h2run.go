package loadgen

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/drover-sched/drover/internal/cputime"
)

// h2run is one Run over the lean client: one sender goroutine keeps the
// schedule for every connection, and each connection's reader records its
// answers in its own shard.
type h2run struct {
	start   time.Time
	timeout time.Duration // each call's deadline (0: none)
	slots   chan struct{} // one token per request in flight
	shards  []h2shard
	wg      sync.WaitGroup // requests in flight
}

// h2shard is what one connection's answers recorded. Only that
// connection's reader writes it (and the sender, for requests it could
// not send), under mu.
type h2shard struct {
	mu sync.Mutex
	answers
	last time.Duration
}

// finish records the answer to f: its latency from its due time when
// code is OK, else its code; it frees the request's slot.
func (r *h2run) finish(f inflight, code codes.Code) {
	end := time.Since(r.start)
	if code == codes.Canceled && r.timeout > 0 && end-f.sent >= r.timeout {
		// A gRPC server resets (CANCEL) a stream whose deadline passed.
		code = codes.DeadlineExceeded
	}
	s := &r.shards[f.conn]
	s.mu.Lock()
	s.record(code, end-f.due)
	s.last = max(s.last, end)
	s.mu.Unlock()
	<-r.slots
	r.wg.Done()
}

// runH2 is Run over cfg.H2.
func runH2(ctx context.Context, cfg Config) (Result, error) {
	w, err := newWaiter()
	if err != nil {
		return Result{}, err
	}
	defer w.close()
	blocks := make([][]byte, len(cfg.H2))
	for i, c := range cfg.H2 {
		blocks[i] = c.headerBlock(cfg.Method, cfg.Timeout)
	}
	msg := make([]byte, 5+len(cfg.Payload)) // gRPC's prefix: not compressed, length
	msg[1], msg[2], msg[3], msg[4] = byte(len(cfg.Payload)>>24), byte(len(cfg.Payload)>>16), byte(len(cfg.Payload)>>8), byte(len(cfg.Payload))
	copy(msg[5:], cfg.Payload)
	for _, c := range cfg.H2 {
		if err := c.fits(len(msg)); err != nil {
			return Result{}, err
		}
	}

	r := &h2run{timeout: cfg.Timeout, slots: make(chan struct{}, cfg.Concurrency), shards: make([]h2shard, len(cfg.H2))}
	for i := range r.shards {
		r.shards[i].answers = newAnswers()
	}
	lag := NewHistogram()
	var sent uint64
	interval := 1e9 / cfg.Rate
	cpu0 := cputime.Seconds()
	r.start = time.Now()
	var runErr error
send:
	for i := range cfg.N {
		due := time.Duration(float64(i) * interval)
		stopped, err := waitUntil(ctx, w, r.start.Add(due))
		if stopped || err != nil {
			runErr = err
			break
		}
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			break send
		}
		k := i % len(cfg.H2)
		f := inflight{run: r, conn: k, due: due, sent: time.Since(r.start)}
		lag.Record(f.sent - due)
		sent++
		r.wg.Add(1)
		if err := cfg.H2[k].send(f, blocks[k], msg); err != nil {
			r.finish(f, codes.Unavailable)
		}
	}
	// Wait for the answers: until the context ends, or for a deadline
	// past the last send (the server enforces it too, through
	// grpc-timeout); the streams still waiting then are reset and counted
	// (DeadlineExceeded, or Canceled when the context ended).
	waited := make(chan struct{})
	go func() { r.wg.Wait(); close(waited) }()
	var limit <-chan time.Time
	if cfg.Timeout > 0 {
		t := time.NewTimer(cfg.Timeout + time.Second)
		defer t.Stop()
		limit = t.C
	}
	late := codes.OK
	select {
	case <-waited:
	case <-ctx.Done():
		late = codes.Canceled
	case <-limit:
		late = codes.DeadlineExceeded
	}
	if late != codes.OK {
		for _, c := range cfg.H2 {
			for _, f := range c.cancel(r) {
				r.finish(f, late)
			}
		}
		<-waited
	}
	cpu1 := cputime.Seconds()

	res := Result{Latency: NewHistogram(), Lag: lag, Errors: map[string]uint64{}, Sent: sent,
		ClientCPU: time.Duration((cpu1 - cpu0) * 1e9)}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		s.addTo(&res)
		res.Elapsed = max(res.Elapsed, s.last)
		s.mu.Unlock()
	}
	return res, runErr
}
