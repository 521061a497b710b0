package state_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/internal/leakcheck"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// fakeClock is the server's clock, set by the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// startTelemetry serves st's Telemetry service over bufconn on clock and
// returns a client; everything stops at the test's end.
func startTelemetry(t *testing.T, st *state.Store, clock *fakeClock) pb.TelemetryClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	pb.RegisterTelemetryServer(srv, state.NewService(st, clock.Now))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(lis); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.GracefulStop()
		<-done
	})
	return pb.NewTelemetryClient(conn)
}

// agentStream is one telemetry stream of a test agent.
type agentStream struct {
	t      *testing.T
	s      pb.Telemetry_StreamClient
	cancel context.CancelFunc
}

func openStream(t *testing.T, c pb.TelemetryClient) *agentStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a stream a loaded machine under -race cannot outlast
	s, err := c.Stream(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	return &agentStream{t: t, s: s, cancel: cancel}
}

// send sends m and returns the ack, failing the test on an error.
func (a *agentStream) send(m *pb.AgentMessage) *pb.AgentAck {
	a.t.Helper()
	ack, err := a.try(m)
	if err != nil {
		a.t.Fatalf("seq %d: %v", m.GetSeq(), err)
	}
	return ack
}

// try sends m and returns the ack or the stream's error.
func (a *agentStream) try(m *pb.AgentMessage) (*pb.AgentAck, error) {
	if err := a.s.Send(m); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return a.s.Recv()
}

// close ends the stream from the agent's side and waits for the server's
// end of it.
func (a *agentStream) close() {
	a.t.Helper()
	if err := a.s.CloseSend(); err != nil {
		a.t.Fatal(err)
	}
	if m, err := a.s.Recv(); !errors.Is(err, io.EOF) {
		a.t.Errorf("after CloseSend: %v, %v; want EOF", m, err)
	}
	a.cancel()
}

func helloMsg(h *pb.AgentHello) *pb.AgentMessage {
	return &pb.AgentMessage{Body: &pb.AgentMessage_Hello{Hello: h}}
}

func TestServiceAcks(t *testing.T) {
	leakcheck.Check(t)
	st := newStore(t, state.Config{StaleAfter: 7 * time.Second})
	clock := &fakeClock{t: at(0)}
	c := startTelemetry(t, st, clock)

	a := openStream(t, c)
	want := []*pb.AgentAck{{AckedSeq: 0, StaleAfterS: 7}}
	got := []*pb.AgentAck{a.send(helloMsg(hello("n1", "a1")))}
	for i := 1; i <= 3; i++ {
		clock.Set(at(float64(i)))
		got = append(got, a.send(sampleMsg(uint64(i), at(float64(i)), 0.25*float64(i), 0.1)))
		want = append(want, &pb.AgentAck{AckedSeq: uint64(i), StaleAfterS: 7})
	}
	clock.Set(at(4))
	got = append(got, a.send(gapMsg(4, 2, 1)), a.send(itersMsg(5, "j", 0, 1, 1)))
	want = append(want, &pb.AgentAck{AckedSeq: 4, StaleAfterS: 7}, &pb.AgentAck{AckedSeq: 5, StaleAfterS: 7})
	a.close()
	if len(got) != len(want) {
		t.Fatalf("%d acks, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].GetAckedSeq() != want[i].AckedSeq || got[i].GetStaleAfterS() != want[i].StaleAfterS {
			t.Errorf("ack %d = %v, want %v", i, got[i], want[i])
		}
	}
	// Applied on the server's clock: seen at t0+4 s, stale 7 s later.
	v, ok := st.Node("n1", at(11))
	if !ok || v.Samples != 3 || v.Lost != 3 || v.LastSeq != 5 || v.Last.Usage.CPU != 0.75 || !v.Seen.Equal(at(4)) || v.Stale {
		t.Errorf("node %+v, %v; want 3 samples, 3 lost, seq 5, CPU 0.75, seen t0+4 s, fresh at t0+11 s", v, ok)
	}
	if v, _ := st.Node("n1", at(11.5)); !v.Stale {
		t.Error("node not stale 7.5 s after its last message")
	}
}

// TestServiceReconnect: an agent that reconnects with its id resends
// what it had not seen acknowledged; nothing is applied twice.
func TestServiceReconnect(t *testing.T) {
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	clock := &fakeClock{t: at(0)}
	c := startTelemetry(t, st, clock)

	a := openStream(t, c)
	a.send(helloMsg(hello("n1", "a1")))
	for i := 1; i <= 3; i++ {
		a.send(sampleMsg(uint64(i), at(float64(i)), 0.1*float64(i), 0))
	}
	a.close()

	// The agent lost acks 2 and 3: it resends them, then goes on.
	b := openStream(t, c)
	if ack := b.send(helloMsg(hello("n1", "a1"))); ack.GetAckedSeq() != 3 {
		t.Errorf("hello on reconnect acked %d, want 3", ack.GetAckedSeq())
	}
	for _, m := range []struct {
		msg  *pb.AgentMessage
		want uint64
	}{
		{sampleMsg(2, at(2), 0.2, 0), 3},
		{sampleMsg(3, at(3), 0.3, 0), 3},
		{sampleMsg(4, at(4), 0.4, 0), 4},
	} {
		if ack := b.send(m.msg); ack.GetAckedSeq() != m.want {
			t.Errorf("seq %d acked %d, want %d", m.msg.GetSeq(), ack.GetAckedSeq(), m.want)
		}
	}
	b.close()
	var times []time.Time
	for _, s := range st.History("n1") {
		times = append(times, s.Time)
	}
	if len(times) != 4 || !times[0].Equal(at(1)) || !times[1].Equal(at(2)) || !times[2].Equal(at(3)) || !times[3].Equal(at(4)) {
		t.Errorf("history times %v, want t0+1..4 s once each", times)
	}
	if v, _ := st.Node("n1", at(4)); v.Samples != 4 || v.LastSeq != 4 {
		t.Errorf("node %+v; want 4 samples, seq 4", v)
	}

	// A restarted agent (new id) starts again at 0.
	d := openStream(t, c)
	if ack := d.send(helloMsg(hello("n1", "a2"))); ack.GetAckedSeq() != 0 {
		t.Errorf("new agent's hello acked %d, want 0", ack.GetAckedSeq())
	}
	if ack := d.send(sampleMsg(1, at(5), 0.5, 0)); ack.GetAckedSeq() != 1 {
		t.Errorf("new agent's seq 1 acked %d, want 1", ack.GetAckedSeq())
	}
	d.close()
	if v, _ := st.Node("n1", at(5)); v.Samples != 5 || v.Info.AgentID != "a2" {
		t.Errorf("node %+v; want 5 samples from agent a2", v)
	}
}

// TestServiceErrors: a stream the store refuses ends with the status
// naming the field; what came before it stays applied.
func TestServiceErrors(t *testing.T) {
	leakcheck.Check(t)
	st := newStore(t, state.Config{MaxNodes: 1})
	c := startTelemetry(t, st, &fakeClock{t: at(0)})
	mustHello(t, st, hello("full", "a"), at(0))

	tests := []struct {
		name     string
		msgs     []*pb.AgentMessage // all but the last are acknowledged
		code     codes.Code
		contains string
	}{{
		name:     "first message not a hello",
		msgs:     []*pb.AgentMessage{sampleMsg(1, at(1), 0.5, 0)},
		code:     codes.InvalidArgument,
		contains: "hello",
	}, {
		name:     "bad hello",
		msgs:     []*pb.AgentMessage{helloMsg(hello("full", ""))},
		code:     codes.InvalidArgument,
		contains: "hello.agent_id",
	}, {
		name:     "too many nodes",
		msgs:     []*pb.AgentMessage{helloMsg(hello("other", "a"))},
		code:     codes.ResourceExhausted,
		contains: "too many nodes",
	}, {
		name:     "cpu_util 1.5",
		msgs:     []*pb.AgentMessage{helloMsg(hello("full", "a")), sampleMsg(1, at(1), 0.5, 0), sampleMsg(2, at(2), 1.5, 0)},
		code:     codes.InvalidArgument,
		contains: "sample.cpu_util",
	}, {
		name:     "second hello",
		msgs:     []*pb.AgentMessage{helloMsg(hello("full", "a")), helloMsg(hello("full", "a"))},
		code:     codes.InvalidArgument,
		contains: "hello",
	}, {
		name:     "seq 0",
		msgs:     []*pb.AgentMessage{helloMsg(hello("full", "a")), sampleMsg(0, at(1), 0.5, 0)},
		code:     codes.InvalidArgument,
		contains: "seq",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := openStream(t, c)
			last := len(tt.msgs) - 1
			for _, m := range tt.msgs[:last] {
				a.send(m)
			}
			ack, err := a.try(tt.msgs[last])
			s, _ := status.FromError(err)
			if err == nil || s.Code() != tt.code || !strings.Contains(s.Message(), tt.contains) {
				t.Errorf("last message: %v, %v; want %v naming %q", ack, err, tt.code, tt.contains)
			}
		})
	}
	// The valid sample before cpu_util 1.5 was applied, the bad one not.
	if v, _ := st.Node("full", at(2)); v.Samples != 1 || v.LastSeq != 1 || v.Last.Usage.CPU != 0.5 {
		t.Errorf("node %+v; want the one valid sample", v)
	}
	if _, ok := st.Node("other", at(2)); ok {
		t.Error("refused node registered")
	}
}

// TestServiceEmptyStream: a stream closed before its hello is no error.
func TestServiceEmptyStream(t *testing.T) {
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	a := openStream(t, startTelemetry(t, st, &fakeClock{t: at(0)}))
	a.close()
	if n := len(st.Nodes(at(0))); n != 0 {
		t.Errorf("%d nodes after an empty stream", n)
	}
}

// TestServiceConcurrentStreams runs several agents at once while the
// server overlays requests, as Place does.
func TestServiceConcurrentStreams(t *testing.T) {
	leakcheck.Check(t)
	const nodes, samples = 4, 50
	st := newStore(t, state.Config{})
	clock := &fakeClock{t: at(0)}
	c := startTelemetry(t, st, clock)
	ids := make([]string, nodes)
	streams := make([]*agentStream, nodes)
	for i := range nodes {
		ids[i] = fmt.Sprintf("n%d", i)
		streams[i] = openStream(t, c) // on the test goroutine: it may Fatal
	}
	var wg sync.WaitGroup
	errs := make(chan error, nodes)
	for i, a := range streams {
		wg.Go(func() {
			if _, err := a.try(helloMsg(hello(ids[i], "a"))); err != nil {
				errs <- err
				return
			}
			for s := 1; s <= samples; s++ {
				ack, err := a.try(sampleMsg(uint64(s), at(float64(s)), float64(i)/10, 0))
				if err != nil || ack.GetAckedSeq() != uint64(s) {
					errs <- fmt.Errorf("%s seq %d: %v, %v", ids[i], s, ack, err)
					return
				}
			}
			if err := a.s.CloseSend(); err != nil {
				errs <- err
			}
			if _, err := a.s.Recv(); !errors.Is(err, io.EOF) {
				errs <- fmt.Errorf("%s: %v, want EOF", ids[i], err)
			}
		})
	}
	for range 100 {
		load, free := make([]env.Usage, nodes), make([]int, nodes)
		st.Overlay(ids, load, free, at(1))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Node i's last sample has CPU i/10.
	load, free := make([]env.Usage, nodes), []int{8, 8, 8, 8}
	if stale, live := st.Overlay(ids, load, free, at(0)); stale != 0 || live != nodes {
		t.Errorf("Overlay: %d stale, %d live; want 0, %d", stale, live, nodes)
	}
	for i := range nodes {
		if load[i].CPU != float64(i)/10 {
			t.Errorf("%s: CPU %v, want %v", ids[i], load[i].CPU, float64(i)/10)
		}
	}
}

func TestNewServiceDefaultClock(t *testing.T) {
	// A nil clock is the real one: a hello is seen now, not at year 1.
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	pb.RegisterTelemetryServer(srv, state.NewService(st, nil))
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := time.Now()
	a := openStream(t, pb.NewTelemetryClient(conn))
	a.send(helloMsg(hello("n1", "a")))
	a.close()
	if v, _ := st.Node("n1", before); v.Seen.Before(before) || v.Seen.After(time.Now()) {
		t.Errorf("seen %v, want between %v and now", v.Seen, before)
	}
}

// TestServiceOverlappingAgents: two agents of one node stream at once
// (a rolling update of the agent's DaemonSet with surge runs the old pod
// beside the new one). The new agent's numbers start at 1; the old
// agent's later messages must not count against them.
func TestServiceOverlappingAgents(t *testing.T) {
	// The old agent's stream is refused with Aborted (Store.ApplyFrom: ErrSuperseded).
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	c := startTelemetry(t, st, &fakeClock{t: at(0)})
	old := openStream(t, c)
	old.send(helloMsg(hello("n1", "a1")))
	for i := 1; i <= 3; i++ {
		old.send(sampleMsg(uint64(i), at(float64(i)), 0.1, 0))
	}
	cur := openStream(t, c)
	if ack := cur.send(helloMsg(hello("n1", "a2"))); ack.GetAckedSeq() != 0 {
		t.Fatalf("a2's hello acked %d, want 0", ack.GetAckedSeq())
	}
	// The old agent's next message, whatever the server answers.
	old.try(sampleMsg(4, at(4), 0.1, 0))
	ack, err := cur.try(sampleMsg(1, at(5), 0.9, 0))
	if err != nil || ack.GetAckedSeq() != 1 {
		t.Errorf("a2's seq 1: ack %v, %v; want acked 1", ack, err)
	}
	if v, _ := st.Node("n1", at(5)); v.Last.Usage.CPU != 0.9 || !v.Last.Time.Equal(at(5)) {
		t.Errorf("n1's last sample %+v; want a2's seq 1 (CPU 0.9 at t0+5 s)", v.Last)
	}
	cur.close()
}

// TestServiceClose: Close ends the streams in progress with Unavailable
// and refuses new ones, so a graceful stop does not wait for agents.
func TestServiceClose(t *testing.T) {
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	svc := state.NewService(st, (&fakeClock{t: at(0)}).Now)
	pb.RegisterTelemetryServer(srv, svc)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewTelemetryClient(conn)

	live := openStream(t, c)
	live.send(helloMsg(hello("n1", "a")))
	live.send(sampleMsg(1, at(1), 0.5, 0))
	waiting := openStream(t, c) // opened, no hello yet

	svc.Close()
	svc.Close() // idempotent
	if _, err := live.s.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("stream in progress after Close: %v, want Unavailable", err)
	}
	if _, err := waiting.s.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("stream before its hello after Close: %v, want Unavailable", err)
	}
	// The streams are over: a graceful stop returns at once.
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Error("GracefulStop still waiting a minute after Close")
		srv.Stop()
		<-stopped
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if v, _ := st.Node("n1", at(2)); v.Samples != 1 || v.LastSeq != 1 {
		t.Errorf("node %+v; want the sample applied before Close", v)
	}
}

// TestServiceCloseRefusesNewStreams: after Close, a new stream's hello is
// refused, every time.
func TestServiceCloseRefusesNewStreams(t *testing.T) {
	// Stream checks for Close before each message, so a ready hello cannot win the race.
	leakcheck.Check(t)
	st := newStore(t, state.Config{})
	lis := bufconn.Listen(1 << 16)
	srv := grpc.NewServer()
	svc := state.NewService(st, (&fakeClock{t: at(0)}).Now)
	pb.RegisterTelemetryServer(srv, svc)
	go srv.Serve(lis)
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewTelemetryClient(conn)
	svc.Close()
	applied := 0
	for i := range 2000 {
		a := openStream(t, c)
		if _, err := a.try(helloMsg(hello(fmt.Sprintf("n%d", i), "a"))); status.Code(err) != codes.Unavailable {
			applied++
		}
		a.cancel()
	}
	if n := len(st.Nodes(at(0))); applied > 0 || n > 0 {
		t.Errorf("after Close, %d of 2000 new streams were not refused (%d nodes registered)", applied, n)
	}
}
