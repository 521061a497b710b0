package agent_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/serve/agent"
	pb "github.com/drover-sched/drover/serve/proto"
)

// t0 is the fake clock's start: the fixtures' first sample time.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeClock is a Clock whose ticks the test sends and whose time it sets.
// After records the waits asked for and fires after at most a
// millisecond, so a reconnection backoff costs the test nothing.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
	ticks chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: t0, ticks: make(chan time.Time)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return time.After(min(d, time.Millisecond))
}

func (c *fakeClock) NewTicker(time.Duration) agent.Ticker { return fakeTicker{c.ticks} }

// tick makes the agent sample at t (and sets the clock to t).
func (c *fakeClock) tick(tb testing.TB, t time.Time) {
	tb.Helper()
	c.set(t)
	select {
	case c.ticks <- t:
	case <-time.After(time.Minute): // a loaded machine under -race cannot take this long
		tb.Fatalf("tick %v: the sampler is not listening", t)
	}
}

type fakeTicker struct{ c chan time.Time }

func (f fakeTicker) C() <-chan time.Time { return f.c }
func (f fakeTicker) Stop()               {}

// telemetry is a fake Telemetry server. It records every message, applies
// those above the highest applied so far and up to ackUpTo, and
// acknowledges the highest applied, keeping it across restarts (as
// serve/state keeps it per agent). It refuses an iteration report for job
// "poison" as invalid, the hello of node "bad-hello" as invalid and that
// of node "no-entry" as not permitted.
type telemetry struct {
	pb.UnimplementedTelemetryServer
	msgs chan *pb.AgentMessage

	mu         sync.Mutex
	ackUpTo    uint64
	applied    uint64
	streams    int
	superseded bool // the "supersede" report was refused once (Aborted)
}

func (s *telemetry) setAckUpTo(n uint64) {
	s.mu.Lock()
	s.ackUpTo = n
	s.mu.Unlock()
}

func (s *telemetry) Stream(st pb.Telemetry_StreamServer) error {
	s.mu.Lock()
	s.streams++
	s.mu.Unlock()
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		s.msgs <- m
		switch m.GetHello().GetNodeId() {
		case "bad-hello":
			return status.Error(codes.InvalidArgument, "state: hello.nic_gbps: NaN, want a finite value >= 0")
		case "no-entry":
			return status.Error(codes.PermissionDenied, "not this node")
		}
		if m.GetIterations().GetJobId() == "poison" {
			return status.Error(codes.InvalidArgument, "iterations.job_id: poison")
		}
		if m.GetIterations().GetJobId() == "supersede" {
			s.mu.Lock()
			first := !s.superseded
			s.superseded = true
			s.mu.Unlock()
			if first {
				return status.Error(codes.Aborted, "state: agent superseded by a newer agent of the node")
			}
		}
		s.mu.Lock()
		if m.Seq > s.applied && m.Seq <= s.ackUpTo {
			s.applied = m.Seq // as serve/state: a resend at or below is skipped
		}
		ack := &pb.AgentAck{AckedSeq: s.applied, StaleAfterS: 60}
		s.mu.Unlock()
		if err := st.Send(ack); err != nil {
			return err
		}
	}
}

// harness runs a fake server on bufconn that the test can stop and
// restart, and an agent dialing it.
type harness struct {
	srv   *telemetry
	clock *fakeClock
	log   *syncBuffer

	mu   sync.Mutex
	lis  *bufconn.Listener
	grpc *grpc.Server
}

func newHarness(t *testing.T) *harness {
	h := &harness{
		srv:   &telemetry{msgs: make(chan *pb.AgentMessage, 1000), ackUpTo: math.MaxUint64},
		clock: newFakeClock(),
		log:   &syncBuffer{},
	}
	t.Cleanup(h.stop)
	return h
}

// start starts (or restarts) the server.
func (h *harness) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lis = bufconn.Listen(1 << 20)
	h.grpc = grpc.NewServer()
	pb.RegisterTelemetryServer(h.grpc, h.srv)
	go h.grpc.Serve(h.lis)
}

// stop stops the server, breaking the agent's stream.
func (h *harness) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.grpc != nil {
		h.grpc.Stop()
		h.grpc, h.lis = nil, nil
	}
}

func (h *harness) dial(ctx context.Context, _ string) (net.Conn, error) {
	h.mu.Lock()
	lis := h.lis
	h.mu.Unlock()
	if lis == nil {
		return nil, errors.New("fake server down")
	}
	return lis.DialContext(ctx)
}

// config returns an agent config for the harness, sampling root.
func (h *harness) config(root string) agent.Config {
	return agent.Config{
		Server:      "passthrough:///telemetry",
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(h.dial), grpc.WithTransportCredentials(insecure.NewCredentials())},
		NodeID:      "node-a",
		AgentID:     "agent-1",
		Root:        root,
		Rack:        agent.RackUnknown,
		Clock:       h.clock,
		Logger:      slog.New(slog.NewTextHandler(h.log, nil)),
		GPU:         noGPUs{},
		MinBackoff:  time.Millisecond,
		MaxBackoff:  10 * time.Millisecond,
	}
}

// run starts the agent; the returned function stops it and waits.
func (h *harness) run(t *testing.T, cfg agent.Config) (*agent.Agent, func()) {
	t.Helper()
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return a, stop
}

// next returns the next message the server received.
func (h *harness) next(t *testing.T) *pb.AgentMessage {
	t.Helper()
	select {
	case m := <-h.srv.msgs:
		return m
	case <-time.After(time.Minute): // a loaded machine under -race cannot take this long
		t.Fatalf("no message within a minute; log:\n%s", h.log)
		return nil
	}
}

// noMore checks that the server received nothing more for a moment.
func (h *harness) noMore(t *testing.T) {
	t.Helper()
	select {
	case m := <-h.srv.msgs:
		t.Fatalf("unexpected message %v", m)
	case <-time.After(20 * time.Millisecond):
	}
}

// noGPUs is a GPU source for tests: no GPUs, and it says so.
type noGPUs struct{}

func (noGPUs) Read(time.Time) ([]*pb.GPUReading, error) { return nil, nil }
func (noGPUs) DescribeGPUs() agent.GPUInfo              { return agent.GPUInfo{Note: "test: no GPUs"} }

// syncBuffer is a bytes.Buffer safe for the logger's and the test's use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, failing after a minute (which a
// loaded machine under -race cannot take).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// fixtureRoot returns a directory holding a copy of
// testdata/<node>/<snap>; useSnapshot replaces its files.
func fixtureRoot(t *testing.T, node, snap string) string {
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, node, snap)
	return root
}

func useSnapshot(t *testing.T, root, node, snap string) {
	t.Helper()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", node, snap))); err != nil {
		t.Fatal(err)
	}
}
