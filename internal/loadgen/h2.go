package loadgen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
)

// The lean client: gRPC unary calls written as HTTP/2 frames by hand on a
// plain connection (RFC 9113, and gRPC's HTTP/2 mapping), so that the
// generator's own CPU per request is a few system calls rather than
// grpc-go's client stack (which cost as much as the server it measured).
// A request is one HEADERS frame whose header block is encoded once
// without the dynamic table (every field "never indexed"), so the same
// bytes serve every stream, and the message in DATA frames; an answer is
// read by one goroutine per connection, which decodes the server's header
// blocks (the HPACK dynamic table must follow them) only for grpc-status.

// HTTP/2 frame types and flags used here.
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20

	settingInitialWindow = 0x4
	settingMaxFrameSize  = 0x5

	clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// defaultWindow is HTTP/2's initial flow-control window, of the
	// connection and of each stream until SETTINGS say otherwise.
	defaultWindow = 65535
	// ourStreamWindow is the window this client gives each answer stream,
	// and ourConnWindow the connection's (topped up as answers arrive).
	ourStreamWindow = 1 << 20
	ourConnWindow   = 1 << 30
	// maxReadFrame is the largest frame this client accepts (HTTP/2's
	// default SETTINGS_MAX_FRAME_SIZE, which it does not raise).
	maxReadFrame = 16384
)

// H2Conn is one HTTP/2 connection of the lean client: Run sends its
// requests through it when Config.H2 is set. Make it with NewH2Conn on a
// dialed connection; it is used by one Run at a time and may be reused
// by the next (stream ids continue). Close it when done.
type H2Conn struct {
	nc        net.Conn
	scheme    string
	authority string
	header    []hpack.HeaderField

	wmu sync.Mutex // serializes writes to nc
	out []byte     // the sender's frame buffer (the sender goroutine's own)

	mu        sync.Mutex
	nextID    uint32
	streams   map[uint32]inflight
	sendWin   int64 // the connection's send window
	streamWin int64 // each new stream's send window (the server's SETTINGS)
	maxFrame  int   // the server's SETTINGS_MAX_FRAME_SIZE
	err       error // set when the connection ended; every later send fails
	winc      chan struct{}

	settings chan struct{} // closed at the server's first SETTINGS
	done     chan struct{} // closed when the reader ends
}

// inflight is a sent request waiting for its answer.
type inflight struct {
	run  *h2run
	conn int           // the connection's index in the run (its result shard)
	due  time.Duration // when it was due, from the run's start
	sent time.Duration // when it was sent, likewise
}

// NewH2Conn starts an HTTP/2 connection on nc, which must speak HTTP/2
// from its first byte: a plaintext connection (h2c with prior knowledge,
// as gRPC servers accept), or a TLS connection that negotiated "h2". It
// sends the client preface and its settings, starts the goroutine that
// reads the server's frames, and waits up to timeout for the server's
// SETTINGS. authority is the :authority of every request (host:port);
// tls says which :scheme to send; header holds extra request metadata
// (e.g. "authorization"), lower-case names.
func NewH2Conn(nc net.Conn, authority string, tls bool, header map[string]string, timeout time.Duration) (*H2Conn, error) {
	c := &H2Conn{nc: nc, scheme: "http", authority: authority, nextID: 1, streams: map[uint32]inflight{},
		sendWin: defaultWindow, streamWin: defaultWindow, maxFrame: maxReadFrame,
		winc: make(chan struct{}, 1), settings: make(chan struct{}), done: make(chan struct{})}
	if tls {
		c.scheme = "https"
	}
	for k, v := range header {
		c.header = append(c.header, hpack.HeaderField{Name: k, Value: v, Sensitive: true})
	}
	b := []byte(clientPreface)
	b = appendFrameHeader(b, 12, frameSettings, 0, 0)
	b = binary.BigEndian.AppendUint16(b, settingInitialWindow)
	b = binary.BigEndian.AppendUint32(b, ourStreamWindow)
	b = binary.BigEndian.AppendUint16(b, settingMaxFrameSize)
	b = binary.BigEndian.AppendUint32(b, maxReadFrame)
	b = appendWindowUpdate(b, 0, ourConnWindow-defaultWindow)
	nc.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return nil, fmt.Errorf("loadgen: h2 handshake: %w", err)
	}
	nc.SetWriteDeadline(time.Time{})
	go c.read()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.settings:
		return c, nil
	case <-c.done:
		nc.Close()
		return nil, fmt.Errorf("loadgen: h2 handshake: %w", c.connErr())
	case <-t.C:
		nc.Close()
		<-c.done
		return nil, fmt.Errorf("loadgen: h2 handshake: no SETTINGS from the server within %v", timeout)
	}
}

// Close closes the connection and waits for its reader.
func (c *H2Conn) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}

func (c *H2Conn) connErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// headerBlock encodes the request headers of method with deadline
// timeout (0: none): no field uses the HPACK dynamic table, so the block
// is the same for every stream.
func (c *H2Conn) headerBlock(method string, timeout time.Duration) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	f := func(name, value string) {
		enc.WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: true})
	}
	f(":method", "POST")
	f(":scheme", c.scheme)
	f(":path", method)
	f(":authority", c.authority)
	f("content-type", "application/grpc")
	f("te", "trailers")
	f("user-agent", "drover-bench")
	if timeout > 0 {
		f("grpc-timeout", grpcTimeout(timeout))
	}
	for _, h := range c.header {
		f(h.Name, h.Value)
	}
	return buf.Bytes()
}

// grpcTimeout writes d as gRPC's grpc-timeout value: at most 8 digits
// and a unit, rounded up.
func grpcTimeout(d time.Duration) string {
	for _, u := range []struct {
		unit string
		d    time.Duration
	}{{"n", time.Nanosecond}, {"u", time.Microsecond}, {"m", time.Millisecond}, {"S", time.Second}, {"M", time.Minute}} {
		if n := (d + u.d - 1) / u.d; n <= 99_999_999 {
			return strconv.FormatInt(int64(n), 10) + u.unit
		}
	}
	return strconv.FormatInt(int64((d+time.Hour-1)/time.Hour), 10) + "H"
}

// fits says whether a message of size bytes fits a new stream's send
// window, and the connection's initial one (this client sends a message
// only when the whole of it fits, so a larger one would wait forever).
func (c *H2Conn) fits(size int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if w := min(c.streamWin, defaultWindow); int64(size) > w {
		return fmt.Errorf("loadgen: a %d-byte message exceeds the server's %d-byte flow-control window: use the grpc-go client", size, w)
	}
	return nil
}

// send writes one request (its header block and gRPC message) on a new
// stream, registered first so that its answer cannot overtake it. It
// waits for the connection's send window. It returns an error, and the
// caller must finish f, only when f was not sent (the connection had
// ended); once f is registered, a failed write fails the connection,
// which finishes f with the other streams, and send returns nil.
func (c *H2Conn) send(f inflight, block, msg []byte) error {
	size := int64(len(msg))
	c.mu.Lock()
	for c.err == nil && c.sendWin < size {
		c.mu.Unlock()
		<-c.winc
		c.mu.Lock()
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if size > c.streamWin {
		c.mu.Unlock()
		return fmt.Errorf("loadgen: a %d-byte message exceeds the server's %d-byte stream window (use the grpc client)", size, c.streamWin)
	}
	id := c.nextID
	c.nextID += 2
	c.sendWin -= size
	c.streams[id] = f
	maxFrame := c.maxFrame
	c.mu.Unlock()

	b := appendFrameHeader(c.out[:0], len(block), frameHeaders, flagEndHeaders, id)
	b = append(b, block...)
	for len(msg) > 0 {
		n := min(len(msg), maxFrame)
		flags := byte(0)
		if n == len(msg) {
			flags = flagEndStream
		}
		b = appendFrameHeader(b, n, frameData, flags, id)
		b = append(b, msg[:n]...)
		msg = msg[n:]
	}
	c.out = b
	c.write(b) // on error, fail has finished f
	return nil
}

// cancel resets the streams of run that are still waiting (at the end of
// a run whose deadline passed or whose context ended) and returns them.
func (c *H2Conn) cancel(run *h2run) []inflight {
	c.mu.Lock()
	var ids []uint32
	var fs []inflight
	for id, f := range c.streams {
		if f.run == run {
			ids = append(ids, id)
			fs = append(fs, f)
			delete(c.streams, id)
		}
	}
	c.mu.Unlock()
	var b []byte
	for _, id := range ids {
		b = appendFrameHeader(b, 4, frameRSTStream, 0, id)
		b = binary.BigEndian.AppendUint32(b, 0x8) // CANCEL
	}
	if len(b) > 0 {
		c.write(b) // the connection may have ended: nothing to reset then
	}
	return fs
}

func (c *H2Conn) write(b []byte) error {
	c.wmu.Lock()
	_, err := c.nc.Write(b)
	c.wmu.Unlock()
	if err != nil {
		c.fail(fmt.Errorf("loadgen: h2 write: %w", err))
	}
	return err
}

// fail ends the connection with err (the first error wins), fails every
// waiting stream (Unavailable) and wakes a sender waiting for window.
func (c *H2Conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	streams := c.streams
	c.streams = map[uint32]inflight{}
	c.mu.Unlock()
	for _, f := range streams {
		f.run.finish(f, codes.Unavailable)
	}
	select {
	case c.winc <- struct{}{}:
	default:
	}
	c.nc.Close()
}

// read is the connection's reader goroutine: it reads the server's frames
// until the connection ends, answering SETTINGS and PING, returning
// window, and finishing streams at their END_STREAM or RST_STREAM.
func (c *H2Conn) read() {
	defer close(c.done)
	br := bufio.NewReaderSize(c.nc, 64<<10)
	var (
		hdr       [9]byte
		buf       = make([]byte, maxReadFrame)
		ctrl      []byte // control frames to write
		consumed  int64  // DATA bytes not yet returned by WINDOW_UPDATE
		gotStatus = -1   // grpc-status of the header block being decoded
		httpOK    = true // its :status, when it has one, is 200
		cont      uint32 // stream of an unfinished header block (0: none)
		contEnd   bool   // that block ends its stream
		settings  bool
	)
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		switch f.Name {
		case "grpc-status":
			if n, err := strconv.Atoi(f.Value); err == nil && n >= 0 {
				gotStatus = n
			}
		case ":status":
			httpOK = f.Value == "200"
		}
	})
	// endBlock finishes a header block of stream id: its stream ends
	// when end, with the status the block carried.
	endBlock := func(id uint32, end bool) error {
		if err := dec.Close(); err != nil {
			return err
		}
		if end {
			code := codes.Code(gotStatus)
			switch {
			case !httpOK:
				code = codes.Unavailable
			case gotStatus < 0 || gotStatus > int(codes.Unauthenticated):
				code = codes.Unknown
			}
			c.finish(id, code)
		}
		gotStatus, httpOK = -1, true
		return nil
	}
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			c.fail(fmt.Errorf("loadgen: h2 read: %w", err))
			return
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := hdr[3], hdr[4]
		id := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		if n > maxReadFrame {
			c.fail(fmt.Errorf("loadgen: h2: a %d-byte frame, above the %d this client accepts", n, maxReadFrame))
			return
		}
		p := buf[:n]
		if _, err := io.ReadFull(br, p); err != nil {
			c.fail(fmt.Errorf("loadgen: h2 read: %w", err))
			return
		}
		if cont != 0 && (typ != frameContinuation || id != cont) {
			c.fail(errors.New("loadgen: h2: a header block interrupted"))
			return
		}
		var err error
		switch typ {
		case frameData:
			consumed += int64(n)
			if consumed >= ourStreamWindow {
				ctrl = appendWindowUpdate(ctrl, 0, uint32(consumed))
				consumed = 0
			}
			if flags&flagEndStream != 0 {
				c.finish(id, codes.Internal) // gRPC answers end with trailers
			}
		case frameHeaders:
			if flags&flagPadded != 0 {
				if len(p) < 1 || int(p[0]) >= len(p) {
					err = errors.New("bad padding")
					break
				}
				p = p[1 : len(p)-int(p[0])]
			}
			if flags&flagPriority != 0 {
				if len(p) < 5 {
					err = errors.New("short priority")
					break
				}
				p = p[5:]
			}
			if _, err = dec.Write(p); err != nil {
				break
			}
			if flags&flagEndHeaders == 0 {
				cont, contEnd = id, flags&flagEndStream != 0
				break
			}
			err = endBlock(id, flags&flagEndStream != 0)
		case frameContinuation:
			if cont == 0 {
				err = errors.New("CONTINUATION without HEADERS")
				break
			}
			if _, err = dec.Write(p); err != nil {
				break
			}
			if flags&flagEndHeaders != 0 {
				err = endBlock(cont, contEnd)
				cont = 0
			}
		case frameRSTStream:
			code := codes.Internal
			if len(p) == 4 {
				switch binary.BigEndian.Uint32(p) {
				case 0x7: // REFUSED_STREAM
					code = codes.Unavailable
				case 0x8: // CANCEL
					code = codes.Canceled
				}
			}
			c.finish(id, code)
		case frameSettings:
			if flags&flagAck != 0 {
				break
			}
			if len(p)%6 != 0 {
				err = errors.New("bad SETTINGS")
				break
			}
			c.mu.Lock()
			for q := p; len(q) >= 6; q = q[6:] {
				v := binary.BigEndian.Uint32(q[2:])
				switch binary.BigEndian.Uint16(q) {
				case settingInitialWindow:
					c.streamWin = int64(v)
				case settingMaxFrameSize:
					c.maxFrame = int(v)
				}
			}
			c.mu.Unlock()
			ctrl = appendFrameHeader(ctrl, 0, frameSettings, flagAck, 0)
			if !settings {
				settings = true
				close(c.settings)
			}
		case framePing:
			if flags&flagAck == 0 && len(p) == 8 {
				ctrl = appendFrameHeader(ctrl, 8, framePing, flagAck, 0)
				ctrl = append(ctrl, p...)
			}
		case frameGoAway:
			err = fmt.Errorf("GOAWAY %x", p)
		case frameWindowUpdate:
			if id == 0 && len(p) == 4 {
				c.mu.Lock()
				c.sendWin += int64(binary.BigEndian.Uint32(p) & 0x7fffffff)
				c.mu.Unlock()
				select {
				case c.winc <- struct{}{}:
				default:
				}
			}
		}
		if err != nil {
			c.fail(fmt.Errorf("loadgen: h2: %w", err))
			return
		}
		// Control frames go out once the buffered input is consumed, so a
		// burst of frames costs one write.
		if len(ctrl) > 0 && br.Buffered() == 0 {
			if c.write(ctrl) != nil {
				return
			}
			ctrl = ctrl[:0]
		}
	}
}

// finish ends stream id with code: its run records the answer.
func (c *H2Conn) finish(id uint32, code codes.Code) {
	c.mu.Lock()
	f, ok := c.streams[id]
	delete(c.streams, id)
	c.mu.Unlock()
	if ok { // not a stream a finished run gave up on
		f.run.finish(f, code)
	}
}

func appendFrameHeader(b []byte, n int, typ, flags byte, id uint32) []byte {
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	return binary.BigEndian.AppendUint32(b, id)
}

func appendWindowUpdate(b []byte, id, inc uint32) []byte {
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, id)
	return binary.BigEndian.AppendUint32(b, inc)
}
