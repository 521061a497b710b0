package state

import (
	"errors"
	"io"
	"sync"
	"time"

	pb "github.com/drover-sched/drover/serve/proto"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Service is the Telemetry gRPC service over a Store: it applies each
// agent's stream and acknowledges what it applied.
type Service struct {
	pb.UnimplementedTelemetryServer
	st   *Store
	now  func() time.Time
	done chan struct{}
	once sync.Once
}

// NewService returns the Telemetry service of st; now is the server's
// clock (nil: time.Now).
func NewService(st *Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{st: st, now: now, done: make(chan struct{})}
}

// Close ends every stream in progress with Unavailable and refuses new
// ones, so that a server's graceful stop does not wait for agents' streams,
// which never end by themselves; the agents reconnect to the next server.
func (s *Service) Close() { s.once.Do(func() { close(s.done) }) }

// errClosing is the status a stream ends with when the service closes.
var errClosing = status.Error(codes.Unavailable, "state: server shutting down")

// Stream implements pb.TelemetryServer. The first message must be the
// hello; every later one is applied and acknowledged in order. A message
// the store refuses ends the stream with InvalidArgument naming the
// field; the agent's resend of it would be refused again, so the agent
// should log it and drop it.
func (s *Service) Stream(stream pb.Telemetry_StreamServer) error {
	// Recv runs on its own goroutine so that Close can end the stream
	// while it waits; it ends when the stream does.
	type recv struct {
		m   *pb.AgentMessage
		err error
	}
	// The handler waits on the stream's context too: the receive
	// goroutine may leave on the context's end without handing over its
	// error (select picks either when both are ready), and a handler that
	// waited for msgs alone would wait until the service closed (issue
	// 32: a goroutine per disconnected agent). When the handler returns,
	// gRPC ends the stream's context, which ends the receive goroutine.
	ctx := stream.Context()
	msgs := make(chan recv)
	go func() {
		for {
			m, err := stream.Recv()
			select {
			case msgs <- recv{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	next := func() (*pb.AgentMessage, error) {
		// A closed service ends the stream even when a message is ready
		// too (select would pick either).
		select {
		case <-s.done:
			return nil, errClosing
		default:
		}
		select {
		case r := <-msgs:
			return r.m, r.err
		case <-s.done:
			return nil, errClosing
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	first, err := next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	h := first.GetHello()
	if h == nil {
		return status.Error(codes.InvalidArgument, "state: the first message of a telemetry stream must be the hello")
	}
	seq, err := s.st.Hello(h, s.now())
	if err != nil {
		return toStatus(err)
	}
	stale := s.st.cfg.StaleAfter.Seconds()
	if err := stream.Send(&pb.AgentAck{AckedSeq: seq, StaleAfterS: stale}); err != nil {
		return err
	}
	node, agent := h.GetNodeId(), h.GetAgentId()
	for {
		m, err := next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		seq, err := s.st.ApplyFrom(node, agent, m, s.now())
		if err != nil {
			return toStatus(err)
		}
		if err := stream.Send(&pb.AgentAck{AckedSeq: seq, StaleAfterS: stale}); err != nil {
			return err
		}
	}
}

func toStatus(err error) error {
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrTooManyNodes):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, ErrSuperseded):
		return status.Error(codes.Aborted, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}
