package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Limits are a listener's connection limits; zero or negative is no
// limit.
type Limits struct {
	// Max is the most connections open at once.
	Max int
	// PerPeer is the most connections open at once from one peer (an
	// IPv4 address or an IPv6 /64).
	PerPeer int
}

// Reason says why a connection was refused: the label of the refusals'
// metric.
type Reason string

// The reasons of a refusal.
const (
	// Full: the listener has Max connections open.
	Full Reason = "listener_full"
	// PeerFull: the connection's peer has PerPeer connections open.
	PeerFull Reason = "peer_full"
)

// Limiter counts a listener's open connections against its Limits. It is
// safe for concurrent use.
type Limiter struct {
	lim   Limits
	mu    sync.Mutex
	open  int
	peers map[netip.Prefix]int
}

// New returns a Limiter with no connection open.
func New(lim Limits) *Limiter {
	return &Limiter{lim: lim, peers: map[netip.Prefix]int{}}
}

// Acquire takes a slot for a connection from addr (its remote address),
// or reports why there is none. Each Acquire that succeeds takes one
// Release with the same address.
func (l *Limiter) Acquire(addr net.Addr) (Reason, bool) {
	key, keyed := peerKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.Max > 0 && l.open >= l.lim.Max {
		return Full, false
	}
	if keyed && l.lim.PerPeer > 0 && l.peers[key] >= l.lim.PerPeer {
		return PeerFull, false
	}
	l.open++
	if keyed {
		l.peers[key]++
	}
	return "", true
}

// AcquireBeyondMax takes a slot for a connection from addr within the
// per-peer limit alone, or reports PeerFull: for a caller that has just
// closed another connection to make room under Max, whose Release is
// still to come. Each success takes one Release.
func (l *Limiter) AcquireBeyondMax(addr net.Addr) (Reason, bool) {
	key, keyed := peerKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if keyed && l.lim.PerPeer > 0 && l.peers[key] >= l.lim.PerPeer {
		return PeerFull, false
	}
	l.open++
	if keyed {
		l.peers[key]++
	}
	return "", true
}

// Release gives back the slot of a connection from addr.
func (l *Limiter) Release(addr net.Addr) {
	key, keyed := peerKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if keyed {
		if n := l.peers[key] - 1; n > 0 {
			l.peers[key] = n
		} else {
			delete(l.peers, key)
		}
	}
}

// Open returns the count of connections holding a slot.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// peerKey is the peer an address counts toward: its IPv4 address, or
// its IPv6 /64; false for an address that is not IP.
func peerKey(addr net.Addr) (netip.Prefix, bool) {
	var ip netip.Addr
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		return netip.Prefix{}, false
	}
	if !ip.IsValid() {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.WithZone("").Prefix(bits)
	return p, true
}

// Listen wraps inner so that its connections hold a slot of l from
// Accept to Close; a connection without a slot is closed at once and
// refused (when not nil) told why.
func Listen(inner net.Listener, l *Limiter, refused func(Reason)) net.Listener {
	return &listener{Listener: inner, l: l, refused: refused}
}

type listener struct {
	net.Listener
	l       *Limiter
	refused func(Reason)
}

// Accept implements net.Listener: the next connection within the limits.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := c.RemoteAddr()
		why, ok := ln.l.Acquire(addr)
		if ok {
			return &conn{Conn: c, l: ln.l, addr: addr}, nil
		}
		if ln.refused != nil { // before the close: a peer that sees it sees the count
			ln.refused(why)
		}
		c.Close()
	}
}

// conn is a connection holding a slot, given back on its first Close.
type conn struct {
	net.Conn
	l      *Limiter
	addr   net.Addr
	closed atomic.Bool

	// Of a ListenEvicting listener (nil for Listen's), under ev.mu:
	ev    *EvictListener
	since uint64 // when it began to wait for a complete request (ev.seq)
	busy  bool   // its request read, its handler running
}

// Close implements net.Conn.
func (c *conn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		if c.ev != nil {
			c.ev.forget(c)
		}
		c.l.Release(c.addr)
	}
	return err
}

// NetConn returns the connection it wraps (as tls.Conn's NetConn does).
func (c *conn) NetConn() net.Conn { return c.Conn }
