package fast

import (
	"bufio"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/http2"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/drover-sched/drover/internal/leakcheck"
)

// testMetrics returns a complete Metrics, unregistered.
func testMetrics() *Metrics {
	return &Metrics{
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "inflight"}),
		Latency:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "latency"}, []string{"method"}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "requests"}, []string{"method", "code"}),
		Refused:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "refused"}, []string{"reason"}),
		Closed:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "closed"}, []string{"reason"}),
	}
}

// counterValue returns the count of v's series whose one label is
// value (gathered through a registry of its own, as a scrape would).
func counterValue(t *testing.T, v *prometheus.CounterVec, value string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(v)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if l := m.GetLabel(); len(l) == 1 && l[0].GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// serveTCP serves srv on a loopback port until the test ends.
func serveTCP(t *testing.T, srv *Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		<-shutdown(srv, time.Minute)
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// dialFrom dials addr from the loopback address local (127.0.0.1,
// 127.0.0.2, ...: another peer of the same machine).
func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestFastPrefaceOnlyConnsDoNotLockOut is issue 32's fast-listener
// lockout: 1,100 connections from one address that send only the HTTP/2
// preface filled the listener's 1,024 slots for its 5-minute idle
// timeout, and every other client's connection was closed as it was
// accepted. With the default limits, one peer gets MaxConnsPerPeer (64)
// of them, the rest are refused and counted, and a client on another
// address (127.0.0.2) is served while they are all open. (The handshake
// timeout, which closes them after 5 s, is TestFastHandshakeTimeout's:
// here it is an hour, so that a loaded machine cannot free a slot while
// the 1,100 connect.)
func TestFastPrefaceOnlyConnsDoNotLockOut(t *testing.T) {
	const attackers = 1100
	m := testMetrics()
	srv := NewServer(testBackend{}, Config{Metrics: m, HandshakeTimeout: time.Hour})
	addr := serveTCP(t, srv)
	conns := make([]net.Conn, attackers)
	for i := range conns {
		conns[i] = dialFrom(t, "127.0.0.1", addr)
		if _, err := io.WriteString(conns[i], http2.ClientPreface); err != nil && !closedErr(err) {
			t.Fatal(err)
		}
	}
	// Each connection is either served (the server's SETTINGS arrives)
	// or refused (closed: EOF or a reset). A hang guard only: the
	// server answers at once either way.
	served := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		f, err := http2.NewFramer(nil, bufio.NewReader(c)).ReadFrame()
		switch {
		case err == nil:
			if _, ok := f.(*http2.SettingsFrame); !ok {
				t.Fatalf("first frame %v, want SETTINGS", f)
			}
			served++
		case isTimeout(err):
			t.Fatalf("no SETTINGS and no close within a minute")
		}
	}
	if served != defaultMaxConnsPerPeer {
		t.Errorf("%d of %d preface-only connections from one address served, want MaxConnsPerPeer %d", served, attackers, defaultMaxConnsPerPeer)
	}
	if got, want := counterValue(t, m.Refused, "peer_full"), float64(attackers-defaultMaxConnsPerPeer); got != want {
		t.Errorf("refused peer_full %v, want %v", got, want)
	}
	p := newH2Peer(t, dialFrom(t, "127.0.0.2", addr))
	p.handshake()
	p.call(1, healthpb.Health_Check_FullMethodName, healthMessage)
	wantOK(t, p.await(1), &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// TestFastHandshakeTimeout: connections that send nothing, only the
// preface, or the preface and SETTINGS without acknowledging the
// server's are closed after HandshakeTimeout (counted as handshake), not
// after the idle timeout: before, a preface-only connection held its
// slot for 5 minutes.
func TestFastHandshakeTimeout(t *testing.T) {
	leakcheck.Check(t)
	m := testMetrics()
	srv := NewServer(testBackend{}, Config{Metrics: m, HandshakeTimeout: 50 * time.Millisecond, IdleTimeout: time.Hour})
	// The server accepts only once every client has written what it
	// sends, so that what each sent is read at once whatever the
	// machine's load, and the handshake's deadline finds each where the
	// client left it.
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	served := make(chan error, 1)
	go func() { served <- srv.Serve(gatedListener{inner, gate}) }()
	t.Cleanup(func() {
		<-shutdown(srv, time.Minute)
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Cleanup(open) // before the shutdown, when the test ends early
	addr := inner.Addr().String()
	steps := []struct {
		name  string
		write func(c net.Conn) error
	}{
		{"nothing", func(net.Conn) error { return nil }},
		{"preface", func(c net.Conn) error { _, err := io.WriteString(c, http2.ClientPreface); return err }},
		{"preface and SETTINGS, no ACK", func(c net.Conn) error {
			if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
				return err
			}
			return http2.NewFramer(c, nil).WriteSettings()
		}},
	}
	var wg sync.WaitGroup
	var conns []net.Conn
	for _, s := range steps {
		c := dialFrom(t, "127.0.0.1", addr)
		if err := s.write(c); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	open()
	for i, s := range steps {
		c := conns[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
			_, err := io.Copy(io.Discard, c)
			if isTimeout(err) {
				t.Errorf("%s: the connection is still open after a minute", s.name)
			}
		}()
	}
	wg.Wait()
	if got := counterValue(t, m.Closed, "handshake"); got != 3 {
		t.Errorf("closed handshake %v, want 3", got)
	}
}

// gatedListener accepts once gate is closed.
type gatedListener struct {
	net.Listener
	gate <-chan struct{}
}

func (l gatedListener) Accept() (net.Conn, error) {
	<-l.gate
	return l.Listener.Accept()
}

// deadlineConn records its last read deadline.
type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	read time.Time
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

// TestFastSettledConnGetsIdleDeadline: once the SETTINGS exchange is
// complete the handshake's deadline is replaced by the idle one, so a
// short HandshakeTimeout never closes an established connection.
func TestFastSettledConnGetsIdleDeadline(t *testing.T) {
	srv := newFrameServer(t, Config{HandshakeTimeout: time.Hour, IdleTimeout: 10 * time.Hour})
	var dc *deadlineConn
	p, _ := newPipePeer(t, srv, func(c *serverConn) {
		dc = &deadlineConn{Conn: c.nc}
		c.nc = dc
	})
	p.handshake()
	p.sync() // the ACK sent by handshake is handled
	dc.mu.Lock()
	left := time.Until(dc.read)
	dc.mu.Unlock()
	if left < 2*time.Hour {
		t.Errorf("read deadline %v away after the SETTINGS exchange, want the idle timeout's (10h), not the handshake's (1h)", left)
	}
}

// TestFastFullListenerEvictsHandshaking: a full listener makes room for
// a new connection by closing the one that has been in its handshake the
// longest (counted as closed "evicted"), so connections that send only
// the preface from many addresses cannot keep a client out for the
// handshake timeout; established connections are never evicted, and
// with every slot held by one the next connection is refused.
func TestFastFullListenerEvictsHandshaking(t *testing.T) {
	const max = 8
	m := testMetrics()
	srv := NewServer(testBackend{}, Config{Metrics: m, MaxConns: max, MaxConnsPerPeer: -1, HandshakeTimeout: time.Hour})
	addr := serveTCP(t, srv)
	var stalled []net.Conn
	for range max {
		c := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(c, http2.ClientPreface)
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
		if _, err := http2.NewFramer(nil, c).ReadFrame(); err != nil {
			t.Fatalf("a connection within MaxConns: %v, want the server's SETTINGS", err)
		}
		stalled = append(stalled, c)
	}
	p := newH2Peer(t, dialFrom(t, "127.0.0.2", addr))
	p.handshake()
	p.call(1, healthpb.Health_Check_FullMethodName, healthMessage)
	wantOK(t, p.await(1), &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
	// The oldest stalled connection made room: the server closed it.
	if _, err := io.Copy(io.Discard, stalled[0]); isTimeout(err) {
		t.Errorf("the oldest connection in its handshake is still open")
	}
	if got := counterValue(t, m.Closed, "evicted"); got != 1 {
		t.Errorf("closed evicted %v, want 1", got)
	}
	// Now fill the listener with established connections: the stalled
	// ones make room for them, then nothing does.
	for _, c := range stalled {
		c.Close()
	}
	peers := []*h2peer{p}
	for len(peers) < max {
		q := newH2Peer(t, dialFrom(t, "127.0.0.1", addr))
		q.handshake()
		q.sync() // the SETTINGS ACK is handled: established
		peers = append(peers, q)
	}
	extra := dialFrom(t, "127.0.0.3", addr)
	extra.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	if _, err := io.Copy(io.Discard, extra); isTimeout(err) {
		t.Fatalf("a connection beyond MaxConns established ones is still open")
	}
	if got := counterValue(t, m.Refused, "listener_full"); got != 1 {
		t.Errorf("refused listener_full %v, want 1", got)
	}
	for _, q := range peers {
		q.call(3, healthpb.Health_Check_FullMethodName, healthMessage)
		wantOK(t, q.await(3), &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
	}
}
