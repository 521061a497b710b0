package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// serveGRPC serves a fresh core's gRPC listener on a loopback port with
// cfg until the test ends, and returns its address.
func serveGRPC(t *testing.T, cfg serve.ServerConfig) string {
	t.Helper()
	core, err := serve.NewCore(serve.WithModelTimeout(testDeadline))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.NewServer(core, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// idleH2 dials addr from the loopback address local and does what an
// idle gRPC client does: the preface, SETTINGS, the ACK of the server's
// SETTINGS and of its PINGs, and no call. It returns the connection and a
// channel that receives what ended it (nil for the server's close) and
// whether the server's SETTINGS arrived first (the connection was
// served, not refused).
func idleH2(t *testing.T, local, addr string) (net.Conn, <-chan idleEnd) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	end := make(chan idleEnd, 1)
	go func() {
		var e idleEnd
		defer func() { end <- e }()
		c.SetDeadline(time.Now().Add(time.Minute)) // a hang guard
		if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
			return
		}
		fr := http2.NewFramer(c, bufio.NewReader(c))
		if fr.WriteSettings() != nil {
			return
		}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					e.err = err
				}
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					e.served = true
					fr.WriteSettingsAck()
				}
			case *http2.PingFrame:
				if !f.IsAck() {
					fr.WritePing(true, f.Data)
				}
			}
		}
	}()
	return c, end
}

// idleEnd is how an idleH2 connection ended.
type idleEnd struct {
	served bool  // the server's SETTINGS arrived
	err    error // the hang guard's timeout; nil when the server closed it
}

// TestGRPCConnsPerPeer is issue 32's gRPC lockout: the port had no
// connection limit (3,000 idle connections held 9,000 goroutines). With
// MaxConnsPerPeer 8, twenty idle connections from 127.0.0.1 get eight
// served and twelve closed as they are accepted (counted in
// drover_connections_refused_total), and a client on another address
// (127.0.0.2) is served while the eight stay open.
func TestGRPCConnsPerPeer(t *testing.T) {
	m := serve.NewMetrics()
	// No handshake or idle timeout: the eight served stay open however
	// slow the machine.
	addr := serveGRPC(t, serve.ServerConfig{Metrics: m, Conns: serve.ConnLimits{MaxConnsPerPeer: 8, IdleTimeout: -1, HandshakeTimeout: -1}})
	ends := make(chan idleEnd, 20)
	for range 20 {
		_, end := idleH2(t, "127.0.0.1", addr)
		go func() { ends <- <-end }()
	}
	// The refused ones end at once, without SETTINGS; the served ones
	// stay open (until the hang guard, a minute on).
	for range 12 {
		if e := <-ends; e.served || e.err != nil {
			t.Fatalf("a connection ended after SETTINGS (%v) or by the hang guard (%v): want eight served that stay open and twelve refused", e.served, e.err)
		}
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if _, err := pb.NewSchedulerClient(conn).Status(ctx, &pb.StatusRequest{}); err != nil {
		t.Fatalf("a client on another address: %v", err)
	}
	want := `drover_connections_refused_total{listener="grpc",reason="peer_full"} 12`
	if got := scrape(t, m); !strings.Contains(got, want) {
		t.Errorf("metrics lack %s:\n%s", want, grepLines(got, "drover_connections"))
	}
}

// TestGRPCIdleConnsClosed: idle connections (no call, no stream) are
// closed after IdleTimeout (grpc-go's MaxConnectionIdle), and the
// server's goroutines for them end: before, 3,000 idle connections held
// 9,000 goroutines until shutdown.
func TestGRPCIdleConnsClosed(t *testing.T) {
	leakcheck.Check(t)
	addr := serveGRPC(t, serve.ServerConfig{Conns: serve.ConnLimits{IdleTimeout: 50 * time.Millisecond, MaxConnsPerPeer: -1}})
	before := runtime.NumGoroutine()
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		// Spread over addresses, as many clients would be.
		_, end := idleH2(t, fmt.Sprintf("127.0.0.%d", 1+i%10), addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e := <-end; e.err != nil {
				t.Errorf("idle connection ended by %v; want it closed by the server", e.err)
			}
		}()
	}
	wg.Wait()
	leakcheck.Wait(t, before)
}

// TestGRPCHandshakeTimeout: a connection that sends nothing is closed
// after HandshakeTimeout (grpc-go's ConnectionTimeout, 120 s by default
// before).
func TestGRPCHandshakeTimeout(t *testing.T) {
	addr := serveGRPC(t, serve.ServerConfig{Conns: serve.ConnLimits{HandshakeTimeout: 50 * time.Millisecond}})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
	_, err = io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a silent connection is still open after a minute")
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			b.WriteString(l)
		}
	}
	return b.String()
}
