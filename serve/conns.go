package serve

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/drover-sched/drover/internal/connlimit"
)

// ConnLimits bound one listener's connections, so that clients that
// connect and do nothing (a slowloris, a reconnect loop, 3,000 idle
// connections) cannot take the slots of the ones that call, nor cost
// goroutines and memory forever. A zero field takes the listener's
// default (DefaultGRPCConns, DefaultFastConns); a negative count or
// duration turns that limit off.
type ConnLimits struct {
	// MaxConns is the most connections open at once; more are closed
	// as they are accepted.
	MaxConns int
	// MaxConnsPerPeer is the most connections open at once from one
	// peer (an IPv4 address or an IPv6 /64), so that one client cannot
	// take every slot.
	MaxConnsPerPeer int
	// HandshakeTimeout bounds a new connection's TLS handshake and its
	// HTTP/2 preface and settings.
	HandshakeTimeout time.Duration
	// IdleTimeout closes an idle connection with GOAWAY: on the gRPC
	// listener one without a call or stream in progress (grpc-go's
	// MaxConnectionIdle), on the fast listener one without a frame.
	// gRPC clients reconnect on their next call.
	IdleTimeout time.Duration
	// MaxStreams is the most calls and streams a gRPC connection may
	// have open at once (HTTP/2 MAX_CONCURRENT_STREAMS; clients queue
	// the rest). The fast listener's is fixed at 100.
	MaxStreams int
}

// DefaultGRPCConns are the gRPC listener's limits: room for an agent on
// each of Limits.MaxNodes nodes and their clients, 256 from one address.
var DefaultGRPCConns = ConnLimits{MaxConns: 8192, MaxConnsPerPeer: 256, HandshakeTimeout: 5 * time.Second, IdleTimeout: 5 * time.Minute, MaxStreams: 256}

// DefaultFastConns are the fast listener's limits.
var DefaultFastConns = ConnLimits{MaxConns: 1024, MaxConnsPerPeer: 64, HandshakeTimeout: 5 * time.Second, IdleTimeout: 5 * time.Minute}

// DefaultHTTPConns are the limits LimitListener's callers in
// serve/daemon give the extender's and the metrics' HTTP listeners
// (kube-scheduler calls one at a time per profile; Prometheus scrapes).
var DefaultHTTPConns = ConnLimits{MaxConns: 128, MaxConnsPerPeer: 32}

// withDefaults returns l with each zero field taken from d, and each
// negative one turned off (zero for the code that applies it).
func (l ConnLimits) withDefaults(d ConnLimits) ConnLimits {
	pick := func(v, dv int) int {
		switch {
		case v == 0:
			return dv
		case v < 0:
			return 0
		}
		return v
	}
	pickD := func(v, dv time.Duration) time.Duration {
		switch {
		case v == 0:
			return dv
		case v < 0:
			return 0
		}
		return v
	}
	return ConnLimits{
		MaxConns:         pick(l.MaxConns, d.MaxConns),
		MaxConnsPerPeer:  pick(l.MaxConnsPerPeer, d.MaxConnsPerPeer),
		HandshakeTimeout: pickD(l.HandshakeTimeout, d.HandshakeTimeout),
		IdleTimeout:      pickD(l.IdleTimeout, d.IdleTimeout),
		MaxStreams:       pick(l.MaxStreams, d.MaxStreams),
	}
}

// connMetrics are the listeners' connection counters.
type connMetrics struct {
	refused *prometheus.CounterVec // listener, reason
	closed  *prometheus.CounterVec // listener, reason
}

// conns returns the connection counters of m's registry, registered on
// first use (a registry may serve several Servers and listeners).
func (m *Metrics) conns() *connMetrics {
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "drover_connections_refused_total",
		Help: "Connections closed as they were accepted, by listener (grpc, fast, extender, metrics) and reason (listener_full: MaxConns open; peer_full: MaxConnsPerPeer open from the peer's address).",
	}, []string{"listener", "reason"})
	closed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "drover_connections_closed_total",
		Help: "Connections the server closed for doing nothing, by listener and reason (handshake: no TLS handshake, preface and settings within HandshakeTimeout; idle: no frame within IdleTimeout; evicted: in its handshake the longest, on the extender and metrics listeners without a complete request the longest, when a new connection found the listener full). Fast, extender and metrics listeners: the gRPC listener's are grpc-go's and not counted.",
	}, []string{"listener", "reason"})
	return &connMetrics{refused: register(m.Registry, refused), closed: register(m.Registry, closed)}
}

// register registers c, or returns the collector already registered
// under its name.
func register(r *prometheus.Registry, c *prometheus.CounterVec) *prometheus.CounterVec {
	if err := r.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			return are.ExistingCollector.(*prometheus.CounterVec)
		}
		panic(fmt.Sprintf("serve: register connection metrics: %v", err))
	}
	return c
}

// LimitListener wraps lis so that at most lim.MaxConns connections, and
// lim.MaxConnsPerPeer from one peer, are open at once (zero fields:
// DefaultHTTPConns's; negative: no limit); a connection over a limit is closed as it is accepted
// and counted in m (when not nil) as drover_connections_refused_total
// with the listener label name. serve/daemon wraps the extender's and
// the metrics' HTTP listeners with it; Server.Serve and ServeFast apply
// the ServerConfig's limits themselves.
func LimitListener(lis net.Listener, name string, lim ConnLimits, m *Metrics) net.Listener {
	lim = lim.withDefaults(DefaultHTTPConns)
	return connlimit.Listen(lis, connlimit.New(connlimit.Limits{Max: lim.MaxConns, PerPeer: lim.MaxConnsPerPeer}), refusedFunc(m, name))
}

// LimitHTTP is LimitListener for hs, an HTTP/1 server about to Serve
// the listener it returns: when the listener is full, a new connection
// takes the place of the one that has been the longest without a
// complete request (its headers or body still arriving, or idle between
// requests), which is closed and counted in m as
// drover_connections_closed_total{reason="evicted"}; a connection whose
// handler is running is never closed. Clients that connect and send
// slowly thus hold a slot only until MaxConns newer connections have
// arrived, from however many addresses. It sets hs.ConnState,
// hs.ConnContext and wraps hs.Handler (connlimit.EvictListener.Guard).
func LimitHTTP(hs *http.Server, lis net.Listener, name string, lim ConnLimits, m *Metrics) net.Listener {
	lim = lim.withDefaults(DefaultHTTPConns)
	var evicted func()
	if m != nil {
		c := m.conns().closed.WithLabelValues(name, "evicted")
		evicted = c.Inc
	}
	el := connlimit.ListenEvicting(lis, connlimit.New(connlimit.Limits{Max: lim.MaxConns, PerPeer: lim.MaxConnsPerPeer}), refusedFunc(m, name), evicted)
	el.Guard(hs)
	return el
}

// refusedFunc counts the refusals of listener name in m (nil: none).
func refusedFunc(m *Metrics, name string) func(connlimit.Reason) {
	if m == nil {
		return nil
	}
	refused := m.conns().refused.MustCurryWith(prometheus.Labels{"listener": name})
	return func(r connlimit.Reason) { refused.WithLabelValues(string(r)).Inc() }
}
