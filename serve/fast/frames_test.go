package fast

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/internal/leakcheck"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/servetest"
)

// These tests talk raw HTTP/2 to the fast listener (server.go): a
// test writes frames as a client, hostile or not, and an h2peer reads
// and checks what the server answers.

// testBackend is a deterministic stand-in for serve's Core: Place puts
// worker i on the cluster's node i mod n (so the answer grows with the
// workers and the node ids, as the Core's does), a job without an id is
// InvalidArgument, Status names the policy and the health check answers
// SERVING. The tests here check the transport; serve's tests check the
// fast listener's answers against the gRPC listener's over a real Core.
type testBackend struct{}

var _ Backend = testBackend{}

func (testBackend) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	if req.GetJob().GetId() == "" {
		return nil, status.Error(codes.InvalidArgument, "job.id: empty")
	}
	nodes := req.GetCluster().GetNodes()
	resp := &pb.PlaceResponse{DecisionId: "d-" + req.Job.Id, Placed: len(nodes) > 0, Policy: "heuristic:test",
		Sync: &pb.Sync{}, Reason: "test backend"}
	for i := range int(req.Job.Workers) {
		if len(nodes) == 0 {
			break
		}
		resp.Assignments = append(resp.Assignments, &pb.Assignment{Role: pb.Role_ROLE_WORKER, Index: int32(i), NodeId: nodes[i%len(nodes)].Id})
	}
	return resp, nil
}

func (testBackend) Report(context.Context, *pb.ReportRequest) (*pb.ReportResponse, error) {
	return &pb.ReportResponse{}, nil
}

func (testBackend) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return &pb.StatusResponse{ActivePolicy: "heuristic:test"}, nil
}

func (testBackend) Route(_ context.Context, req *pb.RouteRequest) (*pb.RouteResponse, error) {
	if len(req.GetInstances()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "instances: none")
	}
	return &pb.RouteResponse{DecisionId: "r-" + req.GetRequestId(), PrefillId: req.Instances[0].GetId(), DecodeId: req.Instances[len(req.Instances)-1].GetId(),
		Decode: int32(len(req.Instances) - 1), KvFormat: "fp16", Policy: "heuristic:test"}, nil
}

func (testBackend) RouteMM(_ context.Context, req *pb.RouteMMRequest) (*pb.RouteMMResponse, error) {
	return &pb.RouteMMResponse{DecisionId: "m-" + req.GetRequestId(), Policy: "heuristic:test"}, nil
}

func (testBackend) Scale(context.Context, *pb.ScaleRequest) (*pb.ScaleResponse, error) {
	return &pb.ScaleResponse{Sizes: &pb.MMSizes{Image: 1, Text: 1}, Policy: "heuristic:test"}, nil
}

func (testBackend) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// newFrameServer returns a server of a testBackend, shut down when the
// test ends.
func newFrameServer(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	srv := NewServer(testBackend{}, cfg)
	tb.Cleanup(func() { <-shutdown(srv, time.Minute) })
	return srv
}

// framePlaceRequest is servetest.PlaceRequest.
var framePlaceRequest = servetest.PlaceRequest

// grpcMessage returns m as one gRPC message: flag 0, its length, its
// bytes.
func grpcMessage(tb testing.TB, m proto.Message) []byte {
	tb.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return grpcFrame(b)
}

// grpcFrame prefixes b with gRPC's 5-byte message prefix.
func grpcFrame(b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// paddedStatusRequest is a gRPC-framed StatusRequest of exactly n bytes
// after its prefix (n >= 3): an unknown bytes field, which the server
// must keep and ignore.
func paddedStatusRequest(n int) []byte {
	var b []byte
	for k := n; k >= 0; k-- {
		b = protowire.AppendTag(b[:0], 1000, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(k))
		if len(b)+k == n {
			b = append(b, make([]byte, k)...)
			return grpcFrame(b)
		}
	}
	panic("serve: no padded StatusRequest of that size")
}

// decodeAnswer checks that b is one uncompressed gRPC message and
// unmarshals it into m.
func decodeAnswer(t *testing.T, b []byte, m proto.Message) {
	t.Helper()
	if len(b) < 5 || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-5 {
		t.Fatalf("answer %x is not one uncompressed gRPC message", b[:min(len(b), 16)])
	}
	if err := proto.Unmarshal(b[5:], m); err != nil {
		t.Fatalf("answer does not decode: %v", err)
	}
}

// grpcHeaders returns the header fields of a gRPC request for path; each
// field of over replaces the one of its name, or is added.
func grpcHeaders(path string, over ...hpack.HeaderField) []hpack.HeaderField {
	hs := []hpack.HeaderField{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "http"},
		{Name: ":path", Value: path},
		{Name: ":authority", Value: "x"},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"},
	}
next:
	for _, o := range over {
		for i := range hs {
			if hs[i].Name == o.Name {
				hs[i].Value = o.Value
				continue next
			}
		}
		hs = append(hs, o)
	}
	return hs
}

// h2writer writes a client's frames, encoding header blocks with its
// own HPACK state.
type h2writer struct {
	fr   *http2.Framer
	henc *hpack.Encoder
	hbuf bytes.Buffer
}

func newH2Writer(w io.Writer) *h2writer {
	hw := &h2writer{fr: http2.NewFramer(w, nil)}
	hw.henc = hpack.NewEncoder(&hw.hbuf)
	return hw
}

// block encodes a header block.
func (w *h2writer) block(fields []hpack.HeaderField) []byte {
	w.hbuf.Reset()
	for _, f := range fields {
		w.henc.WriteField(f)
	}
	return bytes.Clone(w.hbuf.Bytes())
}

// headers writes one HEADERS frame carrying fields.
func (w *h2writer) headers(id uint32, end bool, fields []hpack.HeaderField) error {
	return w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: w.block(fields), EndStream: end, EndHeaders: true})
}

// data writes b on stream id in frames of at most 16 KiB, the last one
// ending the stream when end.
func (w *h2writer) data(id uint32, end bool, b []byte) error {
	for {
		n := min(len(b), maxFrame)
		if err := w.fr.WriteData(id, end && n == len(b), b[:n]); err != nil {
			return err
		}
		if b = b[n:]; len(b) == 0 {
			return nil
		}
	}
}

// h2frame is a frame the server sent, copied out of the reading Framer.
type h2frame struct {
	typ      http2.FrameType
	stream   uint32
	flags    http2.Flags
	length   uint32
	data     []byte
	fields   map[string]string
	code     http2.ErrCode
	lastID   uint32
	debug    string
	inc      uint32
	settings []http2.Setting
	ping     [8]byte
}

func (f *h2frame) String() string {
	return fmt.Sprintf("%v stream=%d flags=%v len=%d fields=%v code=%v", f.typ, f.stream, f.flags, f.length, f.fields, f.code)
}

// captureFrame copies what the tests need of f.
func captureFrame(f http2.Frame) *h2frame {
	h := f.Header()
	r := &h2frame{typ: h.Type, stream: h.StreamID, flags: h.Flags, length: h.Length}
	switch f := f.(type) {
	case *http2.DataFrame:
		r.data = bytes.Clone(f.Data())
	case *http2.MetaHeadersFrame:
		r.fields = map[string]string{}
		for _, hf := range f.Fields {
			r.fields[hf.Name] = hf.Value
		}
	case *http2.RSTStreamFrame:
		r.code = f.ErrCode
	case *http2.GoAwayFrame:
		r.code, r.lastID, r.debug = f.ErrCode, f.LastStreamID, string(f.DebugData())
	case *http2.WindowUpdateFrame:
		r.inc = f.Increment
	case *http2.SettingsFrame:
		f.ForeachSetting(func(s http2.Setting) error {
			r.settings = append(r.settings, s)
			return nil
		})
	case *http2.PingFrame:
		r.ping = f.Data
	}
	return r
}

// h2answer is what the server sent on one stream.
type h2answer struct {
	headers  map[string]string // the response headers (nil: none, or trailers-only)
	trailers map[string]string // the HEADERS that ended the stream
	data     []byte            // the DATA payloads, joined
	frames   []int             // the DATA payloads' lengths
	rst      []http2.ErrCode   // RST_STREAM codes
	kinds    []string          // "headers", "data", "trailers", "rst", in order
}

// done reports whether the server has finished with the stream.
func (a *h2answer) done() bool { return a.trailers != nil || len(a.rst) > 0 }

// onlyRST reports whether the server answered the stream (a may be nil)
// with one RST_STREAM of code and nothing else.
func (a *h2answer) onlyRST(code http2.ErrCode) bool {
	return a != nil && slices.Equal(a.kinds, []string{"rst"}) && a.rst[0] == code
}

// h2peer is a raw HTTP/2 client of one fast connection: the test writes
// frames with its h2writer, and a goroutine reads the server's frames
// into in; the test goroutine absorbs them into the fields below.
type h2peer struct {
	*h2writer
	t  *testing.T
	nc net.Conn

	in      chan *h2frame // the server's frames, closed at the connection's end
	readErr error         // why reading ended (set before in is closed)
	closed  bool          // in was seen closed
	pings   uint64

	// What the server sent.
	answers      map[uint32]*h2answer
	dataOrder    []uint32        // the stream of each DATA frame, in order
	dataBytes    int64           // flow-controlled DATA bytes received
	settings     []http2.Setting // the server's SETTINGS
	settingsAcks int
	connGrant    int64            // connection window the server gave: 65535 + its WINDOW_UPDATEs
	streamGrant  map[uint32]int64 // the server's WINDOW_UPDATEs by stream
	goAway       *h2frame         // the last GOAWAY
	afterGoAway  []*h2frame       // frames other than PING ACKs after the first GOAWAY
}

// newH2Peer starts reading the server's frames from nc. Its cleanup
// closes nc and waits for the reading goroutine.
func newH2Peer(t *testing.T, nc net.Conn) *h2peer {
	p := &h2peer{h2writer: newH2Writer(nc), t: t, nc: nc, in: make(chan *h2frame, 1<<16),
		answers: map[uint32]*h2answer{}, streamGrant: map[uint32]int64{}, connGrant: defaultWindow}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(p.in)
		fr := http2.NewFramer(nil, nc)
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				p.readErr = err
				return
			}
			p.in <- captureFrame(f)
		}
	}()
	t.Cleanup(func() {
		nc.Close()
		<-read
	})
	return p
}

// newPipePeer serves one end of a net.Pipe with a serverConn of srv (after
// tweak, when not nil, has changed it) and returns a peer on the other
// end, and a channel closed when the connection's serve has returned.
func newPipePeer(t *testing.T, srv *Server, tweak func(*serverConn)) (*h2peer, <-chan struct{}) {
	cli, sc := net.Pipe()
	c := srv.newServerConn(sc)
	if tweak != nil {
		tweak(c)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		c.serve()
		sc.Close()
	}()
	p := newH2Peer(t, cli)
	t.Cleanup(func() {
		cli.Close()
		select {
		case <-served:
		case <-time.After(time.Minute):
			t.Errorf("serve did not return after the client closed the connection")
		}
	})
	return p, served
}

// closedErr reports whether err is how reading a closed connection ends.
func closedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET)
}

// recv returns the server's next frame, absorbed, or nil when the
// connection has ended. It fails the test when no frame comes in 5 s, or
// when the server wrote something that is not a valid frame (such as a
// frame longer than the client's 16 KiB SETTINGS_MAX_FRAME_SIZE).
func (p *h2peer) recv() *h2frame {
	p.t.Helper()
	if p.closed {
		return nil
	}
	select {
	case f, ok := <-p.in:
		if !ok {
			p.closed = true
			if !closedErr(p.readErr) {
				p.t.Fatalf("reading the server's frames: %v", p.readErr)
			}
			return nil
		}
		p.absorb(f)
		return f
	case <-time.After(time.Minute):
		p.t.Fatalf("no frame from the server in a minute")
		return nil
	}
}

// answer returns the stream's answer, created empty.
func (p *h2peer) answer(id uint32) *h2answer {
	a := p.answers[id]
	if a == nil {
		a = &h2answer{}
		p.answers[id] = a
	}
	return a
}

// absorb records f, failing the test on frames a server must not send.
func (p *h2peer) absorb(f *h2frame) {
	p.t.Helper()
	if p.goAway != nil && !(f.typ == http2.FramePing && f.flags.Has(http2.FlagPingAck)) {
		p.afterGoAway = append(p.afterGoAway, f)
	}
	switch f.typ {
	case http2.FrameHeaders:
		a := p.answer(f.stream)
		if a.trailers != nil {
			p.t.Fatalf("HEADERS after the stream's end: %v", f)
		}
		if f.flags.Has(http2.FlagHeadersEndStream) {
			a.trailers = f.fields
			a.kinds = append(a.kinds, "trailers")
			break
		}
		if a.headers != nil || len(a.data) > 0 {
			p.t.Fatalf("a second HEADERS, or HEADERS after DATA, without END_STREAM: %v", f)
		}
		a.headers = f.fields
		a.kinds = append(a.kinds, "headers")
	case http2.FrameData:
		a := p.answer(f.stream)
		if a.done() || a.headers == nil {
			p.t.Fatalf("DATA outside a stream's answer: %v (answer so far %v)", f, a.kinds)
		}
		if f.flags.Has(http2.FlagDataEndStream) {
			p.t.Fatalf("DATA ends the stream, without trailers: %v", f)
		}
		a.data = append(a.data, f.data...)
		a.frames = append(a.frames, len(f.data))
		a.kinds = append(a.kinds, "data")
		p.dataBytes += int64(f.length)
		p.dataOrder = append(p.dataOrder, f.stream)
	case http2.FrameRSTStream:
		a := p.answer(f.stream)
		a.rst = append(a.rst, f.code)
		a.kinds = append(a.kinds, "rst")
	case http2.FrameWindowUpdate:
		if f.stream == 0 {
			p.connGrant += int64(f.inc)
		} else {
			p.streamGrant[f.stream] += int64(f.inc)
		}
	case http2.FrameSettings:
		if f.flags.Has(http2.FlagSettingsAck) {
			p.settingsAcks++
		} else {
			p.settings = append(p.settings, f.settings...)
		}
	case http2.FrameGoAway:
		if p.goAway != nil && f.lastID > p.goAway.lastID {
			p.t.Fatalf("a second GOAWAY raised the last stream id: %v after %v", f, p.goAway)
		}
		p.goAway = f
	}
}

// must fails the test on a write's error.
func (p *h2peer) must(err error) {
	p.t.Helper()
	if err != nil {
		p.t.Fatalf("writing to the server: %v", err)
	}
}

// handshake sends the preface and a SETTINGS frame with settings, then
// waits (sync) until the server has answered them.
func (p *h2peer) handshake(settings ...http2.Setting) {
	p.t.Helper()
	_, err := io.WriteString(p.nc, http2.ClientPreface)
	p.must(err)
	p.must(p.fr.WriteSettings(settings...))
	p.sync()
	p.must(p.fr.WriteSettingsAck()) // of the server's SETTINGS, read by now
	if p.settings == nil || p.settingsAcks != 1 {
		p.t.Fatalf("handshake: server's SETTINGS %v, %d ACKs", p.settings, p.settingsAcks)
	}
}

// sync sends a PING and absorbs the server's frames until its ACK: as
// the server handles frames in order, it has then handled all that were
// sent before, and sent what they made it send. It returns the frames
// before the ACK.
func (p *h2peer) sync() []*h2frame {
	p.t.Helper()
	p.pings++
	var data [8]byte
	binary.BigEndian.PutUint64(data[:], p.pings)
	p.must(p.fr.WritePing(false, data))
	var got []*h2frame
	for {
		f := p.recv()
		if f == nil {
			p.t.Fatalf("connection closed before PING's ACK; frames since the PING: %v", got)
		}
		if f.typ == http2.FramePing && f.flags.Has(http2.FlagPingAck) && f.ping == data {
			return got
		}
		got = append(got, f)
	}
}

// await absorbs frames until the server has finished with stream id.
func (p *h2peer) await(id uint32) *h2answer {
	p.t.Helper()
	for !p.answer(id).done() {
		if p.recv() == nil {
			p.t.Fatalf("connection closed before stream %d's answer; GOAWAY %v", id, p.goAway)
		}
	}
	return p.answers[id]
}

// waitClosed absorbs frames until the connection ends, and returns them.
func (p *h2peer) waitClosed() []*h2frame {
	p.t.Helper()
	var got []*h2frame
	for {
		f := p.recv()
		if f == nil {
			return got
		}
		got = append(got, f)
	}
}

// call sends a whole unary request on stream id: HEADERS, then msg in
// DATA frames, the last ending the stream.
func (p *h2peer) call(id uint32, path string, msg []byte, over ...hpack.HeaderField) {
	p.t.Helper()
	p.must(p.headers(id, false, grpcHeaders(path, over...)))
	p.must(p.data(id, true, msg))
}

// healthMessage is a health check of the server as a whole.
var healthMessage = func() []byte {
	b, _ := proto.Marshal(&healthpb.HealthCheckRequest{})
	return grpcFrame(b)
}()

// wantOK fails the test unless a is a whole successful answer: response
// headers, then DATA, then trailers with grpc-status 0. It decodes the
// answer into m.
func wantOK(t *testing.T, a *h2answer, m proto.Message) {
	t.Helper()
	if a == nil {
		t.Fatal("no answer")
	}
	if a.headers[":status"] != "200" || a.headers["content-type"] != "application/grpc" ||
		a.trailers["grpc-status"] != "0" || len(a.rst) > 0 {
		t.Fatalf("answer %v: headers %v, trailers %v, RST %v", a.kinds, a.headers, a.trailers, a.rst)
	}
	decodeAnswer(t, a.data, m)
}

// TestFastHandshakeSettings checks the server's first frames: SETTINGS
// with MAX_CONCURRENT_STREAMS maxStreams, INITIAL_WINDOW_SIZE
// staticStreamWindow and MAX_HEADER_LIST_SIZE maxHeaderList, then a
// WINDOW_UPDATE raising the connection window from 65535 to
// connWindow, then the ACK of the client's SETTINGS.
func TestFastHandshakeSettings(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{MaxRecvMsgSize: 8 << 20})
	p, _ := newPipePeer(t, srv, nil)
	_, err := io.WriteString(p.nc, http2.ClientPreface)
	p.must(err)
	p.must(p.fr.WriteSettings())
	var kinds []string
	for range 3 {
		f := p.recv()
		kinds = append(kinds, fmt.Sprintf("%v ack=%v", f.typ, f.flags.Has(http2.FlagSettingsAck)))
	}
	if want := []string{"SETTINGS ack=false", "WINDOW_UPDATE ack=false", "SETTINGS ack=true"}; !slices.Equal(kinds, want) {
		t.Errorf("first frames %q, want %q", kinds, want)
	}
	want := map[http2.SettingID]uint32{
		http2.SettingMaxConcurrentStreams: maxStreams,
		http2.SettingInitialWindowSize:    staticStreamWindow,
		http2.SettingMaxHeaderListSize:    maxHeaderList,
	}
	got := map[http2.SettingID]uint32{}
	for _, s := range p.settings {
		got[s.ID] = s.Val
	}
	if !maps.Equal(got, want) {
		t.Errorf("SETTINGS %v, want %v", got, want)
	}
	// 8 MiB requests: the window holds one whole, with a frame to spare.
	if wantWin := int64(8<<20 + 5 + maxFrame); p.connGrant != wantWin {
		t.Errorf("connection window %d, want %d", p.connGrant, wantWin)
	}
}

// TestFastSendFlowControlStream checks that the server sends an answer's
// DATA within the stream window the client granted (SETTINGS
// INITIAL_WINDOW_SIZE, then WINDOW_UPDATEs and raised settings), never
// more and, while the answer is unfinished, never less; and that the
// answer, reassembled, is what a fresh core answers.
func TestFastSendFlowControlStream(t *testing.T) {
	req := framePlaceRequest(8, 4, 2, 8)
	want, err := testBackend{}.Place(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// start opens stream 1 and sends the request; it returns the
		// window the client granted.
		start func(p *h2peer) int64
	}{
		{"window set before the stream", func(p *h2peer) int64 {
			p.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 7})
			p.call(1, pb.Scheduler_Place_FullMethodName, grpcMessage(t, req))
			return 7
		}},
		{"window shrunk after HEADERS", func(p *h2peer) int64 {
			p.handshake()
			p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Place_FullMethodName)))
			p.must(p.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 3}))
			p.must(p.data(1, true, grpcMessage(t, req)))
			return 3
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leakcheck.Check(t)
			p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
			granted := tt.start(p)
			iws := granted
			for i := 0; ; i++ {
				p.sync()
				a := p.answer(1)
				got := int64(len(a.data))
				if got > granted {
					t.Fatalf("the server sent %d bytes of DATA on a stream granted %d", got, granted)
				}
				if a.done() {
					break
				}
				if got < granted {
					t.Fatalf("the server stopped at %d of the %d bytes granted, its answer unfinished", got, granted)
				}
				if i > 1000 {
					t.Fatal("no end to the answer")
				}
				// Grant more: every third time by raising SETTINGS_INITIAL_WINDOW_SIZE.
				inc := int64(1 + i%9)
				if i%3 == 2 {
					iws += inc
					p.must(p.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(iws)}))
				} else {
					p.must(p.fr.WriteWindowUpdate(1, uint32(inc)))
				}
				granted += inc
			}
			got := &pb.PlaceResponse{}
			wantOK(t, p.answers[1], got)
			if !proto.Equal(got, want) {
				t.Errorf("answer %v, want %v", got, want)
			}
		})
	}
}

// TestFastSendFlowControlConnection checks that the answers of several
// streams together stay within the connection window (65535, raised only
// by the client's WINDOW_UPDATE(0)), use all of it while unfinished, come
// in DATA frames of at most 16 KiB (the client's SETTINGS_MAX_FRAME_SIZE;
// the answers are larger), resume in stream order, and reassemble into
// what a fresh core answers to the same requests in the same order.
func TestFastSendFlowControlConnection(t *testing.T) {
	leakcheck.Check(t)
	// Node ids of 200 bytes and 250 to 300 workers: answers of 50 to 60
	// KB, so that the first one leaves three waiting for window.
	reqs := []*pb.PlaceRequest{framePlaceRequest(64, 8, 300, 200), framePlaceRequest(64, 8, 250, 200),
		framePlaceRequest(64, 8, 280, 200), framePlaceRequest(64, 8, 260, 200)}
	ref := testBackend{}
	p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
	p.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	for i, req := range reqs {
		p.call(uint32(2*i+1), pb.Scheduler_Place_FullMethodName, grpcMessage(t, req))
	}
	granted := int64(defaultWindow)
	incs := []uint32{1, 1000, 16384, 30000, 7}
	for i := 0; ; i++ {
		p.sync()
		if p.dataBytes > granted {
			t.Fatalf("the server sent %d bytes of DATA on a connection granted %d", p.dataBytes, granted)
		}
		done := 0
		for i := range reqs {
			if p.answer(uint32(2*i + 1)).done() {
				done++
			}
		}
		if done == len(reqs) {
			break
		}
		if p.dataBytes < granted {
			t.Fatalf("the server stopped at %d of the %d bytes granted, with %d answers unfinished", p.dataBytes, granted, len(reqs)-done)
		}
		if i > 1000 {
			t.Fatal("no end to the answers")
		}
		inc := incs[i%len(incs)]
		p.must(p.fr.WriteWindowUpdate(0, inc))
		granted += int64(inc)
	}
	for i := 1; i < len(p.dataOrder); i++ {
		if p.dataOrder[i] < p.dataOrder[i-1] {
			t.Fatalf("DATA of stream %d after DATA of stream %d: answers not sent in stream order (%v)", p.dataOrder[i], p.dataOrder[i-1], p.dataOrder)
		}
	}
	for i, req := range reqs {
		a := p.answers[uint32(2*i+1)]
		got := &pb.PlaceResponse{}
		wantOK(t, a, got)
		want, err := ref.Place(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("stream %d: answer %v, want %v", 2*i+1, got, want)
		}
		if len(a.data) <= maxFrame {
			t.Errorf("stream %d: answer of %d bytes, want more than a frame's %d", 2*i+1, len(a.data), maxFrame)
		}
		for _, n := range a.frames {
			if n > maxFrame {
				t.Errorf("stream %d: DATA frame of %d bytes, above the client's SETTINGS_MAX_FRAME_SIZE", 2*i+1, n)
			}
		}
	}
}

// TestFastRecvFlowControl checks the receive side: a client that sends
// all the window the server granted (stream and connection, tracked from
// the server's WINDOW_UPDATEs) is never refused, the server never grants
// more than it was sent, and a client that sends past the connection
// window gets GOAWAY FLOW_CONTROL_ERROR. (No client can send past a
// stream window: the server gives half of it back as soon as it has
// read that much, so data's RST_STREAM FLOW_CONTROL_ERROR is
// unreachable, and is not tested.)
func TestFastRecvFlowControl(t *testing.T) {
	t.Run("a client that fills its windows is served", func(t *testing.T) {
		leakcheck.Check(t)
		p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
		p.handshake()
		// Two 3 MiB requests: each is more than a stream window (1 MiB),
		// both more than the connection's (4 MiB and a frame).
		msg := paddedStatusRequest(3 << 20)
		sent := map[uint32]int64{}
		var sentConn int64
		for _, id := range []uint32{1, 3} {
			p.must(p.headers(id, false, grpcHeaders(pb.Scheduler_Status_FullMethodName)))
			rest := msg
			for len(rest) > 0 {
				win := min(staticStreamWindow+p.streamGrant[id]-sent[id], p.connGrant-sentConn)
				if win <= 0 {
					// Used up: the server must have given some back.
					p.sync()
					if a := p.answers[id]; a != nil || p.goAway != nil {
						t.Fatalf("stream %d refused after %d bytes sent within its windows: %v, GOAWAY %v", id, sent[id], a, p.goAway)
					}
					if min(staticStreamWindow+p.streamGrant[id]-sent[id], p.connGrant-sentConn) <= 0 {
						t.Fatalf("stream %d: the server gave back no window after %d bytes (connection %d)", id, sent[id], sentConn)
					}
					continue
				}
				n := min(int64(len(rest)), win, maxFrame)
				p.must(p.fr.WriteData(id, n == int64(len(rest)), rest[:n]))
				rest = rest[n:]
				sent[id] += n
				sentConn += n
			}
			wantOK(t, p.await(id), &pb.StatusResponse{})
		}
		p.sync()
		for _, id := range []uint32{1, 3} {
			if p.streamGrant[id] > sent[id] {
				t.Errorf("stream %d: the server gave back %d bytes of window for %d sent", id, p.streamGrant[id], sent[id])
			}
		}
		if given := p.connGrant - connWindow(4<<20); given > sentConn {
			t.Errorf("the server gave back %d bytes of connection window for %d sent", given, sentConn)
		}
	})
	t.Run("DATA beyond the connection window", func(t *testing.T) {
		// The server gives window back as it reads (half a window at a
		// time), so its default windows cannot be overrun; this one is
		// cut to 1000 bytes above HTTP/2's initial window, so that the
		// client can run past it before any is given back.
		leakcheck.Check(t)
		p, served := newPipePeer(t, newFrameServer(t, Config{}), func(c *serverConn) { c.recvWin = defaultWindow + 1000 })
		p.handshake()
		if p.connGrant != defaultWindow+1000 {
			t.Fatalf("connection window %d, want %d", p.connGrant, defaultWindow+1000)
		}
		msg := paddedStatusRequest(100_000)
		p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Status_FullMethodName)))
		p.must(p.data(1, false, msg[:p.connGrant]))
		p.sync()
		if p.goAway != nil || p.answers[1] != nil {
			t.Fatalf("refused within the window: GOAWAY %v, answer %v", p.goAway, p.answers[1])
		}
		p.fr.WriteData(1, false, msg[p.connGrant:p.connGrant+1])
		p.waitClosed()
		if p.goAway == nil || p.goAway.code != http2.ErrCodeFlowControl {
			t.Fatalf("GOAWAY %v, want FLOW_CONTROL_ERROR", p.goAway)
		}
		<-served
	})
}

// TestFastWindowOverflow checks that a WINDOW_UPDATE that takes a send
// window above 2^31-1 is refused: on the connection with GOAWAY
// FLOW_CONTROL_ERROR, on a stream with RST_STREAM FLOW_CONTROL_ERROR
// (the connection goes on); up to 2^31-1 exactly is accepted.
func TestFastWindowOverflow(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{})
	t.Run("connection", func(t *testing.T) {
		p, served := newPipePeer(t, srv, nil)
		p.handshake()
		p.must(p.fr.WriteWindowUpdate(0, maxWindow-defaultWindow))
		p.sync()
		if p.goAway != nil {
			t.Fatalf("GOAWAY %v for a window of exactly 2^31-1", p.goAway)
		}
		p.must(p.fr.WriteWindowUpdate(0, 1))
		p.waitClosed()
		if p.goAway == nil || p.goAway.code != http2.ErrCodeFlowControl {
			t.Fatalf("GOAWAY %v, want FLOW_CONTROL_ERROR", p.goAway)
		}
		<-served
	})
	t.Run("stream", func(t *testing.T) {
		p, _ := newPipePeer(t, srv, nil)
		p.handshake()
		p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Status_FullMethodName)))
		p.must(p.fr.WriteWindowUpdate(1, maxWindow-defaultWindow))
		p.sync()
		if a := p.answers[1]; a != nil {
			t.Fatalf("stream refused for a window of exactly 2^31-1: %v", a.kinds)
		}
		p.must(p.fr.WriteWindowUpdate(1, 1))
		p.sync()
		if a := p.answers[1]; !a.onlyRST(http2.ErrCodeFlowControl) {
			t.Fatalf("answer %+v, want RST_STREAM FLOW_CONTROL_ERROR alone", a)
		}
		p.call(3, healthpb.Health_Check_FullMethodName, healthMessage)
		wantOK(t, p.await(3), &healthpb.HealthCheckResponse{})
	})
}

// TestFastRapidReset checks the defence against the rapid-reset attack
// (CVE-2023-44487): HEADERS and RST_STREAM(CANCEL) pairs on new streams
// get GOAWAY ENHANCE_YOUR_CALM after about calmLimit pairs (not
// before calmLimit/2) and the connection is closed, no stream
// answered.
func TestFastRapidReset(t *testing.T) {
	leakcheck.Check(t)
	p, served := newPipePeer(t, newFrameServer(t, Config{}), nil)
	p.handshake()
	place := grpcHeaders(pb.Scheduler_Place_FullMethodName)
	var pairs int
	for id := uint32(1); pairs < 3*calmLimit; id += 2 {
		if p.headers(id, false, place) != nil ||
			p.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
			break
		}
		pairs++
	}
	p.waitClosed()
	<-served
	if p.goAway == nil || p.goAway.code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("after %d pairs: GOAWAY %v, want ENHANCE_YOUR_CALM", pairs, p.goAway)
	}
	handled := int(p.goAway.lastID+1) / 2 // streams 1, 3, ..., lastID
	if handled < calmLimit/2 || handled > calmLimit+1 {
		t.Errorf("GOAWAY after %d pairs, want between %d and %d", handled, calmLimit/2, calmLimit+1)
	}
	if len(p.answers) > 0 || p.dataBytes > 0 {
		t.Errorf("%d streams answered", len(p.answers))
	}
}

// TestFastResetsWithCallsNotCalm checks that the calls a client makes
// pay for its wasted frames: callCredit-1 reset streams before each
// of calmLimit+100 health checks is never told to calm down, every
// call answered.
func TestFastResetsWithCallsNotCalm(t *testing.T) {
	leakcheck.Check(t)
	p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
	p.handshake()
	place := grpcHeaders(pb.Scheduler_Place_FullMethodName)
	calls := calmLimit + 100
	var ids []uint32
	id := uint32(1)
	for range calls {
		for range callCredit - 1 {
			p.must(p.headers(id, false, place))
			p.must(p.fr.WriteRSTStream(id, http2.ErrCodeCancel))
			id += 2
		}
		p.call(id, healthpb.Health_Check_FullMethodName, healthMessage)
		ids = append(ids, id)
		id += 2
	}
	p.sync()
	if p.goAway != nil {
		t.Fatalf("GOAWAY %v", p.goAway)
	}
	if len(p.answers) != calls {
		t.Fatalf("%d streams answered, want %d", len(p.answers), calls)
	}
	for _, id := range ids {
		wantOK(t, p.answers[id], &healthpb.HealthCheckResponse{})
	}
}

// TestFastMaxConcurrentStreams checks that with maxStreams streams
// open the next one is refused with RST_STREAM REFUSED_STREAM (its DATA
// then dropped, the connection kept), that an open one completed is
// still answered, and that the stream it frees can be used again.
func TestFastMaxConcurrentStreams(t *testing.T) {
	leakcheck.Check(t)
	p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
	p.handshake()
	id := uint32(1)
	for range maxStreams {
		p.must(p.headers(id, false, grpcHeaders(healthpb.Health_Check_FullMethodName)))
		id += 2
	}
	refused := id
	p.must(p.headers(refused, false, grpcHeaders(healthpb.Health_Check_FullMethodName)))
	p.sync()
	if a := p.answers[refused]; !a.onlyRST(http2.ErrCodeRefusedStream) {
		t.Fatalf("stream %d over the limit: answer %+v, want RST_STREAM REFUSED_STREAM", refused, a)
	}
	if len(p.answers) != 1 {
		t.Fatalf("%d streams answered, want only the refused one", len(p.answers))
	}
	p.must(p.data(refused, true, healthMessage))
	p.must(p.data(1, true, healthMessage))
	wantOK(t, p.await(1), &healthpb.HealthCheckResponse{})
	next := refused + 2
	p.call(next, healthpb.Health_Check_FullMethodName, healthMessage)
	wantOK(t, p.await(next), &healthpb.HealthCheckResponse{})
	p.sync()
	if p.goAway != nil || len(p.answers) != 3 {
		t.Fatalf("GOAWAY %v; %d answers, want 3", p.goAway, len(p.answers))
	}
}

// TestFastOversizedMessage checks that a request whose length prefix
// says more than MaxRecvMsgSize is answered ResourceExhausted as soon as
// the prefix is whole, before the rest is sent (trailers-only, then
// RST_STREAM NO_ERROR), that the rest is then dropped, that the
// connection serves the next call, and that a request of exactly
// MaxRecvMsgSize is served.
func TestFastOversizedMessage(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{MaxRecvMsgSize: 1000})
	for _, split := range []int{5, 3, 1} {
		t.Run(fmt.Sprintf("prefix split at %d", split), func(t *testing.T) {
			p, _ := newPipePeer(t, srv, nil)
			p.handshake()
			msg := paddedStatusRequest(2000)
			p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Status_FullMethodName)))
			p.must(p.fr.WriteData(1, false, msg[:split]))
			if split < 5 {
				p.sync()
				if a := p.answers[1]; a != nil {
					t.Fatalf("answered after %d bytes of the prefix: %v", split, a.kinds)
				}
				p.must(p.fr.WriteData(1, false, msg[split:5]))
			}
			p.sync()
			a := p.answers[1]
			if a == nil || !slices.Equal(a.kinds, []string{"trailers", "rst"}) || a.rst[0] != http2.ErrCodeNo {
				t.Fatalf("answer %+v, want trailers-only then RST_STREAM NO_ERROR", a)
			}
			if tr := a.trailers; tr[":status"] != "200" || tr["grpc-status"] != "8" || !strings.Contains(tr["grpc-message"], "larger than max") {
				t.Fatalf("trailers %v, want :status 200, grpc-status 8 (ResourceExhausted), a message saying larger than max", tr)
			}
			p.must(p.data(1, true, msg[5:]))
			p.call(3, pb.Scheduler_Status_FullMethodName, paddedStatusRequest(1000))
			wantOK(t, p.await(3), &pb.StatusResponse{})
			p.sync()
			if p.goAway != nil || len(p.answers) != 2 {
				t.Fatalf("GOAWAY %v, %d answers", p.goAway, len(p.answers))
			}
		})
	}
}

// TestFastProtocolErrors checks that frames no client may send end the
// connection with GOAWAY and the right error code, the GOAWAY last, and
// that a wrong preface gets the connection closed without a frame.
func TestFastProtocolErrors(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{})
	health := grpcHeaders(healthpb.Health_Check_FullMethodName)
	tests := []struct {
		name string
		send func(p *h2peer)
		want http2.ErrCode
	}{
		{"HEADERS on an even stream", func(p *h2peer) { p.headers(2, true, health) }, http2.ErrCodeProtocol},
		{"DATA on an idle stream", func(p *h2peer) { p.data(5, true, healthMessage) }, http2.ErrCodeProtocol},
		{"RST_STREAM on an idle stream", func(p *h2peer) { p.fr.WriteRSTStream(7, http2.ErrCodeCancel) }, http2.ErrCodeProtocol},
		{"frame longer than 16 KiB", func(p *h2peer) {
			p.headers(1, false, health)
			p.fr.WriteData(1, true, make([]byte, maxFrame+1))
		}, http2.ErrCodeFrameSize},
		{"HEADERS on a stream id lower than one used", func(p *h2peer) {
			p.call(5, healthpb.Health_Check_FullMethodName, healthMessage)
			p.await(5)
			p.headers(3, true, health)
		}, http2.ErrCodeProtocol},
		{"HEADERS on a stream id used", func(p *h2peer) {
			p.call(1, healthpb.Health_Check_FullMethodName, healthMessage)
			p.await(1)
			p.headers(1, true, health)
		}, http2.ErrCodeProtocol},
		{"HEADERS without END_STREAM on an open stream", func(p *h2peer) {
			p.headers(1, false, health)
			p.headers(1, false, health)
		}, http2.ErrCodeProtocol},
		{"PUSH_PROMISE", func(p *h2peer) {
			p.headers(1, false, health)
			p.fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: p.block(health), EndHeaders: true})
		}, http2.ErrCodeProtocol},
		{"CONTINUATION without HEADERS", func(p *h2peer) { p.fr.WriteContinuation(1, true, p.block(health)) }, http2.ErrCodeProtocol},
		{"SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1", func(p *h2peer) {
			p.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 31})
		}, http2.ErrCodeFlowControl},
		{"SETTINGS_MAX_FRAME_SIZE below 16 KiB", func(p *h2peer) {
			p.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: maxFrame - 1})
		}, http2.ErrCodeProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, served := newPipePeer(t, srv, nil)
			p.handshake()
			tt.send(p) // write errors are expected: the server may have closed
			p.waitClosed()
			<-served
			if p.goAway == nil || p.goAway.code != tt.want {
				t.Fatalf("GOAWAY %v, want %v", p.goAway, tt.want)
			}
			if len(p.afterGoAway) > 0 {
				t.Errorf("frames after GOAWAY: %v", p.afterGoAway)
			}
		})
	}
	t.Run("wrong preface", func(t *testing.T) {
		p, served := newPipePeer(t, srv, nil)
		go io.WriteString(p.nc, strings.Replace(http2.ClientPreface, "SM", "XX", 1)) // the server may stop reading
		if got := p.waitClosed(); len(got) > 0 {
			t.Errorf("the server answered a wrong preface with %v", got)
		}
		<-served
	})
}

// TestFastStreamErrors checks that a frame wrong for its stream only (a
// header name in upper case, a WINDOW_UPDATE of 0 on a stream) gets that
// stream reset with RST_STREAM PROTOCOL_ERROR, and that the connection
// serves the next call.
func TestFastStreamErrors(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{})
	health := healthpb.Health_Check_FullMethodName
	tests := []struct {
		name string
		send func(p *h2peer)
	}{
		{"upper-case header name", func(p *h2peer) {
			p.must(p.headers(1, true, grpcHeaders(health, hpack.HeaderField{Name: "X-Upper", Value: "1"})))
		}},
		{"WINDOW_UPDATE of 0 on a stream", func(p *h2peer) {
			p.must(p.headers(1, false, grpcHeaders(health)))
			p.fr.AllowIllegalWrites = true
			p.must(p.fr.WriteWindowUpdate(1, 0))
			p.fr.AllowIllegalWrites = false
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPipePeer(t, srv, nil)
			p.handshake()
			tt.send(p)
			if a := p.await(1); !a.onlyRST(http2.ErrCodeProtocol) {
				t.Fatalf("answer %+v, want RST_STREAM PROTOCOL_ERROR", a)
			}
			p.call(3, health, healthMessage)
			wantOK(t, p.await(3), &healthpb.HealthCheckResponse{})
			p.sync()
			if p.goAway != nil {
				t.Fatalf("GOAWAY %v", p.goAway)
			}
		})
	}
}

// TestFastGRPCSemantics checks the gRPC answers to requests that are
// not well-formed calls, or not allowed: each status code, and
// grpc-message's percent-encoding.
func TestFastGRPCSemantics(t *testing.T) {
	leakcheck.Check(t)
	place := pb.Scheduler_Place_FullMethodName
	health := healthpb.Health_Check_FullMethodName
	req := grpcMessage(t, framePlaceRequest(8, 4, 2, 8))
	hf := func(name, value string) hpack.HeaderField { return hpack.HeaderField{Name: name, Value: value} }
	flagged := func(flag byte) []byte {
		b := bytes.Clone(req)
		b[0] = flag
		return b
	}
	tests := []struct {
		name  string
		token string // the server's
		send  func(p *h2peer)
		// want is the HTTP status, grpc-status and what grpc-message
		// holds; status "0" answers must be whole answers.
		httpStatus, status, message string
	}{
		{"grpc-timeout 1n, message after", "", func(p *h2peer) {
			p.must(p.headers(1, false, grpcHeaders(place, hf("grpc-timeout", "1n"))))
			p.sync()
			p.must(p.data(1, true, req))
		}, "200", "4", ""},
		{"grpc-timeout 10S", "", func(p *h2peer) { p.call(1, place, req, hf("grpc-timeout", "10S")) }, "200", "0", ""},
		{"grpc-timeout abc", "", func(p *h2peer) { p.call(1, place, req, hf("grpc-timeout", "abc")) }, "200", "3", "grpc-timeout"},
		{"content-type text/plain", "", func(p *h2peer) { p.call(1, place, req, hf("content-type", "text/plain")) }, "415", "", ""},
		{"content-type application/grpc+proto", "", func(p *h2peer) { p.call(1, place, req, hf("content-type", "application/grpc+proto")) }, "200", "0", ""},
		{"unknown path", "", func(p *h2peer) { p.call(1, "/drover.v1.Scheduler/Nope", req) }, "200", "12", "unknown method /drover.v1.Scheduler/Nope"},
		{"telemetry stream", "", func(p *h2peer) { p.call(1, pb.Telemetry_Stream_FullMethodName, req) }, "200", "12", "-addr"},
		{"health watch", "", func(p *h2peer) { p.call(1, healthpb.Health_Watch_FullMethodName, healthMessage) }, "200", "12", "-addr"},
		{"grpc-encoding gzip", "", func(p *h2peer) { p.call(1, place, req, hf("grpc-encoding", "gzip")) }, "200", "12", "gzip"},
		{"grpc-encoding identity", "", func(p *h2peer) { p.call(1, place, req, hf("grpc-encoding", "identity")) }, "200", "0", ""},
		{"no message", "", func(p *h2peer) { p.must(p.headers(1, true, grpcHeaders(place))) }, "200", "3", "no request message"},
		{"empty DATA only", "", func(p *h2peer) { p.call(1, place, nil) }, "200", "3", "no request message"},
		{"two messages", "", func(p *h2peer) { p.call(1, place, append(bytes.Clone(req), req...)) }, "200", "3", "more than one request message"},
		{"message shorter than its prefix", "", func(p *h2peer) { p.call(1, place, req[:len(req)-1]) }, "200", "3", "ended after"},
		{"shorter than a prefix", "", func(p *h2peer) { p.call(1, place, req[:3]) }, "200", "3", "5-byte prefix"},
		{"compressed flag 2", "", func(p *h2peer) { p.call(1, place, flagged(2)) }, "200", "3", "compressed flag is 2"},
		{"compressed flag 1 without grpc-encoding", "", func(p *h2peer) { p.call(1, place, flagged(1)) }, "200", "3", "compressed"},
		{"malformed Place", "", func(p *h2peer) { p.call(1, place, grpcFrame([]byte{0xff})) }, "200", "3", ""},
		{"message in many frames", "", func(p *h2peer) {
			p.must(p.headers(1, false, grpcHeaders(place)))
			for i := range req {
				p.must(p.fr.WriteData(1, i == len(req)-1, req[i:i+1]))
			}
		}, "200", "0", ""},
		{"message ended by trailers", "", func(p *h2peer) {
			p.must(p.headers(1, false, grpcHeaders(place)))
			p.must(p.data(1, false, req))
			p.must(p.headers(1, true, []hpack.HeaderField{hf("x-trailer", "1")}))
		}, "200", "0", ""},
		{"wrong token", "s3cret", func(p *h2peer) { p.call(1, place, req, hf("authorization", "Bearer wrong")) }, "200", "16", "bearer token"},
		{"no token", "s3cret", func(p *h2peer) { p.call(1, place, req) }, "200", "16", "bearer token"},
		{"token without Bearer", "s3cret", func(p *h2peer) { p.call(1, place, req, hf("authorization", "s3cret")) }, "200", "16", "bearer token"},
		{"right token", "s3cret", func(p *h2peer) { p.call(1, place, req, hf("authorization", "Bearer s3cret")) }, "200", "0", ""},
		{"health check needs no token", "s3cret", func(p *h2peer) { p.call(1, health, healthMessage) }, "200", "0", ""},
		// "drover: unknown method /a%b\u00e9 x" percent-encoded by hand:
		// '%' is 0x25, é is 0xC3 0xA9, the space stays.
		{"grpc-message percent-encoded", "", func(p *h2peer) { p.call(1, "/a%b\u00e9 x", req) }, "200", "12", "drover: unknown method /a%25b%C3%A9 x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPipePeer(t, newFrameServer(t, Config{Token: tt.token}), nil)
			p.handshake()
			tt.send(p)
			a := p.await(1)
			if tt.status == "0" {
				var m proto.Message = &pb.PlaceResponse{}
				if strings.HasPrefix(tt.name, "health") {
					m = &healthpb.HealthCheckResponse{}
				}
				wantOK(t, a, m)
				return
			}
			if a.headers != nil || len(a.data) > 0 || a.trailers == nil {
				t.Fatalf("answer %v, want trailers-only", a.kinds)
			}
			tr := a.trailers
			if tr[":status"] != tt.httpStatus || tr["grpc-status"] != tt.status || !strings.Contains(tr["grpc-message"], tt.message) {
				t.Fatalf("trailers %v, want :status %s, grpc-status %q, grpc-message holding %q", tr, tt.httpStatus, tt.status, tt.message)
			}
			if tt.status != "" && tr["content-type"] != "application/grpc" {
				t.Errorf("content-type %q", tr["content-type"])
			}
		})
	}
	t.Run("method GET", func(t *testing.T) {
		p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
		p.handshake()
		p.must(p.headers(1, true, grpcHeaders(place, hf(":method", "GET"))))
		a := p.await(1)
		if !a.onlyRST(http2.ErrCodeProtocol) {
			t.Fatalf("answer %+v, want RST_STREAM PROTOCOL_ERROR", a)
		}
	})
}

// newTCPPeer serves the fast listener of srv on a loopback port and
// returns a peer connected to it, and a channel that receives Serve's
// error.
func newTCPPeer(t *testing.T, srv *Server) (*h2peer, <-chan error) {
	nc, served := dialFast(t, srv)
	return newH2Peer(t, nc), served
}

// dialFast serves the fast listener of srv on a loopback port and returns
// a connection to it, and a channel that receives Serve's error.
func dialFast(t *testing.T, srv *Server) (net.Conn, <-chan error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	nc, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return nc, served
}

// shutdown runs srv.Shutdown with a context of d on a goroutine of its
// own, and returns the channel that receives its error.
func shutdown(srv *Server, d time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	return done
}

// forced waits for a Shutdown whose context ended before its
// connections' calls did: it must return within d, with nil (the
// connections cut themselves off at the drain deadline) or the context's
// error (Shutdown closed them), whichever came first.
func forced(t *testing.T, shut <-chan error, d time.Duration) {
	t.Helper()
	select {
	case err := <-shut:
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown: %v, want nil or the deadline's error", err)
		}
	case <-time.After(d):
		t.Fatalf("Shutdown did not return within %v", d)
	}
}

// within waits for ch, failing the test after d, and when ch's error is
// not nil.
func within(t *testing.T, what string, ch <-chan error, d time.Duration) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s did not return in %v", what, d)
	}
}

// TestFastShutdown checks Shutdown with a fast connection: GOAWAY
// NO_ERROR naming the last stream begun, new streams refused, the begun
// one still answered, then the connection closed and Shutdown and
// ServeFast returning nil; an idle connection closed at once; and a
// client that never finishes its stream cut off when ctx ends.
func TestFastShutdown(t *testing.T) {
	req := framePlaceRequest(8, 4, 2, 8)
	t.Run("drains", func(t *testing.T) {
		leakcheck.Check(t)
		srv := newFrameServer(t, Config{})
		p, served := newTCPPeer(t, srv)
		p.handshake()
		p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Place_FullMethodName)))
		p.sync()
		shut := shutdown(srv, time.Minute)
		for p.goAway == nil {
			if p.recv() == nil {
				t.Fatal("closed without GOAWAY")
			}
		}
		if p.goAway.code != http2.ErrCodeNo || p.goAway.lastID != 1 {
			t.Fatalf("GOAWAY %v, want NO_ERROR with last stream 1", p.goAway)
		}
		p.must(p.headers(3, true, grpcHeaders(healthpb.Health_Check_FullMethodName)))
		p.sync()
		if a := p.answers[3]; !a.onlyRST(http2.ErrCodeRefusedStream) {
			t.Fatalf("stream after GOAWAY: %+v, want RST_STREAM REFUSED_STREAM", a)
		}
		select {
		case err := <-shut:
			t.Fatalf("Shutdown returned (%v) with a stream unfinished", err)
		default:
		}
		p.must(p.data(1, true, grpcMessage(t, req)))
		got := &pb.PlaceResponse{}
		wantOK(t, p.await(1), got)
		want, err := testBackend{}.Place(context.Background(), req)
		if err != nil || !proto.Equal(got, want) {
			t.Errorf("answer %v, want %v (%v)", got, want, err)
		}
		p.waitClosed()
		within(t, "Shutdown", shut, 2*time.Minute)
		within(t, "Serve", served, 2*time.Minute)
	})
	t.Run("idle connection", func(t *testing.T) {
		leakcheck.Check(t)
		srv := newFrameServer(t, Config{})
		p, served := newTCPPeer(t, srv)
		p.handshake()
		shut := shutdown(srv, time.Minute)
		p.waitClosed()
		if p.goAway == nil || p.goAway.code != http2.ErrCodeNo || p.goAway.lastID != 0 {
			t.Fatalf("GOAWAY %v, want NO_ERROR with last stream 0", p.goAway)
		}
		within(t, "Shutdown", shut, 2*time.Minute)
		within(t, "Serve", served, 2*time.Minute)
	})
	t.Run("client never finishes", func(t *testing.T) {
		leakcheck.Check(t)
		srv := newFrameServer(t, Config{})
		p, served := newTCPPeer(t, srv)
		p.handshake()
		p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Place_FullMethodName)))
		p.sync()
		start := time.Now()
		shut := shutdown(srv, 200*time.Millisecond)
		p.waitClosed()
		forced(t, shut, 2*time.Minute)
		if took := time.Since(start); took < 150*time.Millisecond {
			t.Errorf("Shutdown returned after %v, before its deadline", took)
		}
		if p.goAway == nil || p.goAway.code != http2.ErrCodeNo || p.goAway.lastID != 1 {
			t.Fatalf("GOAWAY %v, want NO_ERROR with last stream 1", p.goAway)
		}
		if a := p.answers[1]; a != nil {
			t.Errorf("stream 1 answered: %v", a.kinds)
		}
		within(t, "Serve", served, 2*time.Minute)
	})
}

// TestParseGRPCTimeout checks parseGRPCTimeout against values worked by
// hand from gRPC's HTTP/2 protocol (at most 8 digits, then H, M, S, m,
// u or n).
func TestParseGRPCTimeout(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1S", time.Second, true},
		{"100m", 100 * time.Millisecond, true},
		{"5M", 5 * time.Minute, true},
		{"3u", 3 * time.Microsecond, true},
		{"8n", 8, true},
		{"0n", 0, true},
		{"2H", 2 * time.Hour, true},
		{"99999999S", 99999999 * time.Second, true},
		// MaxInt64 ns / 3.6e12 ns per hour = 2562047.8 hours.
		{"2562047H", 2562047 * time.Hour, true},
		{"2562048H", math.MaxInt64, true},
		{"99999999H", math.MaxInt64, true},
		{"", 0, false},
		{"1", 0, false},
		{"S", 0, false},
		{"123456789S", 0, false}, // 9 digits
		{"1x", 0, false},
		{"-1S", 0, false},
		{"+1S", 0, false},
		{"1.5S", 0, false},
		{" 1S", 0, false},
		{"1s", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseGRPCTimeout(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseGRPCTimeout(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestEncodeGRPCMessage checks grpc-message's percent-encoding (bytes
// outside ' '..'~', and '%', as %XX in upper case) against values worked
// by hand, and its cut after maxMessageText bytes, which never
// splits an escape.
func TestEncodeGRPCMessage(t *testing.T) {
	long := strings.Repeat("a", maxMessageText)
	tests := []struct{ name, in, want string }{
		{"plain", "drover: no room", "drover: no room"},
		{"percent", "a%b", "a%25b"},
		{"utf-8", "é", "%C3%A9"},
		{"newline", "a\nb", "a%0Ab"},
		{"edges", " ~\x7f\x1f\x00", " ~%7F%1F%00"},
		{"empty", "", ""},
		{"cut", long + "bcd", long},
		{"an escape that would pass the cut", long[1:] + "%%", long[1:]},
		{"an escape that ends at the cut", long[3:] + "%%", long[3:] + "%25"},
	}
	for _, tt := range tests {
		if got := encodeGRPCMessage(tt.in); got != tt.want {
			t.Errorf("%s: encodeGRPCMessage(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// fuzzConn is the server's end of a fuzzed connection: it reads what the
// client wrote into one pipe and writes into another, drained by a
// goroutine, so that the server reads the client's input to its end
// however much it answers, and its writes never fail because the client
// closed its side.
type fuzzConn struct {
	net.Conn          // the client's pipe: reads and deadlines
	out      net.Conn // the drained pipe
}

func (c fuzzConn) Write(b []byte) (int, error) { return c.out.Write(b) }

func (c fuzzConn) Close() error {
	c.out.Close()
	return c.Conn.Close()
}

// fuzzSeeds returns client input (what follows the preface) for
// FuzzFastConn: calls, hostile sequences and frames of every kind.
func fuzzSeeds(tb testing.TB) [][]byte {
	place := grpcMessage(tb, framePlaceRequest(4, 4, 2, 8))
	health := grpcHeaders(healthpb.Health_Check_FullMethodName)
	script := func(write func(w *h2writer)) []byte {
		var b bytes.Buffer
		write(newH2Writer(&b))
		return b.Bytes()
	}
	return [][]byte{
		script(func(w *h2writer) {
			w.fr.WriteSettings()
			w.headers(1, false, grpcHeaders(pb.Scheduler_Place_FullMethodName))
			w.data(1, true, place)
		}),
		script(func(w *h2writer) {
			w.fr.WriteSettings()
			w.headers(1, false, health)
			w.data(1, true, healthMessage)
			w.headers(3, false, grpcHeaders(pb.Scheduler_Status_FullMethodName))
			w.data(3, true, grpcFrame(nil))
			w.headers(5, false, grpcHeaders(pb.Scheduler_Report_FullMethodName, hpack.HeaderField{Name: "grpc-timeout", Value: "1S"}))
			w.data(5, true, grpcMessage(tb, &pb.ReportRequest{}))
			w.fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		}),
		script(func(w *h2writer) {
			w.fr.WriteSettings()
			block := w.block(grpcHeaders(pb.Scheduler_Place_FullMethodName))
			for id := uint32(1); id < 40; id += 2 {
				w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true})
				w.fr.WriteRSTStream(id, http2.ErrCodeCancel)
			}
		}),
		script(func(w *h2writer) {
			w.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 7}, http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20})
			w.headers(1, false, grpcHeaders(pb.Scheduler_Place_FullMethodName))
			w.data(1, true, place)
			w.headers(3, false, health)
			w.data(3, true, healthMessage)
			w.fr.WriteWindowUpdate(1, 10)
			w.fr.WritePing(false, [8]byte{1})
			w.fr.WriteWindowUpdate(0, 100)
			w.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100})
			w.fr.WriteWindowUpdate(3, 1000)
			w.fr.WritePing(false, [8]byte{2})
			w.fr.WritePriority(1, http2.PriorityParam{StreamDep: 3, Weight: 7})
		}),
		script(func(w *h2writer) {
			w.fr.WriteSettings()
			block := w.block(grpcHeaders(pb.Scheduler_Place_FullMethodName, hpack.HeaderField{Name: "x-pad", Value: strings.Repeat("p", 100)}))
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block[:40]})
			w.fr.WriteContinuation(1, false, block[40:80])
			w.fr.WriteContinuation(1, true, block[80:])
			w.data(1, true, place)
		}),
		script(func(w *h2writer) {
			w.fr.WriteSettings()
			w.headers(1, false, grpcHeaders(pb.Scheduler_Status_FullMethodName))
			w.data(1, false, paddedStatusRequest(5000)[:5])
			w.fr.WriteDataPadded(1, true, []byte{1, 2, 3}, make([]byte, 20))
			w.headers(3, true, grpcHeaders("/x", hpack.HeaderField{Name: "grpc-timeout", Value: "1n"}))
		}),
	}
}

// FuzzFastConn feeds a fast connection arbitrary client bytes after the
// preface: whatever they are, serve must neither panic nor hang (it
// returns within 5 s of the input's end), and all it writes must parse
// as HTTP/2 frames.
func FuzzFastConn(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	srv := newFrameServer(f, Config{MaxRecvMsgSize: 4096})
	f.Fuzz(func(t *testing.T, in []byte) {
		cli, sc := net.Pipe()
		outR, outW := net.Pipe()
		conn := fuzzConn{Conn: sc, out: outW}
		c := srv.newServerConn(conn)
		var wg sync.WaitGroup
		var bad error
		wg.Go(func() {
			io.WriteString(cli, http2.ClientPreface)
			cli.Write(in)
			cli.Close()
		})
		wg.Go(func() {
			fr := http2.NewFramer(nil, outR)
			fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
			fr.SetMaxReadFrameSize(1<<24 - 1)
			for {
				if _, err := fr.ReadFrame(); err != nil {
					if !closedErr(err) {
						bad = err
						io.Copy(io.Discard, outR)
					}
					return
				}
			}
		})
		served := make(chan any, 1)
		go func() {
			defer func() {
				conn.Close()
				served <- recover()
			}()
			c.serve()
		}()
		select {
		case r := <-served:
			if r != nil {
				t.Fatalf("serve panicked: %v", r)
			}
		case <-time.After(time.Minute):
			t.Fatalf("serve did not return within a minute of the input's end")
		}
		wg.Wait()
		if bad != nil {
			t.Fatalf("the server wrote something that is not HTTP/2 frames: %v", bad)
		}
	})
}

// pipeListener hands out the server ends of net.Pipes (unbuffered: a
// write blocks until the other end reads).
type pipeListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{ch: make(chan net.Conn), done: make(chan struct{})}
}
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }
func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.ch <- s
	return c
}

// TestFastShutdownBlockedWriterPipe: a connection whose write blocks (a
// client that does not read) holds the write lock; Shutdown must still
// return once its ctx ends. It used to wait forever in goAway for the
// lock, holding the fast server's mutex, before it looked at ctx.
func TestFastShutdownBlockedWriterPipe(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{})
	lis := newPipeListener()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	cli := lis.dial()
	defer cli.Close()
	io.WriteString(cli, http2.ClientPreface) // the server then writes SETTINGS, which nobody reads
	time.Sleep(50 * time.Millisecond)
	forced(t, shutdown(srv, 200*time.Millisecond), 2*time.Minute)
	within(t, "Serve", served, 2*time.Minute)
}

// TestFastShutdownBlockedWriterTCP is the same over TCP: a client that
// sends calls with large answers and never reads.
func TestFastShutdownBlockedWriterTCP(t *testing.T) {
	leakcheck.Check(t)
	srv := newFrameServer(t, Config{})
	nc, served := dialFast(t, srv)
	defer nc.Close()
	msg := grpcMessage(t, framePlaceRequest(64, 8, 300, 200)) // ~60 KB answers
	go func() {
		w := newH2Writer(nc)
		io.WriteString(nc, http2.ClientPreface)
		w.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
		w.fr.WriteWindowUpdate(0, 1<<30)
		for id := uint32(1); id < 2*400; id += 2 {
			if w.headers(id, false, grpcHeaders(pb.Scheduler_Place_FullMethodName)) != nil || w.data(id, true, msg) != nil {
				return
			}
		}
	}()
	time.Sleep(2 * time.Second) // the client never reads: the server's writes fill the socket buffers
	forced(t, shutdown(srv, 200*time.Millisecond), 2*time.Minute)
	within(t, "Serve", served, 2*time.Minute)
}

// TestFastSettingsWindowOverflow: a SETTINGS_INITIAL_WINDOW_SIZE change
// that takes a stream's window above 2^31-1 is a connection error
// FLOW_CONTROL_ERROR (RFC 9113 6.9.2); it used to be added unchecked.
func TestFastSettingsWindowOverflow(t *testing.T) {
	p, _ := newPipePeer(t, newFrameServer(t, Config{}), nil)
	p.handshake()
	p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Status_FullMethodName)))
	p.must(p.fr.WriteWindowUpdate(1, maxWindow-defaultWindow)) // stream window 2^31-1
	p.sync()
	p.must(p.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: defaultWindow + 1})) // +1: 2^31
	p.fr.WritePing(false, [8]byte{9})
	for f := p.recv(); f != nil; f = p.recv() {
		if f.typ == http2.FramePing {
			t.Fatalf("SETTINGS ACKed (%d ACKs), no GOAWAY: the stream's window is now 2^31, want GOAWAY FLOW_CONTROL_ERROR", p.settingsAcks)
		}
	}
}

// TestFastHeadersAfterServerReset: frames a client sent on a stream
// before it saw the server's RST_STREAM are ignored (RFC 9113 5.1); a
// trailers HEADERS in flight used to end the whole connection with
// GOAWAY PROTOCOL_ERROR.
func TestFastHeadersAfterServerReset(t *testing.T) {
	p, _ := newPipePeer(t, newFrameServer(t, Config{MaxRecvMsgSize: 1000}), nil)
	p.handshake()
	msg := paddedStatusRequest(2000)
	p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Status_FullMethodName)))
	p.must(p.fr.WriteData(1, false, msg[:5]))                                // answered 8, RST_STREAM NO_ERROR
	p.headers(1, true, []hpack.HeaderField{{Name: "x-trailer", Value: "1"}}) // sent before the RST arrived
	p.fr.WritePing(false, [8]byte{9})
	for f := p.recv(); f != nil; f = p.recv() {
		if f.typ == http2.FramePing {
			return
		}
	}
	t.Fatalf("the connection ended with GOAWAY %v (%q) for a HEADERS on a stream the server had just reset", p.goAway.code, p.goAway.debug)
}

// TestFastGoAwayBeforeServe: Shutdown reaching a connection whose
// goroutine has not yet started serve (ServeFast registers it, then
// starts the goroutine) ends it at once. goAway's SetDeadline(now) used
// to be overwritten by serve's handshake deadline, and serve waited
// HandshakeTimeout for a silent client.
func TestFastGoAwayBeforeServe(t *testing.T) {
	srv := newFrameServer(t, Config{HandshakeTimeout: time.Hour})
	cli, sc := net.Pipe()
	defer cli.Close()
	c := srv.newServerConn(sc)
	c.goAway(time.Time{})
	done := make(chan struct{})
	go func() { c.serve(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a bound a loaded machine cannot reach, short of the timeout
		sc.Close()
		t.Fatal("serve still waits for the preface after GOAWAY (until HandshakeTimeout)")
	}
}

// TestFastGoAwayKeepsLastID: a later GOAWAY does not raise the last
// stream id (RFC 9113 6.8); fail() used to send the highest id seen,
// which counts streams refused while draining. (absorb fails on a GOAWAY
// that raises it.)
func TestFastGoAwayKeepsLastID(t *testing.T) {
	srv := newFrameServer(t, Config{})
	p, _ := newTCPPeer(t, srv)
	p.handshake()
	p.must(p.headers(1, false, grpcHeaders(pb.Scheduler_Place_FullMethodName)))
	p.sync()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	for p.goAway == nil {
		p.recv()
	}
	p.must(p.headers(3, true, grpcHeaders(healthpb.Health_Check_FullMethodName))) // refused
	p.sync()
	p.fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: p.block(grpcHeaders("/x")), EndHeaders: true})
	p.waitClosed() // absorb fails on a GOAWAY that raises the last stream id
	_ = healthpb.Health_Check_FullMethodName
}

// TestFastIdleConnsLetGo: defaultMaxConns silent connections (preface
// and SETTINGS exchange sent, then nothing) are closed with GOAWAY after the idle timeout, so a
// well-behaved client is served after them. Without the timeout they held
// every slot for good and the next client was closed as it was accepted.
func TestFastIdleConnsLetGo(t *testing.T) {
	leakcheck.Check(t)
	// A long handshake timeout: only the idle one is under test.
	srv := newFrameServer(t, Config{IdleTimeout: 300 * time.Millisecond, HandshakeTimeout: time.Hour})
	lis := newPipeListener()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	var conns []net.Conn
	var goaways sync.WaitGroup
	var idle atomic.Int32
	for range defaultMaxConns {
		c := lis.dial()
		if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		goaways.Add(1)
		go func() {
			defer goaways.Done()
			fr := http2.NewFramer(io.Discard, c)
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return
				}
				if g, ok := f.(*http2.GoAwayFrame); ok && g.ErrCode == http2.ErrCodeNo && string(g.DebugData()) == "idle" {
					idle.Add(1)
				}
			}
		}()
		// The pipe is synchronous: the server's SETTINGS is read (above)
		// while these are written.
		w := http2.NewFramer(c, nil)
		if err := errors.Join(w.WriteSettings(), w.WriteSettingsAck()); err != nil {
			t.Fatal(err)
		}
	}
	goaways.Wait() // every silent connection was closed by the server
	if n := idle.Load(); n != defaultMaxConns {
		t.Errorf("%d of %d silent connections got GOAWAY idle", n, defaultMaxConns)
	}
	for _, c := range conns {
		c.Close()
	}
	p := newH2Peer(t, lis.dial())
	p.handshake()
	p.call(1, healthpb.Health_Check_FullMethodName, grpcMessage(t, &healthpb.HealthCheckRequest{}))
	wantOK(t, p.await(1), &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
	p.nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// TestFastWaitingAnswersBudget: answers waiting for flow-control window
// count toward the connection's buffered bytes, and while those are over
// the budget new streams are refused (REFUSED_STREAM). A client whose
// stream window is 0 gets answers of about 80 KB (300 workers on nodes
// with 200-byte ids) held for it, under a budget cut to 300 KB: the first
// refusal comes once the held answers pass the budget, not before; once
// the client opens its windows every held answer arrives whole, and a new
// call is served.
func TestFastWaitingAnswersBudget(t *testing.T) {
	leakcheck.Check(t)
	const budget = 300 << 10
	p, _ := newPipePeer(t, newFrameServer(t, Config{}), func(c *serverConn) { c.budget = budget })
	p.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	msg := grpcMessage(t, framePlaceRequest(64, 8, 300, 200))
	var calls, refused []uint32
	for id := uint32(1); len(refused) == 0 && id < 2*40; id += 2 {
		p.call(id, pb.Scheduler_Place_FullMethodName, msg)
		p.sync()
		if p.answers[id].onlyRST(http2.ErrCodeRefusedStream) {
			refused = append(refused, id)
		} else {
			calls = append(calls, id)
		}
	}
	if len(refused) == 0 {
		t.Fatalf("%d answers held, none refused", len(calls))
	}
	p.must(p.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: maxWindow}))
	p.must(p.fr.WriteWindowUpdate(0, maxWindow-defaultWindow))
	var size int
	for _, id := range calls {
		a := p.await(id)
		wantOK(t, a, new(pb.PlaceResponse))
		size = len(a.data) // the answers are the same size
	}
	// What is held is the DATA payload and the trailer block: a few bytes
	// more than size.
	if size < 50<<10 || len(calls)*(size+64) <= budget || (len(calls)-1)*size > budget {
		t.Errorf("refused after %d answers of %d bytes held; want the first whose sum passes %d", len(calls), size, budget)
	}
	next := refused[0] + 2
	p.call(next, healthpb.Health_Check_FullMethodName, healthMessage)
	wantOK(t, p.await(next), &healthpb.HealthCheckResponse{})
}
