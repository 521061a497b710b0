package connlimit

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// ListenEvicting is Listen for an HTTP/1 server whose connections make
// room for each other: when a new connection finds the listener full
// (Max open), the open connection that has been the longest without a
// complete request (its first request's headers or body still arriving,
// or idle between requests) is closed and evicted (when not nil) called,
// and the new one takes its slot. A connection whose request has been
// read and whose handler is still running is never evicted; when every
// connection is in a handler, the new one is refused as Full. The
// per-peer limit refuses as Listen does.
//
// The listener learns a connection's phase from its http.Server: call
// Guard with it before Serve. A connection of a server that is not
// guarded counts as waiting for its request from Accept to Close.
func ListenEvicting(inner net.Listener, l *Limiter, refused func(Reason), evicted func()) *EvictListener {
	return &EvictListener{Listener: inner, l: l, refused: refused, evicted: evicted, conns: map[*conn]struct{}{}}
}

// EvictListener is a listener made by ListenEvicting.
type EvictListener struct {
	net.Listener
	l       *Limiter
	refused func(Reason)
	evicted func()

	mu    sync.Mutex
	seq   uint64             // the last since given
	conns map[*conn]struct{} // open connections
}

// Accept implements net.Listener: the next connection within the
// limits, made room for by an eviction when the listener is full.
func (ln *EvictListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := c.RemoteAddr()
		why, ok := ln.l.Acquire(addr)
		if !ok && why == Full && ln.evict() {
			// The victim's slot is given back by its Close, which
			// may still be under way in its server's goroutine.
			why, ok = ln.l.AcquireBeyondMax(addr)
		}
		if !ok {
			c.Close()
			if ln.refused != nil {
				ln.refused(why)
			}
			continue
		}
		tc := &conn{Conn: c, l: ln.l, addr: addr, ev: ln}
		ln.mu.Lock()
		ln.seq++
		tc.since = ln.seq
		ln.conns[tc] = struct{}{}
		ln.mu.Unlock()
		return tc, nil
	}
}

// evict closes the connection that has waited longest for a complete
// request, and reports whether there was one.
func (ln *EvictListener) evict() bool {
	ln.mu.Lock()
	var victim *conn
	for c := range ln.conns {
		if !c.busy && !c.closed.Load() && (victim == nil || c.since < victim.since) {
			victim = c
		}
	}
	if victim != nil {
		// Closed under mu, so that it cannot become busy first.
		delete(ln.conns, victim)
		victim.Conn.Close()
	}
	ln.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.Close()
	if ln.evicted != nil {
		ln.evicted()
	}
	return true
}

// Guard makes hs tell ln each of its connections' phases: it sets
// hs.ConnState (calling the one already set after), hs.ConnContext and
// wraps hs.Handler. A connection is waiting from Accept and from each
// return to idle (http.StateIdle), and busy from the moment its
// request's body has been read to the end (at once for a request
// without a body) until then; busy connections are not evicted.
func (ln *EvictListener) Guard(hs *http.Server) {
	prevState, prevCtx, h := hs.ConnState, hs.ConnContext, hs.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		if tc := ln.tracked(c); tc != nil {
			switch s {
			case http.StateIdle:
				ln.setBusy(tc, false)
			case http.StateHijacked:
				ln.setBusy(tc, true) // no longer the server's to judge
			}
		}
		if prevState != nil {
			prevState(c, s)
		}
	}
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		if tc := ln.tracked(c); tc != nil {
			ctx = context.WithValue(ctx, connKey{}, tc)
		}
		return ctx
	}
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc, _ := r.Context().Value(connKey{}).(*conn)
		if tc == nil {
			h.ServeHTTP(w, r)
			return
		}
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			ln.setBusy(tc, true)
		} else {
			r.Body = &bodyWatch{ReadCloser: r.Body, left: r.ContentLength, done: func() { ln.setBusy(tc, true) }}
		}
		h.ServeHTTP(w, r)
	})
}

// connKey keys a request's tracked connection in its context.
type connKey struct{}

// tracked returns the connection of ln that c is or wraps (a *tls.Conn's
// NetConn), or nil.
func (ln *EvictListener) tracked(c net.Conn) *conn {
	for c != nil {
		if tc, ok := c.(*conn); ok && tc.ev == ln {
			return tc
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = w.NetConn()
	}
	return nil
}

// setBusy marks c busy (its request read, its handler running) or
// waiting since now.
func (ln *EvictListener) setBusy(c *conn, busy bool) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if !busy {
		ln.seq++
		c.since = ln.seq
	}
	c.busy = busy
}

// forget drops a closed connection.
func (ln *EvictListener) forget(c *conn) {
	ln.mu.Lock()
	delete(ln.conns, c)
	ln.mu.Unlock()
}

// bodyWatch calls done once its body has been read to the end: io.EOF,
// or left (the Content-Length, when known) bytes.
type bodyWatch struct {
	io.ReadCloser
	left int64 // bytes still to come; negative: unknown
	done func()
	over bool
}

// Read implements io.Reader.
func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if !b.over && (err == io.EOF || b.left == 0) {
		b.over = true
		b.done()
	}
	return n, err
}
