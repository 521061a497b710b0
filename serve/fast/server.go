package fast

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/internal/connlimit"
	pb "github.com/drover-sched/drover/serve/proto"
)

const (
	// maxStreams is the most streams a connection may have open.
	maxStreams = 100
	// defaultMaxConns is the most connections a listener serves at
	// once (Config.MaxConns); more are closed as they are accepted.
	defaultMaxConns = 1024
	// defaultMaxConnsPerPeer is the most from one peer
	// (Config.MaxConnsPerPeer).
	defaultMaxConnsPerPeer = 64
	// maxHeaderList is the largest header list accepted, in bytes.
	maxHeaderList = 64 << 10
	// maxFrame is the largest frame the server reads (HTTP/2's
	// default, never raised).
	maxFrame = 16 << 10
	// calmLimit is how far a connection's count of frames that do no
	// work may run ahead of its answered calls.
	calmLimit = 1000
	// callCredit is what an answered call pays back.
	callCredit = 4
	// defaultHandshakeTimeout bounds the TLS handshake, the preface and
	// the SETTINGS exchange (Config.HandshakeTimeout).
	defaultHandshakeTimeout = 5 * time.Second
	// defaultIdleTimeout is how long a connection may go without a frame
	// before it is closed (GOAWAY NO_ERROR): silent connections must not
	// hold the MaxConns slots. gRPC clients reconnect on their next
	// call.
	defaultIdleTimeout = 5 * time.Minute
	// writeTimeout is how long a write to a client that does not read
	// may block before the connection is closed.
	writeTimeout = 30 * time.Second
	// bufSize is the size of a connection's read and write buffers.
	bufSize = 16 << 10
	// resetsKept is how many reset streams a connection remembers
	// (to ignore the trailers a client sent before it saw the reset).
	resetsKept = 16
	// maxMessageText is the longest grpc-message sent, in bytes.
	maxMessageText = 4 << 10
	// defaultWindow is HTTP/2's initial window.
	defaultWindow = 65535
	// maxWindow is the largest window HTTP/2 allows.
	maxWindow = 1<<31 - 1
	// staticStreamWindow is a stream's receive window and minConnWindow
	// the least connection receive window, as the gRPC listener's static
	// ones (serve.NewServer): a stream may carry a request of up to 1 MiB
	// without waiting for window, and a connection 4 MiB in flight.
	staticStreamWindow = 1 << 20
	minConnWindow      = 4 << 20
)

// The fast listener's methods.
const (
	methodUnknown = iota
	methodPlace
	methodReport
	methodStatus
	methodRoute
	methodRouteMM
	methodScale
	methodHealth
	methodElsewhere // served by the gRPC server only
)

// knownMethods are the paths the fast listener knows.
var knownMethods = map[string]int{
	pb.Scheduler_Place_FullMethodName:                                methodPlace,
	pb.Scheduler_Report_FullMethodName:                               methodReport,
	pb.Scheduler_Status_FullMethodName:                               methodStatus,
	pb.Scheduler_Route_FullMethodName:                                methodRoute,
	pb.Scheduler_RouteMM_FullMethodName:                              methodRouteMM,
	pb.Scheduler_Scale_FullMethodName:                                methodScale,
	healthpb.Health_Check_FullMethodName:                             methodHealth,
	healthpb.Health_Watch_FullMethodName:                             methodElsewhere,
	healthpb.Health_List_FullMethodName:                              methodElsewhere,
	pb.Telemetry_Stream_FullMethodName:                               methodElsewhere,
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      methodElsewhere,
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": methodElsewhere,
}

// Backend answers the fast listener's calls: the Scheduler service's
// unary methods and the health check, as the gRPC listener answers them.
// Its errors are gRPC status errors (status.Error); any other error
// answers Unknown.
type Backend interface {
	Place(context.Context, *pb.PlaceRequest) (*pb.PlaceResponse, error)
	Report(context.Context, *pb.ReportRequest) (*pb.ReportResponse, error)
	Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error)
	Route(context.Context, *pb.RouteRequest) (*pb.RouteResponse, error)
	RouteMM(context.Context, *pb.RouteMMRequest) (*pb.RouteMMResponse, error)
	Scale(context.Context, *pb.ScaleRequest) (*pb.ScaleResponse, error)
	Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error)
}

// Metrics are the request metrics the fast listener records, with its
// listener label already applied (serve.Metrics curries its vectors).
type Metrics struct {
	// InFlight counts the Place calls in progress.
	InFlight prometheus.Gauge
	// Latency observes each call's seconds inside the server, by method.
	Latency prometheus.ObserverVec
	// Requests counts the calls, by method and status code.
	Requests *prometheus.CounterVec
	// Refused, when set, counts the connections closed as they were
	// accepted, by reason (connlimit's: listener_full, peer_full).
	Refused *prometheus.CounterVec
	// Closed, when set, counts the connections closed for doing
	// nothing, by reason: handshake (no TLS handshake, preface and
	// SETTINGS exchange within HandshakeTimeout), idle (no frame within
	// IdleTimeout), evicted (in its handshake the longest when a new
	// connection found the listener full).
	Closed *prometheus.CounterVec
}

// Config is what the fast listener shares with the gRPC listener. The
// zero value serves plaintext without a token.
type Config struct {
	// TLS, when set, serves TLS with ALPN h2.
	TLS *tls.Config
	// Token, when set, is the bearer token every call but the health
	// check must carry.
	Token string
	// MaxRecvMsgSize is the largest request in bytes (0: 4 MiB).
	MaxRecvMsgSize int
	// Metrics, when set, receives the request metrics.
	Metrics *Metrics
	// Now times the calls for the metrics (default time.Now).
	Now func() time.Time
	// IdleTimeout is how long an established connection may go without
	// a frame before it is closed with GOAWAY (0: 5 minutes; negative:
	// never).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a new connection's TLS handshake, client
	// preface and SETTINGS exchange (the client's SETTINGS, and its ACK of
	// the server's), or its first call answered, whichever completes
	// first; a connection still short of it then is closed (0: 5 s;
	// negative: never).
	HandshakeTimeout time.Duration
	// MaxConns is the most connections one listener serves at once
	// (0: 1024; negative: no limit). A connection that finds the
	// listener full takes the place of the one that has been in its
	// handshake the longest, or, when every one has completed it, is
	// closed as it is accepted.
	MaxConns int
	// MaxConnsPerPeer is the most connections one listener serves at
	// once from one peer, an IPv4 address or an IPv6 /64 (0: 64;
	// negative: no limit).
	MaxConnsPerPeer int
}

// ErrClosed is Serve's error when it is called after Drain.
var ErrClosed = errors.New("fast: server closed")

// Server is the fast listener's server: Serve runs one listener, and a
// Server may serve several. Drain, Wait and CloseAll shut it down.
type Server struct {
	b   Backend
	cfg Config

	// Place's metrics, looked up once.
	placeLatency prometheus.Observer
	placeOK      prometheus.Counter

	mu       sync.Mutex
	lis      map[net.Listener]struct{}
	conns    map[*serverConn]struct{}
	draining bool
	wg       sync.WaitGroup
}

// NewServer returns a fast listener's server of b.
func NewServer(b Backend, cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = defaultHandshakeTimeout
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.MaxConnsPerPeer == 0 {
		cfg.MaxConnsPerPeer = defaultMaxConnsPerPeer
	}
	if cfg.MaxRecvMsgSize == 0 {
		cfg.MaxRecvMsgSize = 4 << 20
	}
	s := &Server{b: b, cfg: cfg}
	if m := cfg.Metrics; m != nil {
		s.placeLatency = m.Latency.WithLabelValues(pb.Scheduler_Place_FullMethodName)
		s.placeOK = m.Requests.WithLabelValues(pb.Scheduler_Place_FullMethodName, codes.OK.String())
	}
	return s
}

// Serve serves the hot unary calls (Place, Report, Status, Route, RouteMM,
// Scale and the health check) on lis until Drain; see the package doc for what it
// serves and how. It uses the configuration's TLS, with ALPN h2, and
// its connection limits, counted for lis alone. It returns nil after
// Drain, and ErrClosed when called after it.
func (s *Server) Serve(lis net.Listener) error {
	f := s
	lim := connlimit.New(connlimit.Limits{Max: s.cfg.MaxConns, PerPeer: s.cfg.MaxConnsPerPeer})
	if s.cfg.TLS != nil {
		cfg := s.cfg.TLS.Clone()
		cfg.NextProtos = []string{http2.NextProtoTLS}
		lis = tls.NewListener(lis, cfg)
	}
	f.mu.Lock()
	if f.draining {
		f.mu.Unlock()
		lis.Close()
		return ErrClosed
	}
	if f.lis == nil {
		f.lis, f.conns = map[net.Listener]struct{}{}, map[*serverConn]struct{}{}
	}
	f.lis[lis] = struct{}{}
	f.mu.Unlock()
	var delay time.Duration
	for {
		nc, err := lis.Accept()
		if err != nil {
			f.mu.Lock()
			draining := f.draining
			f.mu.Unlock()
			if draining {
				return nil
			}
			if isTimeout(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		addr := nc.RemoteAddr()
		why, ok := lim.Acquire(addr)
		if !ok && why == connlimit.Full && f.evict(lim) {
			// The oldest connection still in its handshake made room.
			why, ok = lim.AcquireBeyondMax(addr)
		}
		if !ok {
			// Counted before the close, so that a peer that sees the
			// close also sees the count (the metric never lags what a
			// client observed).
			if m := s.cfg.Metrics; m != nil && m.Refused != nil {
				m.Refused.WithLabelValues(string(why)).Inc()
			}
			nc.Close()
			continue
		}
		c := s.newServerConn(nc)
		c.lim, c.acceptedAt = lim, time.Now()
		c.handshaking.Store(true)
		f.mu.Lock()
		if f.draining {
			f.mu.Unlock()
			nc.Close()
			lim.Release(addr)
			continue
		}
		f.conns[c] = struct{}{}
		f.wg.Add(1)
		f.mu.Unlock()
		go func() {
			defer f.wg.Done()
			c.serve()
			nc.Close()
			lim.Release(addr)
			f.mu.Lock()
			delete(f.conns, c)
			f.mu.Unlock()
		}()
	}
}

// evict closes the connection of lim's listener that has been in its
// handshake (TLS, preface, SETTINGS exchange) the longest, to make room
// for a new one when the listener is full, and reports whether there
// was one. Connections that do nothing thus hold a slot only until
// MaxConns newer ones have arrived, and a client that completes its
// handshake in a round trip gets in unless that many arrive within it,
// even from many addresses (the per-peer limit stops one address).
func (f *Server) evict(lim *connlimit.Limiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	var victim *serverConn
	for c := range f.conns {
		if c.lim == lim && c.handshaking.Load() && !c.evicted && (victim == nil || c.acceptedAt.Before(victim.acceptedAt)) {
			victim = c
		}
	}
	if victim == nil {
		return false
	}
	victim.evicted = true
	victim.nc.Close()
	f.closed("evicted")
	return true
}

// Drain stops the listeners and sends every connection GOAWAY: the calls
// already begun are answered by deadline, new ones refused.
func (f *Server) Drain(deadline time.Time) {
	f.mu.Lock()
	f.draining = true
	for lis := range f.lis {
		lis.Close()
	}
	conns := make([]*serverConn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.goAway(deadline)
	}
}

// Shutdown stops the server on its own (serve.Server.Shutdown drains it
// with the gRPC listener instead): Drain with ctx's deadline, then Wait,
// or CloseAll when ctx ends first. It returns nil once every connection
// has ended (a connection whose calls are unfinished at the deadline
// ends itself then), or ctx's error when Shutdown closed them.
func (f *Server) Shutdown(ctx context.Context) error {
	deadline, _ := ctx.Deadline()
	f.Drain(deadline)
	done := make(chan struct{})
	go func() {
		f.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		f.CloseAll()
		<-done
		return ctx.Err()
	}
}

// Wait waits for every connection to end.
func (f *Server) Wait() { f.wg.Wait() }

// CloseAll closes every connection at once.
func (f *Server) CloseAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		c.nc.Close()
	}
}

// callStream is a stream of a fast connection: a request being read, or
// an answer waiting for flow-control window.
type callStream struct {
	id      uint32
	method  int
	path    string
	ctx     context.Context
	cancel  context.CancelFunc
	body    []byte
	recvWin int64 // window the client has left on the stream
	unacked int64 // bytes read and not yet given back
	ended   bool  // the client ended its side

	// An answer waiting for window.
	sending bool
	sendWin int64
	pending []byte // DATA payload not yet sent
	trailer []byte // the trailer block, sent after pending
	held    int64  // bytes of pending and trailer counted in buffered
}

// serverConn is one connection of the fast listener. Its fields are its
// goroutine's, but for wmu's and the atomics.
type serverConn struct {
	s  *Server
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	fr *http2.Framer

	// wmu serialises writes: the connection's goroutine and Shutdown's
	// GOAWAY (which only tries it: a goroutine blocked writing holds it).
	wmu      sync.Mutex
	henc     *hpack.Encoder
	hbuf     bytes.Buffer
	goneAway bool   // GOAWAY sent (under wmu)
	lastID   uint32 // the last stream GOAWAY let finish (under wmu)

	maxID    atomic.Uint32 // the highest stream id seen
	open     atomic.Int32  // streams open
	draining atomic.Bool   // Shutdown began: GOAWAY, sent or owed
	drainBy  atomic.Int64  // Shutdown's deadline, Unix nanoseconds

	idleTimeout time.Duration // Config.IdleTimeout (tests shorten it)
	pushedAt    time.Time     // when the deadlines were last pushed

	// The handshake: the client's SETTINGS seen and the server's
	// acknowledged, or a call answered, make the connection settled;
	// until then the handshake's deadline holds, not the idle one.
	gotSettings, gotAck, settled bool
	// handshaking is !settled for Serve's evict, which may close the
	// connection (evicted, under the Server's mu) to make room on its
	// listener (lim) while it is.
	handshaking atomic.Bool
	evicted     bool
	lim         *connlimit.Limiter
	acceptedAt  time.Time

	streams    map[uint32]*callStream
	recvWin    int64              // connection window the client has left
	unacked    int64              // connection bytes read and not yet given back
	buffered   int64              // request bytes buffered in open streams
	sendWin    int64              // connection window the server has left
	peerWin    int64              // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame  int                // the client's SETTINGS_MAX_FRAME_SIZE
	idle       int                // frames that did no work, less the calls' credit
	clientGone bool               // the client sent GOAWAY
	resets     [resetsKept]uint32 // the streams last reset
	nresets    int

	maxRecv int // the largest request message
	budget  int64
	in      PlaceIn
	out     []byte
	// bodies are request buffers for reuse: a 64-node Place request's
	// body, grown by append, was two thirds of the connection's garbage.
	bodies [][]byte
}

// Request buffers kept for reuse: at most keepBodies, of at most
// keepBodyCap bytes each.
const (
	keepBodies  = 4
	keepBodyCap = 64 << 10
)

// dropBody gives st's body back for reuse.
func (c *serverConn) dropBody(st *callStream) {
	c.buffered -= int64(len(st.body))
	if b := st.body; cap(b) > 0 && cap(b) <= keepBodyCap && len(c.bodies) < keepBodies {
		c.bodies = append(c.bodies, b[:0])
	}
	st.body = nil
}

// connWindow is the connection's receive window: room for a request
// of the largest size, or 4 MiB.
func connWindow(maxRecv int) int64 {
	return max(int64(minConnWindow), int64(maxRecv)+5+maxFrame)
}

// newServerConn returns the state of a connection accepted by ServeFast,
// with the server's limits; serve runs it.
func (s *Server) newServerConn(nc net.Conn) *serverConn {
	maxRecv := s.cfg.MaxRecvMsgSize
	c := &serverConn{
		s: s, nc: nc, streams: map[uint32]*callStream{}, idleTimeout: s.cfg.IdleTimeout,
		sendWin: defaultWindow, peerWin: defaultWindow, peerFrame: maxFrame,
		maxRecv: maxRecv,
	}
	c.recvWin = connWindow(maxRecv)
	// A connection may buffer several requests of the largest size, or
	// 16 MiB of smaller ones, in streams not yet ended.
	c.budget = max(16<<20, 2*c.recvWin)
	return c
}

// serve runs the connection until it ends.
func (c *serverConn) serve() {
	defer c.cancelAll()
	c.wmu.Lock()
	if c.draining.Load() {
		c.wmu.Unlock()
		return // Shutdown came first
	}
	hs := c.s.cfg.HandshakeTimeout
	if hs > 0 {
		c.nc.SetDeadline(time.Now().Add(hs))
	}
	c.wmu.Unlock()
	if tc, ok := c.nc.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			c.handshakeFailed(err)
			return
		}
		if tc.ConnectionState().NegotiatedProtocol != http2.NextProtoTLS {
			return // a gRPC client negotiates h2 (ALPN)
		}
	}
	c.br = bufio.NewReaderSize(c.nc, bufSize)
	c.bw = bufio.NewWriterSize(c.nc, bufSize)
	var pre [len(http2.ClientPreface)]byte
	if _, err := io.ReadFull(c.br, pre[:]); err != nil || string(pre[:]) != http2.ClientPreface {
		c.handshakeFailed(err)
		return
	}
	c.wmu.Lock()
	if c.draining.Load() {
		c.wmu.Unlock()
		return
	}
	if hs > 0 {
		// The read deadline stays the handshake's until settle.
		c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	} else {
		c.nc.SetDeadline(time.Time{})
		c.settle()
		c.pushDeadlines(time.Now())
	}
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = maxHeaderList
	c.fr.SetMaxReadFrameSize(maxFrame)
	c.fr.SetReuseFrames()
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.henc.SetMaxDynamicTableSizeLimit(0) // static table and literals only
	c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: maxStreams},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: staticStreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderList},
	)
	c.fr.WriteWindowUpdate(0, uint32(c.recvWin-defaultWindow))
	err := c.bw.Flush()
	c.wmu.Unlock()
	if err != nil {
		return
	}
	for {
		f, err := c.fr.ReadFrame()
		c.wmu.Lock()
		draining := c.draining.Load()
		if draining && !c.goneAway {
			c.owedGoAway()
		}
		var done bool
		if err != nil && !draining && isTimeout(err) {
			if c.settled {
				// Idle for IdleTimeout: say goodbye.
				c.s.closed("idle")
				done = c.fail(http2.ErrCodeNo, "idle")
			} else {
				// The handshake did not complete in time.
				c.s.closed("handshake")
				done = c.fail(http2.ErrCodeSettingsTimeout, "handshake not complete")
			}
		} else {
			done = c.handle(f, err)
		}
		if !done && c.br.Buffered() == 0 {
			done = c.bw.Flush() != nil
		}
		if !done && (draining || c.clientGone) && len(c.streams) == 0 {
			c.bw.Flush()
			done = true
		}
		if !done && !draining {
			if c.settled {
				c.pushDeadlines(time.Now())
			}
			if c.draining.Load() {
				// Shutdown began meanwhile: its GOAWAY and deadline win
				// over the idle deadline just pushed.
				c.owedGoAway()
			}
		}
		c.wmu.Unlock()
		if done {
			return
		}
	}
}

// pushDeadlines moves the idle read deadline and the write deadline
// forward, at most once a second (each is a timer update).
func (c *serverConn) pushDeadlines(now time.Time) {
	if now.Sub(c.pushedAt) >= time.Second {
		if c.idleTimeout > 0 {
			c.nc.SetReadDeadline(now.Add(c.idleTimeout))
		} else {
			c.nc.SetReadDeadline(time.Time{})
		}
		c.nc.SetWriteDeadline(now.Add(writeTimeout))
		c.pushedAt = now
	}
}

// settle ends the handshake: from now on the idle deadline holds,
// pushed at the end of the frame being handled.
func (c *serverConn) settle() {
	c.settled = true
	c.handshaking.Store(false)
	c.pushedAt = time.Time{}
}

// handshakeFailed counts a connection whose TLS handshake or preface
// did not arrive within the handshake timeout (err: the read's error;
// Shutdown's deadline is not counted).
func (c *serverConn) handshakeFailed(err error) {
	if err != nil && isTimeout(err) && !c.draining.Load() {
		c.s.closed("handshake")
	}
}

// closed counts a connection closed for doing nothing (why: handshake,
// idle).
func (s *Server) closed(why string) {
	if m := s.cfg.Metrics; m != nil && m.Closed != nil {
		m.Closed.WithLabelValues(why).Inc()
	}
}

// owedGoAway sends the GOAWAY that goAway could not (the goroutine held
// the write lock) and sets Shutdown's read deadline (under wmu).
func (c *serverConn) owedGoAway() {
	if !c.goneAway {
		c.sendGoAway()
	}
	if len(c.streams) == 0 {
		c.nc.SetReadDeadline(time.Now())
	} else {
		c.nc.SetReadDeadline(time.Unix(0, c.drainBy.Load()))
	}
}

// isTimeout reports whether err is a deadline's.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sendGoAway sends GOAWAY NO_ERROR with the highest stream id seen, the
// last one the connection will answer (under wmu).
func (c *serverConn) sendGoAway() {
	c.goneAway, c.lastID = true, c.maxID.Load()
	c.fr.WriteGoAway(c.lastID, http2.ErrCodeNo, nil)
	c.bw.Flush()
}

// cancelAll cancels the contexts of the streams left.
func (c *serverConn) cancelAll() {
	for _, st := range c.streams {
		if st.cancel != nil {
			st.cancel()
		}
	}
}

// goAway sends GOAWAY: the streams begun are finished, no new ones
// accepted. A connection with none open ends at once; one whose client
// does not finish its streams ends by deadline (zero: never).
//
// It never waits for the connection's goroutine: when that holds the
// write lock (handling a frame, or blocked writing to a client that does
// not read), the goroutine sends the GOAWAY itself after its frame, and
// Shutdown's deadline closes a connection blocked for good.
func (c *serverConn) goAway(deadline time.Time) {
	if deadline.IsZero() {
		// No deadline: a client that never finishes its streams still
		// lets go after a while.
		deadline = time.Now().Add(defaultIdleTimeout)
	}
	c.drainBy.Store(deadline.UnixNano())
	c.draining.Store(true)
	if !c.wmu.TryLock() {
		// The goroutine is busy; it sends the GOAWAY after its frame
		// (owedGoAway). Bound its next read meanwhile.
		c.nc.SetReadDeadline(deadline)
		return
	}
	defer c.wmu.Unlock()
	if c.fr == nil {
		c.nc.SetDeadline(time.Now()) // still in the handshake
		return
	}
	if !c.goneAway {
		c.sendGoAway()
	}
	if c.open.Load() == 0 {
		c.nc.SetReadDeadline(time.Now())
	} else {
		c.nc.SetReadDeadline(deadline)
	}
}

// fail ends the connection with GOAWAY code.
func (c *serverConn) fail(code http2.ErrCode, why string) bool {
	last := c.maxID.Load()
	if c.goneAway {
		last = c.lastID // a later GOAWAY must not raise it
	}
	c.fr.WriteGoAway(last, code, []byte(why))
	c.bw.Flush()
	return true
}

// handle handles one frame (or ReadFrame's error) and reports whether
// the connection is done.
func (c *serverConn) handle(f http2.Frame, err error) bool {
	if err != nil {
		var se http2.StreamError
		var ce http2.ConnectionError
		switch {
		case errors.As(err, &se):
			if st := c.streams[se.StreamID]; st != nil {
				c.close(st)
			}
			c.reset(se.StreamID, se.Code)
			return c.wasted()
		case errors.As(err, &ce):
			why := ""
			if d := c.fr.ErrorDetail(); d != nil {
				why = d.Error()
			}
			return c.fail(http2.ErrCode(ce), why)
		case errors.Is(err, http2.ErrFrameTooLarge):
			return c.fail(http2.ErrCodeFrameSize, "frame too large")
		}
		return true // the connection's end, or its deadline
	}
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		return c.headers(f)
	case *http2.DataFrame:
		return c.data(f)
	case *http2.WindowUpdateFrame:
		return c.windowUpdate(f)
	case *http2.SettingsFrame:
		return c.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			c.fr.WritePing(true, f.Data)
		}
		return c.wasted()
	case *http2.RSTStreamFrame:
		if st := c.streams[f.StreamID]; st != nil {
			c.close(st)
		} else if f.StreamID > c.maxID.Load() {
			return c.fail(http2.ErrCodeProtocol, "RST_STREAM on an idle stream")
		}
		return c.wasted()
	case *http2.GoAwayFrame:
		c.clientGone = true
		return false
	case *http2.PushPromiseFrame:
		return c.fail(http2.ErrCodeProtocol, "PUSH_PROMISE from a client")
	}
	return c.wasted() // PRIORITY, unknown frames
}

// reset sends RST_STREAM and remembers the stream among the last
// resetsKept reset, whose late frames are ignored.
func (c *serverConn) reset(id uint32, code http2.ErrCode) {
	c.fr.WriteRSTStream(id, code)
	c.resets[c.nresets%resetsKept] = id
	c.nresets++
}

// wasReset reports whether id is one of the streams last reset.
func (c *serverConn) wasReset(id uint32) bool {
	return id != 0 && slices.Contains(c.resets[:], id)
}

// wasted counts a frame that did no work, and ends the connection when
// there were too many.
func (c *serverConn) wasted() bool {
	c.idle++
	if c.idle > calmLimit {
		return c.fail(http2.ErrCodeEnhanceYourCalm, "too many frames without calls")
	}
	return false
}

// headers starts a stream (or, for an open one, ends it: trailers).
func (c *serverConn) headers(f *http2.MetaHeadersFrame) bool {
	id := f.StreamID
	if st := c.streams[id]; st != nil {
		if st.sending || st.ended || !f.StreamEnded() {
			return c.fail(http2.ErrCodeProtocol, "HEADERS on a stream already begun")
		}
		return c.ended(st)
	}
	if f.StreamEnded() && c.wasReset(id) {
		// Trailers on a stream the server has reset (or answered before
		// its request ended): the client sent them before it saw that
		// (RFC 9113 5.1).
		return c.wasted()
	}
	if id%2 == 0 || id <= c.maxID.Load() {
		return c.fail(http2.ErrCodeProtocol, "HEADERS with a stream id not new and odd")
	}
	c.maxID.Store(id)
	if c.draining.Load() || c.clientGone || len(c.streams) >= maxStreams || c.buffered > c.budget {
		c.reset(id, http2.ErrCodeRefusedStream)
		return c.wasted()
	}
	st := &callStream{id: id, recvWin: staticStreamWindow, sendWin: c.peerWin}
	var method, ctype, timeout, encoding string
	var auth []string
	for _, hf := range f.Fields {
		switch hf.Name {
		case ":method":
			method = hf.Value
		case ":path":
			st.path = hf.Value
		case "content-type":
			ctype = hf.Value
		case "grpc-timeout":
			timeout = hf.Value
		case "grpc-encoding":
			encoding = hf.Value
		case "authorization":
			auth = append(auth, hf.Value)
		}
	}
	c.streams[id] = st
	c.open.Store(int32(len(c.streams)))
	st.ended = f.StreamEnded()
	if method != "POST" {
		c.reset(id, http2.ErrCodeProtocol)
		c.close(st)
		return c.wasted()
	}
	if f.Truncated {
		return c.answerError(st, codes.ResourceExhausted, fmt.Sprintf("drover: header list larger than %d bytes", maxHeaderList))
	}
	if !grpcContentType(ctype) {
		c.hbuf.Reset()
		c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: "415"})
		return c.endWith(st, nil, c.hbuf.Bytes())
	}
	st.method = knownMethods[st.path]
	switch st.method {
	case methodUnknown:
		return c.answerError(st, codes.Unimplemented, fmt.Sprintf("drover: unknown method %s", st.path))
	case methodElsewhere:
		return c.answerError(st, codes.Unimplemented, fmt.Sprintf("drover: %s is not served on the fast listener; call the gRPC address (drover serve -addr)", st.path))
	}
	if st.method != methodHealth && !TokenOK(auth, c.s.cfg.Token) {
		return c.answerError(st, codes.Unauthenticated, Unauthenticated)
	}
	if encoding != "" && encoding != "identity" {
		return c.answerError(st, codes.Unimplemented, fmt.Sprintf("drover: grpc-encoding %q is not supported; send uncompressed requests", encoding))
	}
	st.ctx = context.Background()
	if timeout != "" {
		d, ok := parseGRPCTimeout(timeout)
		if !ok {
			return c.answerError(st, codes.InvalidArgument, fmt.Sprintf("drover: malformed grpc-timeout %q", timeout))
		}
		st.ctx, st.cancel = context.WithTimeout(st.ctx, d)
	}
	if st.ended {
		return c.ended(st)
	}
	return false
}

// grpcContentType reports whether ct is gRPC's content type, as grpc-go
// checks it.
func grpcContentType(ct string) bool {
	rest, ok := strings.CutPrefix(ct, "application/grpc")
	return ok && (rest == "" || rest[0] == '+' || rest[0] == ';')
}

// data reads a DATA frame into its stream.
func (c *serverConn) data(f *http2.DataFrame) bool {
	n := int64(f.Header().Length) // padding included, as flow control counts
	c.recvWin -= n
	if c.recvWin < 0 {
		return c.fail(http2.ErrCodeFlowControl, "DATA beyond the connection's window")
	}
	c.unacked += n
	if c.unacked >= c.recvWinSize()/2 {
		c.fr.WriteWindowUpdate(0, uint32(c.unacked))
		c.recvWin += c.unacked
		c.unacked = 0
	}
	st := c.streams[f.StreamID]
	if st == nil || st.sending {
		if f.StreamID > c.maxID.Load() {
			return c.fail(http2.ErrCodeProtocol, "DATA on an idle stream")
		}
		return c.wasted() // a stream answered or reset: dropped
	}
	if st.ended {
		c.reset(st.id, http2.ErrCodeStreamClosed)
		c.close(st)
		return c.wasted()
	}
	st.recvWin -= n
	if st.recvWin < 0 {
		c.reset(st.id, http2.ErrCodeFlowControl)
		c.close(st)
		return c.wasted()
	}
	d := f.Data()
	st.ended = f.StreamEnded()
	if len(d) > 0 {
		if len(st.body) < 5 && len(st.body)+len(d) >= 5 {
			// The length prefix is whole: refuse a message too long
			// before reading it.
			var pre [5]byte
			k := copy(pre[:], st.body)
			copy(pre[k:], d)
			if l := binary.BigEndian.Uint32(pre[1:]); int64(l) > int64(c.maxRecv) {
				return c.answerError(st, codes.ResourceExhausted, fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", l, c.maxRecv))
			}
		}
		if len(st.body)+len(d) > c.maxRecv+5 {
			return c.answerError(st, codes.InvalidArgument, "drover: more than one request message")
		}
		if c.buffered+int64(len(d)) > c.budget {
			return c.answerError(st, codes.ResourceExhausted, "drover: too many request bytes buffered on this connection; send fewer large requests at once")
		}
		c.buffered += int64(len(d))
		if st.body == nil && len(c.bodies) > 0 {
			st.body = c.bodies[len(c.bodies)-1]
			c.bodies = c.bodies[:len(c.bodies)-1]
		}
		st.body = append(st.body, d...)
	} else if !st.ended && c.wasted() {
		return true
	}
	if st.ended {
		return c.ended(st)
	}
	st.unacked += n
	if st.unacked >= staticStreamWindow/2 {
		c.fr.WriteWindowUpdate(st.id, uint32(st.unacked))
		st.recvWin += st.unacked
		st.unacked = 0
	}
	return false
}

// recvWinSize is the connection's receive window.
func (c *serverConn) recvWinSize() int64 { return connWindow(c.maxRecv) }

// windowUpdate opens a send window, and sends what waited for it.
func (c *serverConn) windowUpdate(f *http2.WindowUpdateFrame) bool {
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		c.sendWin += inc
		if c.sendWin > maxWindow {
			return c.fail(http2.ErrCodeFlowControl, "connection window above 2^31-1")
		}
		return c.resume()
	}
	st := c.streams[f.StreamID]
	if st == nil {
		return c.wasted()
	}
	st.sendWin += inc
	if st.sendWin > maxWindow {
		c.reset(st.id, http2.ErrCodeFlowControl)
		c.close(st)
		return c.wasted()
	}
	if st.sending {
		c.send(st)
	}
	return false
}

// settings applies the client's settings and acknowledges them.
func (c *serverConn) settings(f *http2.SettingsFrame) bool {
	if f.IsAck() {
		if !c.gotAck {
			c.gotAck = true
			if c.gotSettings && !c.settled {
				c.settle()
			}
			return false
		}
		return c.wasted() // an ACK of nothing
	}
	bad := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - c.peerWin
			c.peerWin = int64(s.Val)
			for _, st := range c.streams {
				st.sendWin += delta
				if st.sendWin > maxWindow {
					return http2.ConnectionError(http2.ErrCodeFlowControl) // RFC 9113 6.9.2
				}
			}
		case http2.SettingMaxFrameSize:
			c.peerFrame = int(s.Val)
		}
		return nil
	})
	if bad != nil {
		var ce http2.ConnectionError
		code := http2.ErrCodeProtocol
		if errors.As(bad, &ce) {
			code = http2.ErrCode(ce)
		}
		return c.fail(code, bad.Error())
	}
	c.fr.WriteSettingsAck()
	if !c.gotSettings {
		c.gotSettings = true
		if c.gotAck && !c.settled {
			c.settle()
		}
	}
	if c.resume() {
		return true
	}
	return c.wasted()
}

// resume sends the answers that wait for window, in stream order.
func (c *serverConn) resume() bool {
	var ids []uint32
	for id, st := range c.streams {
		if st.sending {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if c.sendWin <= 0 {
			break
		}
		c.send(c.streams[id])
	}
	return false
}

// close forgets a stream, giving its buffered bytes back.
func (c *serverConn) close(st *callStream) {
	if st.cancel != nil {
		st.cancel()
	}
	c.dropBody(st)
	c.release(st)
	delete(c.streams, st.id)
	c.open.Store(int32(len(c.streams)))
}

// ended answers a stream whose request has arrived whole.
func (c *serverConn) ended(st *callStream) bool {
	if !c.settled {
		c.settle()
	}
	code, msg := c.call(st)
	c.idle = max(c.idle-callCredit, 0)
	if code != codes.OK {
		return c.answerError(st, code, msg)
	}
	c.responseHeaders()
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: c.hbuf.Bytes(), EndHeaders: true})
	c.hbuf.Reset()
	c.henc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
	return c.endWith(st, c.out, c.hbuf.Bytes())
}

// answerError ends a stream with a trailers-only answer: code and msg.
func (c *serverConn) answerError(st *callStream, code codes.Code, msg string) bool {
	c.responseHeaders()
	c.henc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: strconv.Itoa(int(code))})
	if msg != "" {
		c.henc.WriteField(hpack.HeaderField{Name: "grpc-message", Value: encodeGRPCMessage(msg)})
	}
	return c.endWith(st, nil, c.hbuf.Bytes())
}

// responseHeaders starts a header block in hbuf with a gRPC answer's
// headers: :status 200 and the content type.
func (c *serverConn) responseHeaders() {
	c.hbuf.Reset()
	c.henc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	c.henc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
}

// endWith sends payload as DATA, as the windows allow, then the block
// that ends the stream; what does not fit waits (st.sending) for
// WINDOW_UPDATE.
func (c *serverConn) endWith(st *callStream, payload, block []byte) bool {
	if st.cancel != nil {
		st.cancel()
		st.cancel = nil
	}
	c.dropBody(st)
	st.sending = true
	st.trailer = block
	st.pending = payload
	c.send(st)
	if st.sending {
		// Keep what waits: payload and block are the connection's
		// buffers. It counts toward the bytes buffered.
		st.pending = slices.Clone(st.pending)
		st.trailer = slices.Clone(st.trailer)
		st.held = int64(len(st.pending) + len(st.trailer))
		c.buffered += st.held
	}
	return false
}

// send sends what the windows allow of st's answer, and ends the stream
// when all of it is sent.
func (c *serverConn) send(st *callStream) {
	for len(st.pending) > 0 {
		n := min(int64(len(st.pending)), st.sendWin, c.sendWin, int64(c.peerFrame))
		if n <= 0 {
			return
		}
		c.fr.WriteData(st.id, false, st.pending[:n])
		st.pending = st.pending[n:]
		st.sendWin -= n
		c.sendWin -= n
	}
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: st.trailer, EndHeaders: true, EndStream: true})
	if !st.ended {
		// Answered before the request ended: the client may stop sending.
		c.reset(st.id, http2.ErrCodeNo)
	}
	st.sending = false
	c.close(st)
}

// release gives back what st's waiting answer held of the budget.
func (c *serverConn) release(st *callStream) {
	c.buffered -= st.held
	st.held = 0
}

// call answers a request that has arrived whole: its answer message
// (gRPC-framed) in c.out, and its status.
func (c *serverConn) call(st *callStream) (codes.Code, string) {
	m := c.s.cfg.Metrics
	var start time.Time
	if m != nil {
		if st.method == methodPlace {
			m.InFlight.Inc()
			defer m.InFlight.Dec()
		}
		start = c.s.cfg.Now()
	}
	code, msg := c.dispatch(st)
	if m != nil {
		took := c.s.cfg.Now().Sub(start).Seconds()
		if st.method == methodPlace {
			c.s.placeLatency.Observe(took)
		} else {
			m.Latency.WithLabelValues(st.path).Observe(took)
		}
		if st.method == methodPlace && code == codes.OK {
			c.s.placeOK.Inc()
		} else {
			m.Requests.WithLabelValues(st.path, code.String()).Inc()
		}
	}
	return code, msg
}

// dispatch decodes st's request, calls its method and encodes the answer
// into c.out.
func (c *serverConn) dispatch(st *callStream) (codes.Code, string) {
	b := st.body
	if len(b) < 5 {
		if len(b) == 0 {
			return codes.InvalidArgument, "drover: no request message"
		}
		return codes.InvalidArgument, "drover: request message shorter than its 5-byte prefix"
	}
	if n := binary.BigEndian.Uint32(b[1:5]); int64(n) != int64(len(b)-5) {
		if int64(n) > int64(len(b)-5) {
			return codes.InvalidArgument, fmt.Sprintf("drover: request message of %d bytes ended after %d", n, len(b)-5)
		}
		return codes.InvalidArgument, "drover: more than one request message"
	}
	switch b[0] {
	case 0:
	case 1:
		return codes.InvalidArgument, "drover: compressed request message without a grpc-encoding"
	default:
		return codes.InvalidArgument, fmt.Sprintf("drover: request message's compressed flag is %d, want 0 or 1", b[0])
	}
	b = b[5:]
	if err := st.ctx.Err(); err != nil {
		s := status.FromContextError(err)
		return s.Code(), s.Message()
	}
	var resp proto.Message
	var err error
	switch st.method {
	case methodPlace:
		in := &c.in
		defer func() {
			if !in.Reset() {
				c.in = PlaceIn{} // a huge request's scratch is left to the collector
			}
		}()
		// decodePlaceRequest leaves in.Req empty when it cannot decode.
		if !decodePlaceRequest(b, &in.Req, &in.Scratch) {
			if uerr := proto.Unmarshal(b, &in.Req); uerr != nil {
				return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
			}
		}
		resp, err = c.s.b.Place(st.ctx, &in.Req)
	case methodReport:
		req := new(pb.ReportRequest)
		if uerr := proto.Unmarshal(b, req); uerr != nil {
			return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
		}
		resp, err = c.s.b.Report(st.ctx, req)
	case methodStatus:
		req := new(pb.StatusRequest)
		if uerr := proto.Unmarshal(b, req); uerr != nil {
			return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
		}
		resp, err = c.s.b.Status(st.ctx, req)
	case methodRoute:
		req := new(pb.RouteRequest)
		if uerr := proto.Unmarshal(b, req); uerr != nil {
			return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
		}
		resp, err = c.s.b.Route(st.ctx, req)
	case methodRouteMM:
		req := new(pb.RouteMMRequest)
		if uerr := proto.Unmarshal(b, req); uerr != nil {
			return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
		}
		resp, err = c.s.b.RouteMM(st.ctx, req)
	case methodScale:
		req := new(pb.ScaleRequest)
		if uerr := proto.Unmarshal(b, req); uerr != nil {
			return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
		}
		resp, err = c.s.b.Scale(st.ctx, req)
	case methodHealth:
		req := new(healthpb.HealthCheckRequest)
		if uerr := proto.Unmarshal(b, req); uerr != nil {
			return codes.InvalidArgument, fmt.Sprintf("%s: %v", malformedRequest, uerr)
		}
		resp, err = c.s.b.Check(st.ctx, req)
	}
	if err != nil {
		s, _ := status.FromError(err)
		return s.Code(), s.Message()
	}
	c.out, err = proto.MarshalOptions{}.MarshalAppend(append(c.out[:0], 0, 0, 0, 0, 0), resp)
	if err != nil || len(c.out)-5 > math.MaxUint32 {
		return codes.Internal, fmt.Sprintf("drover: encode the answer: %v", err)
	}
	binary.BigEndian.PutUint32(c.out[1:5], uint32(len(c.out)-5))
	return codes.OK, ""
}

// Unauthenticated is the message of a call without the right token,
// on both listeners.
const Unauthenticated = "drover: missing or wrong bearer token"

// TokenOK reports whether one of a call's authorization values carries
// the bearer token ("Bearer <token>"; always, when token is empty). The
// gRPC listener checks its calls with it too.
func TokenOK(values []string, token string) bool {
	if token == "" {
		return true
	}
	for _, v := range values {
		tok, ok := strings.CutPrefix(v, "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(token)) == 1 {
			return true
		}
	}
	return false
}

// parseGRPCTimeout parses a grpc-timeout value: at most 8 digits and a
// unit (H, M, S, m, u, n). An hour count that would overflow a Duration
// is clamped to the largest one.
func parseGRPCTimeout(v string) (time.Duration, bool) {
	if len(v) < 2 || len(v) > 9 {
		return 0, false
	}
	var unit time.Duration
	switch v[len(v)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, false
	}
	var n int64
	for _, ch := range v[:len(v)-1] {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = 10*n + int64(ch-'0')
	}
	if n > int64(math.MaxInt64/unit) {
		return math.MaxInt64, true
	}
	return time.Duration(n) * unit, true
}

// encodeGRPCMessage percent-encodes a grpc-message value as gRPC's
// HTTP/2 protocol says (bytes outside printable ASCII, and '%'), cut to
// maxMessageText bytes.
func encodeGRPCMessage(msg string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		ch := msg[i]
		if ch >= ' ' && ch <= '~' && ch != '%' {
			if b.Len()+1 > maxMessageText {
				break
			}
			b.WriteByte(ch)
			continue
		}
		if b.Len()+3 > maxMessageText {
			break
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}
