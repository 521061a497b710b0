package loadgen_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/internal/loadgen"
	pb "github.com/drover-sched/drover/serve/proto"
)

// seen is a Scheduler that remembers each call's metadata and deadline,
// and sleeps hold before answering.
type seen struct {
	pb.UnimplementedSchedulerServer
	hold time.Duration

	mu        sync.Mutex
	auth      []string
	deadlines []time.Duration
}

func (s *seen) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	dl, ok := ctx.Deadline()
	s.mu.Lock()
	s.auth = append(s.auth, md.Get("authorization")...)
	if ok {
		s.deadlines = append(s.deadlines, time.Until(dl))
	}
	s.mu.Unlock()
	if s.hold > 0 {
		select {
		case <-time.After(s.hold):
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	return &pb.PlaceResponse{Placed: true, Policy: "seen"}, nil
}

// TestH2SendsMetadataAndDeadline: every request carries the extra header
// and its deadline (grpc-timeout) to the server.
func TestH2SendsMetadataAndDeadline(t *testing.T) {
	s := &seen{}
	lis, _ := listen(t, s)
	conns := dialH2(t, lis, 2, map[string]string{"authorization": "Bearer t0k"})
	res, err := loadgen.Run(context.Background(), loadgen.Config{H2: conns, Method: pb.Scheduler_Place_FullMethodName,
		Payload: payload(t), Rate: 2000, N: 50, Concurrency: 4, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 50 || len(res.Errors) != 0 {
		t.Fatalf("ok %d, errors %v; want 50, none", res.OK, res.Errors)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.auth) != 50 || len(s.deadlines) != 50 {
		t.Fatalf("%d authorization headers and %d deadlines, want 50 each", len(s.auth), len(s.deadlines))
	}
	for i := range s.auth {
		if s.auth[i] != "Bearer t0k" {
			t.Errorf("call %d: authorization %q", i, s.auth[i])
		}
		// The header carries the 10-minute timeout, less the moments (not
		// the minute a loaded machine under -race cannot take) it took to
		// arrive.
		if d := s.deadlines[i]; d <= 9*time.Minute || d > 10*time.Minute {
			t.Errorf("call %d: deadline in %v, want in (9m, 10m]", i, d)
		}
	}
}

// TestH2Deadline: a server slower than the deadline answers
// DeadlineExceeded (or, if it never answers, the client gives up a
// second after the deadline) and the run ends, long before the hour the
// server would hold each call.
func TestH2Deadline(t *testing.T) {
	lis, _ := listen(t, &seen{hold: time.Hour})
	conns := dialH2(t, lis, 1, nil)
	start := time.Now()
	res, err := loadgen.Run(context.Background(), loadgen.Config{H2: conns, Method: pb.Scheduler_Place_FullMethodName,
		Payload: payload(t), Rate: 100, N: 3, Concurrency: 4, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 3 || res.OK != 0 || res.Errors["DeadlineExceeded"] != 3 {
		t.Errorf("sent %d, ok %d, errors %v; want 3 DeadlineExceeded", res.Sent, res.OK, res.Errors)
	}
	if el := time.Since(start); el > time.Minute {
		t.Errorf("run took %v", el)
	}
}

// TestH2ServerGone: the server stops in the middle of a run; the
// requests in flight and the rest fail Unavailable, and Run returns.
func TestH2ServerGone(t *testing.T) {
	lis, srv := listen(t, &seen{hold: time.Millisecond})
	conns := dialH2(t, lis, 2, nil)
	time.AfterFunc(100*time.Millisecond, srv.Stop)
	res, err := loadgen.Run(context.Background(), loadgen.Config{H2: conns, Method: pb.Scheduler_Place_FullMethodName,
		Payload: payload(t), Rate: 1000, N: 400, Concurrency: 8, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var failed uint64
	for _, n := range res.Errors {
		failed += n
	}
	if res.Sent != 400 || res.OK+failed != 400 || res.OK < 10 || res.Errors["Unavailable"] < 100 {
		t.Errorf("sent %d, ok %d, errors %v; want 400 sent, answered or failed, most of the last 300 Unavailable", res.Sent, res.OK, res.Errors)
	}
}

// TestH2RefusesLargeMessage: a message over the server's 64 KiB window
// is refused before the run, naming the other client.
func TestH2RefusesLargeMessage(t *testing.T) {
	lis, _ := listen(t, &seen{})
	conns := dialH2(t, lis, 1, nil)
	_, err := loadgen.Run(context.Background(), loadgen.Config{H2: conns, Method: pb.Scheduler_Place_FullMethodName,
		Payload: make([]byte, 70000), Rate: 10, N: 1, Concurrency: 1})
	if err == nil || !strings.Contains(err.Error(), "grpc-go client") {
		t.Errorf("error %v, want a refusal naming the grpc-go client", err)
	}
}

// TestH2HandshakeFails: a peer that does not speak HTTP/2 is an error,
// not a hang.
func TestH2HandshakeFails(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply string
	}{
		{"http/1.1", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"},
		{"silent", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client, server := net.Pipe()
			go io.Copy(io.Discard, server)
			go func() {
				server.Write([]byte(tt.reply))
				if tt.reply != "" {
					server.Close()
				}
			}()
			c, err := loadgen.NewH2Conn(client, "x", false, nil, 200*time.Millisecond)
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "h2 handshake") {
				t.Errorf("error %v, want one naming the handshake", err)
			}
		})
	}
}

// FuzzH2Frames feeds arbitrary server output (after a valid SETTINGS
// frame, so the handshake passes) to the lean client's reader while a
// run sends on it: it must neither panic nor hang.
func FuzzH2Frames(f *testing.F) {
	frame := func(typ, flags byte, id uint32, p []byte) []byte {
		b := []byte{byte(len(p) >> 16), byte(len(p) >> 8), byte(len(p)), typ, flags}
		b = binary.BigEndian.AppendUint32(b, id)
		return append(b, p...)
	}
	f.Add([]byte{})
	f.Add(frame(0x6, 0, 0, make([]byte, 8)))                                             // PING
	f.Add(frame(0x8, 0, 0, []byte{0, 1, 0, 0}))                                          // WINDOW_UPDATE
	f.Add(frame(0x1, 0x5, 1, []byte{0x88}))                                              // HEADERS :status 200, END_STREAM
	f.Add(frame(0x1, 0x1, 1, []byte{0x88}))                                              // HEADERS without END_HEADERS
	f.Add(append(frame(0x1, 0x1, 1, []byte{0x88}), frame(0x9, 0x4, 1, []byte{0x40})...)) // CONTINUATION
	f.Add(frame(0x3, 0, 1, []byte{0, 0, 0, 7}))                                          // RST_STREAM
	f.Add(frame(0x0, 0x1, 1, []byte{0, 0, 0, 0, 1, 9}))                                  // DATA END_STREAM
	f.Add(frame(0x7, 0, 0, make([]byte, 8)))                                             // GOAWAY
	f.Add(frame(0x1, 0x2c, 3, []byte{0, 0, 0, 0, 0, 0x88}))                              // PADDED, PRIORITY
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		go func() {
			go io.Copy(io.Discard, server)
			var b bytes.Buffer
			b.Write(frame(0x4, 0, 0, nil))
			b.Write(data)
			server.Write(b.Bytes())
			time.Sleep(20 * time.Millisecond)
			server.Close()
		}()
		c, err := loadgen.NewH2Conn(client, "x", false, nil, time.Second)
		if err != nil {
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		res, err := loadgen.Run(ctx, loadgen.Config{H2: []*loadgen.H2Conn{c}, Method: "/m", Payload: []byte{1},
			Rate: 1000, N: 3, Concurrency: 2, Timeout: 50 * time.Millisecond})
		if err != nil {
			return
		}
		var n uint64
		for _, e := range res.Errors {
			n += e
		}
		if res.OK+n != res.Sent {
			t.Errorf("sent %d, ok %d, errors %v: some requests unaccounted for", res.Sent, res.OK, res.Errors)
		}
		if _, ok := res.Errors[codes.OK.String()]; ok {
			t.Errorf("an error counted as OK: %v", res.Errors)
		}
	})
}

// TestH2WriteFails: a server that hangs up once the run has begun fails
// every request exactly once, whether the client notices at the write or
// at the read (a request counted twice would panic the run's wait group
// or hang it).
func TestH2WriteFails(t *testing.T) {
	for range 20 {
		client, server := net.Pipe()
		go func() {
			read := make(chan struct{})
			go func() {
				io.ReadFull(server, make([]byte, 58)) // preface, SETTINGS, WINDOW_UPDATE
				io.ReadFull(server, make([]byte, 10)) // the SETTINGS ACK, the first request's start
				close(read)
			}()
			server.Write([]byte{0, 0, 0, 0x4, 0, 0, 0, 0, 0}) // SETTINGS
			<-read
			server.Close()
		}()
		c, err := loadgen.NewH2Conn(client, "x", false, nil, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var res loadgen.Result
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, err = loadgen.Run(context.Background(), loadgen.Config{H2: []*loadgen.H2Conn{c}, Method: "/m", Payload: []byte{1},
				Rate: 100000, N: 20, Concurrency: 4, Timeout: time.Second})
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("Run did not return within a minute")
		}
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 20 || res.OK != 0 || res.Errors["Unavailable"] != 20 {
			t.Fatalf("sent %d, ok %d, errors %v; want 20 sent, 20 Unavailable", res.Sent, res.OK, res.Errors)
		}
	}
}
