package daemon_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/daemon/daemontest"
)

// TestRunHTTPListenersBounded: the metrics and extender listeners take
// at most HTTPConns.MaxConnsPerPeer connections from one address (before,
// any count: a slowloris held a goroutine per connection). With 4, four
// idle connections from 127.0.0.1 to each hold their slots, a fifth is
// closed as it is accepted, /healthz and the extender answer a client on
// 127.0.0.2, and the refusals are counted per listener.
func TestRunHTTPListenersBounded(t *testing.T) {
	c := testConfig()
	c.MetricsAddr, c.ExtenderAddr = "127.0.0.1:0", "127.0.0.1:0"
	c.HTTPConns = serve.ConnLimits{MaxConnsPerPeer: 4}
	addrs, _, stop := daemontest.Start(t, c)
	defer stop()
	dial := func(local, addr string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	var silent []net.Conn
	defer func() {
		// Closed before stop: Shutdown waits 5 s for a new connection
		// that sends nothing before it counts as idle.
		for _, conn := range silent {
			conn.Close()
		}
	}()
	for _, addr := range []string{addrs.Metrics, addrs.Extender} {
		for range 4 {
			// One request, its answer never read: the connection then
			// waits in keep-alive for IdleTimeout (2 minutes), not
			// ReadHeaderTimeout (5 s), whatever the machine's load.
			conn := dial("127.0.0.1", addr)
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			silent = append(silent, conn)
		}
		fifth := dial("127.0.0.1", addr)
		fifth.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
		if _, err := io.Copy(io.Discard, fifth); err != nil && isTimeout(err) {
			t.Fatalf("%s: a fifth connection from one address is still open after a minute", addr)
		}
	}
	other := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		return d.DialContext(ctx, network, addr)
	}}}
	defer other.CloseIdleConnections()
	resp, err := other.Get("http://" + addrs.Metrics + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz from 127.0.0.2: %s", resp.Status)
	}
	resp, err = other.Post("http://"+addrs.Extender+"/filter", "application/json", strings.NewReader(`{"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/filter from 127.0.0.2: %s", resp.Status)
	}
	resp, err = other.Get("http://" + addrs.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, l := range []string{"metrics", "extender"} {
		want := fmt.Sprintf(`drover_connections_refused_total{listener=%q,reason="peer_full"} 1`, l)
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// isTimeout reports whether err is a deadline's.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestRunMaxConnsPerPeer: Config.MaxConnsPerPeer (-max-conns-per-peer)
// sets every listener's per-peer limit: with 1, a second connection from
// one address to the gRPC and the fast listener is closed as it is
// accepted; with -1 none is.
func TestRunMaxConnsPerPeer(t *testing.T) {
	for _, tt := range []struct {
		perPeer     int
		wantRefused bool
	}{{1, true}, {-1, false}} {
		t.Run(fmt.Sprint(tt.perPeer), func(t *testing.T) {
			c := testConfig()
			c.PlaceAddr, c.MaxConnsPerPeer = "127.0.0.1:0", tt.perPeer
			addrs, _, stop := daemontest.Start(t, c)
			defer stop()
			for _, addr := range []string{addrs.GRPC, addrs.Fast} {
				first, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				second, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				// The server speaks first on both listeners once it
				// has the preface (gRPC: at once): the second reads
				// the server's SETTINGS when served, EOF when refused.
				fmt.Fprint(second, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
				second.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard
				_, err = second.Read(make([]byte, 1))
				if refused := err != nil && !isTimeout(err); refused != tt.wantRefused {
					t.Errorf("%s, per peer %d: second connection refused %v (%v), want %v", addr, tt.perPeer, refused, err, tt.wantRefused)
				}
				first.Close()
				second.Close()
			}
		})
	}
}

// TestRunHTTPListenersEvictSlowClients: with HTTPConns.MaxConns 4, four
// connections from four loopback addresses sending slowly (headers to
// the metrics listener, a body to the extender) fill each listener, and
// a well-formed request from a fifth address is still answered: it takes
// the place of the connection that has waited longest for a complete
// request, counted as drover_connections_closed_total{reason="evicted"}.
// Before, the fifth connection was refused (listener_full) until the
// slow ones timed out.
func TestRunHTTPListenersEvictSlowClients(t *testing.T) {
	c := testConfig()
	c.MetricsAddr, c.ExtenderAddr = "127.0.0.1:0", "127.0.0.1:0"
	c.HTTPConns = serve.ConnLimits{MaxConns: 4}
	addrs, _, stop := daemontest.Start(t, c)
	defer stop()
	var slow []net.Conn
	defer func() {
		// Closed before stop, as in TestRunHTTPListenersBounded.
		for _, conn := range slow {
			conn.Close()
		}
	}()
	dial := func(local, addr string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	for i := range 4 {
		local := fmt.Sprintf("127.0.0.%d", 2+i)
		m := dial(local, addrs.Metrics)
		fmt.Fprint(m, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // headers never end
		e := dial(local, addrs.Extender)
		fmt.Fprint(e, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{") // nor the body
		slow = append(slow, m, e)
	}
	// The listeners accept in the order the connections were made: the
	// slow ones fill them before these arrive.
	good := dial("127.0.0.10", addrs.Extender)
	body := `{"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"]}`
	fmt.Fprintf(good, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if resp := readResponse(t, good, "extender /filter"); resp.StatusCode != http.StatusOK {
		t.Errorf("extender /filter from a fifth address: %s", resp.Status)
	}
	scrape := dial("127.0.0.10", addrs.Metrics)
	fmt.Fprint(scrape, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	resp := readResponse(t, scrape, "/metrics")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics from a fifth address: %s", resp.Status)
	}
	for _, l := range []string{"metrics", "extender"} {
		want := fmt.Sprintf(`drover_connections_closed_total{listener=%q,reason="evicted"} 1`, l)
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
		if bad := fmt.Sprintf(`drover_connections_refused_total{listener=%q`, l); strings.Contains(string(b), bad) {
			t.Errorf("/metrics counts a refusal: %s", bad)
		}
	}
}

// readResponse reads the answer to the request written on conn.
func readResponse(t *testing.T, conn net.Conn, what string) *http.Response {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s: %v, want an answer", what, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
