package connlimit_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/connlimit"
)

// evictServer is an http.Server on a ListenEvicting listener of Max n:
// /block's handler reads its body and waits for release, /echo's reads its body, any other
// path answers "ok".
type evictServer struct {
	t        *testing.T
	addr     string
	lim      *connlimit.Limiter
	evicted  atomic.Int64
	mu       sync.Mutex
	refused  []connlimit.Reason
	entered  chan string // a /block or /echo handler's path, on entry
	idle     chan string // the client's address of a connection gone idle
	release  chan struct{}
	released sync.Once
}

func startEvictServer(t *testing.T, n int) *evictServer {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &evictServer{t: t, addr: inner.Addr().String(), lim: connlimit.New(connlimit.Limits{Max: n}),
		entered: make(chan string, 16), idle: make(chan string, 16), release: make(chan struct{})}
	lis := connlimit.ListenEvicting(inner, s.lim, func(r connlimit.Reason) {
		s.mu.Lock()
		s.refused = append(s.refused, r)
		s.mu.Unlock()
	}, func() { s.evicted.Add(1) })
	mux := http.NewServeMux()
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		s.entered <- r.URL.Path
		<-s.release
		fmt.Fprint(w, "done")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		s.entered <- r.URL.Path
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	hs := &http.Server{Handler: mux, ConnState: func(c net.Conn, cs http.ConnState) {
		if cs == http.StateIdle {
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			s.idle <- host
		}
	}}
	lis.Guard(hs)
	go hs.Serve(lis)
	t.Cleanup(func() {
		s.released.Do(func() { close(s.release) })
		hs.Close()
	})
	return s
}

// dial connects from the loopback address local.
func (s *evictServer) dial(local string) net.Conn {
	s.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// waitOpen waits until n connections hold a slot (the server has
// accepted them, in order).
func (s *evictServer) waitOpen(n int) {
	for s.lim.Open() != n {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// waitIdle waits until the connection from local has gone idle after
// its answer (Guard runs ConnState's hook after marking it).
func (s *evictServer) waitIdle(local string) {
	for host := range s.idle {
		if host == local {
			return
		}
	}
}

// get sends a well-formed request on c and returns the answer's body.
func get(t *testing.T, c net.Conn, path string) string {
	t.Helper()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	return string(b)
}

// closedByServer reports whether c was closed by the server: a read
// ends in EOF or a reset, not the hang guard's timeout.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
	_, err := io.Copy(io.Discard, c)
	return !isTimeout(err)
}

// TestListenEvictingMakesRoom: on a full listener of 4 from distinct
// loopback addresses (one connection in a handler, two sending headers
// slowly, one sending its body slowly), each well-formed request from a
// new address is answered, and takes the place of the connection that
// has waited longest for a complete request: the slow headers, the slow
// body, then a client idle since its answer. The connection in its
// handler is never evicted: it is answered when released. With a plain
// Listen the first request would be refused (listener_full).
func TestListenEvictingMakesRoom(t *testing.T) {
	s := startEvictServer(t, 4)
	busy := s.dial("127.0.0.2")
	fmt.Fprint(busy, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	<-s.entered
	slow1 := s.dial("127.0.0.3")
	fmt.Fprint(slow1, "GET / HTTP/1.1\r\nHost: x\r\n")
	s.waitOpen(2)
	body := s.dial("127.0.0.4")
	fmt.Fprint(body, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab")
	<-s.entered
	slow2 := s.dial("127.0.0.5")
	fmt.Fprint(slow2, "GET / HTTP/1.1\r\n")
	s.waitOpen(4)

	good1 := s.dial("127.0.0.10")
	if got := get(t, good1, "/"); got != "ok" {
		t.Errorf("first new client: %q, want ok", got)
	}
	s.waitIdle("127.0.0.10")
	if !closedByServer(slow1) {
		t.Error("the oldest slow-header connection is still open")
	}
	good2 := s.dial("127.0.0.11")
	get(t, good2, "/")
	s.waitIdle("127.0.0.11")
	if !closedByServer(body) {
		t.Error("the slow-body connection is still open")
	}
	good3 := s.dial("127.0.0.12")
	get(t, good3, "/")
	s.waitIdle("127.0.0.12")
	if !closedByServer(slow2) {
		t.Error("the second slow-header connection is still open")
	}
	good4 := s.dial("127.0.0.13")
	get(t, good4, "/")
	if !closedByServer(good1) {
		t.Error("the client idle the longest is still open")
	}
	if got := s.evicted.Load(); got != 4 {
		t.Errorf("evicted %d, want 4", got)
	}
	s.released.Do(func() { close(s.release) })
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatalf("the connection in its handler: %v, want its answer", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "done" {
		t.Errorf("the connection in its handler: %q, want done", b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refused) != 0 {
		t.Errorf("refused %v, want none", s.refused)
	}
}

// TestListenEvictingRefusesWhenAllBusy: when every connection is in a
// handler (its request read), a new one is refused as listener_full and
// nothing is evicted; once the handler is done, the idle connection
// makes room again.
func TestListenEvictingRefusesWhenAllBusy(t *testing.T) {
	s := startEvictServer(t, 1)
	busy := s.dial("127.0.0.2")
	fmt.Fprint(busy, "POST /block HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab")
	<-s.entered
	if !closedByServer(s.dial("127.0.0.3")) {
		t.Fatal("a connection beyond a full, busy listener is open")
	}
	s.released.Do(func() { close(s.release) })
	if _, err := http.ReadResponse(bufio.NewReader(busy), nil); err != nil {
		t.Fatalf("the busy connection: %v, want its answer", err)
	}
	s.waitIdle("127.0.0.2")
	if got := get(t, s.dial("127.0.0.4"), "/"); got != "ok" {
		t.Errorf("after the handler: %q, want ok", got)
	}
	if got := s.evicted.Load(); got != 1 {
		t.Errorf("evicted %d, want 1 (the idle connection, after its answer)", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if diff := cmp.Diff([]connlimit.Reason{connlimit.Full}, s.refused); diff != "" {
		t.Errorf("refusals (-want,+got):\n%s", diff)
	}
}
