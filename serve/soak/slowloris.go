package soak

import (
	"context"
	"errors"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"github.com/drover-sched/drover/internal/loadgen"
)

// slowKind is what a slow connection sends.
type slowKind int

const (
	// slowIdle sends nothing at all.
	slowIdle slowKind = iota
	// slowPreface sends HTTP/2's client preface and an empty SETTINGS
	// frame, then nothing (it never acknowledges the server's SETTINGS).
	slowPreface
	// slowBody sends a POST /filter's headers announcing a 64 KiB body,
	// then one byte of it every interval.
	slowBody
	// slowHeaders sends a GET /metrics request line, then one header
	// line every interval, never the blank line that ends them.
	slowHeaders
)

// h2Preface is HTTP/2's client connection preface followed by an empty
// SETTINGS frame (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// opening and trickle return what a connection of kind sends first and
// at each interval (nil: nothing).
func (k slowKind) opening() []byte {
	switch k {
	case slowPreface:
		return []byte(h2Preface)
	case slowBody:
		return []byte("POST /filter HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n{")
	case slowHeaders:
		return []byte("GET /metrics HTTP/1.1\r\nHost: soak\r\n")
	}
	return nil
}

func (k slowKind) trickle() []byte {
	switch k {
	case slowBody:
		return []byte(" ")
	case slowHeaders:
		return []byte("X-Soak: a\r\n")
	}
	return nil
}

// slowloris holds conns slow connections to one listener until ctx
// ends, each of kinds[i%len(kinds)], from peer address i%peers
// (127.0.0.2, ...; peers 0: the system's choice); one the server closes
// is opened again a second later, or, when the server closed it within
// a second of its opening (refused it), after twice the last wait, at
// most 16 s: a slot the server refuses costs it an accept and a close
// every 16 s, not a connection flood.
type slowloris struct {
	name  string
	addr  string
	kinds []slowKind
	conns int
	peers int
	every time.Duration

	mu                            sync.Mutex
	opened, refused, closed, open uint64
	maxOpen                       uint64
	life                          *loadgen.Histogram
}

// run holds the connections until ctx ends and closes them.
func (s *slowloris) run(ctx context.Context) {
	s.life = loadgen.NewHistogram()
	var wg sync.WaitGroup
	for i := range s.conns {
		wg.Go(func() {
			// Each connection keeps its own phase: its opening, and so
			// its trickles, spread evenly over SlowEvery, its backoff
			// scaled by a factor of its own in [0.5, 1.5). Together
			// they wake the client (and the server) evenly, not in
			// bursts of thousands: a burst would queue the well-behaved
			// client's wake-up behind them on the client's one core.
			phase := spread(i)
			if !sleepCtx(ctx, time.Duration(phase*float64(s.every))) {
				return
			}
			var local net.Addr
			if s.peers > 0 {
				local = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%s.peers))}
			}
			wait := time.Second
			for {
				opened := time.Now()
				if !s.hold(ctx, s.kinds[i%len(s.kinds)], local) {
					return
				}
				if time.Since(opened) < time.Second {
					wait = min(2*wait, 16*time.Second)
				} else {
					wait = time.Second
				}
				if !sleepCtx(ctx, time.Duration((0.5+phase)*float64(wait))) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// hold opens one connection and keeps it slow until the server closes
// it (true) or ctx ends (false).
func (s *slowloris) hold(ctx context.Context, kind slowKind, local net.Addr) bool {
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: local}
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		s.count(func() { s.opened++; s.refused++ })
		return ctx.Err() == nil
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	opened := time.Now()
	s.count(func() { s.opened++; s.open++; s.maxOpen = max(s.maxOpen, s.open) })
	defer s.count(func() { s.open-- })
	buf := make([]byte, 4096)
	_, err = c.Write(kind.opening())
	for err == nil {
		c.SetReadDeadline(time.Now().Add(s.every))
		if _, err = c.Read(buf); err == nil {
			continue // what the server sends (SETTINGS, an error page) is read and dropped
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
			_, err = c.Write(kind.trickle())
		}
	}
	if ctx.Err() != nil {
		return false
	}
	s.count(func() {
		if life := time.Since(opened); life < time.Second {
			s.refused++
		} else {
			s.closed++
			s.life.Record(life)
		}
	})
	return true
}

func (s *slowloris) count(f func()) {
	s.mu.Lock()
	f()
	s.mu.Unlock()
}

// stats returns the counts so far.
func (s *slowloris) stats() SlowStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := SlowStats{Opened: s.opened, Refused: s.refused, Closed: s.closed, MaxOpen: s.maxOpen}
	if s.life != nil {
		st.MedianLife = s.life.Quantile(0.5)
	}
	return st
}

// spread returns connection i's phase in [0, 1): the fractional parts
// of i times the golden ratio, which fill the interval evenly for any
// count of connections (a low-discrepancy sequence).
func spread(i int) float64 {
	_, f := math.Modf(float64(i) * 0.6180339887498949)
	return f
}

// sleepCtx sleeps d, reporting false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
