package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/drover-sched/drover/serve/proto"
)

// streamLoop keeps a stream open until ctx ends, waiting a jittered
// exponential backoff between attempts. A stream that got an
// acknowledgement resets the backoff. It returns nil when ctx ends, and
// the server's refusal when it refused the agent itself (refused): the
// same hello and credentials would be refused again, for ever.
func (a *Agent) streamLoop(ctx context.Context, client pb.TelemetryClient, hello *pb.AgentHello) error {
	failures := 0
	for n := 0; ; n++ {
		acked, err := a.stream(ctx, client, hello, n > 0)
		if ctx.Err() != nil {
			return nil
		}
		if refused(err, acked) {
			a.log.Error("the server refused this agent; stopping", "server", a.cfg.Server, "err", err)
			return fmt.Errorf("agent: server %s refused the agent: %w", a.cfg.Server, err)
		}
		superseded := status.Code(err) == codes.Aborted
		if acked && !superseded {
			failures = 0
		}
		if superseded {
			// Another agent of this node said hello after this one (a
			// rolling update running the old pod beside the new one):
			// coming back at once would supersede it in turn, and the two
			// would take the node from each other at every reconnection.
			// Wait the longest backoff; the old pod is usually gone by then.
			failures = 62
			a.log.Warn("superseded by another agent of this node", "err", err)
		}
		if status.Code(err) == codes.InvalidArgument && acked {
			// The server acknowledged the hello and every message up to
			// the one it refused, the first unacknowledged one: resending
			// it would fail again, so it goes.
			if m := a.buf.reject(); m != nil {
				a.log.Error("the server refused a message; it is dropped", "seq", m.Seq, "err", err)
			}
		}
		d := a.backoff(failures)
		failures++
		a.log.Warn("telemetry stream failed; reconnecting", "server", a.cfg.Server, "err", err, "in", d,
			"unacknowledged", a.buf.stats().Buffered)
		select {
		case <-ctx.Done():
			return nil
		case <-a.cfg.Clock.After(d):
		}
	}
}

// refused reports whether a stream's error is the server refusing the
// agent rather than a failure worth a reconnection: its hello
// (InvalidArgument before any acknowledgement: the server acknowledges
// the hello before it reads the next message, so a refusal after an
// acknowledgement is one message's, which streamLoop drops) or its
// credentials (Unauthenticated, PermissionDenied: the token is read once,
// at start).
func refused(err error, acked bool) bool {
	switch status.Code(err) {
	case codes.InvalidArgument:
		return !acked
	case codes.Unauthenticated, codes.PermissionDenied:
		return true
	}
	return false
}

// backoff returns the wait before the reconnection that follows the given
// number of consecutive failures: base = MinBackoff·2^failures capped at
// MaxBackoff, jittered uniformly in [base/2, base] and never below
// MinBackoff ("equal jitter"), so agents that lost the server together do
// not return together.
func (a *Agent) backoff(failures int) time.Duration {
	lo, hi := a.cfg.MinBackoff, a.cfg.MaxBackoff
	base := lo
	for range min(failures, 62) {
		if base >= hi/2 {
			base = hi
			break
		}
		base *= 2
	}
	base = min(base, hi)
	d := base/2 + time.Duration(a.rng.Int64N(int64(base/2)+1))
	return max(d, lo)
}

// errStopped ends a stream when the agent stops.
var errStopped = errors.New("agent: stopping")

// stream runs one stream: the hello, every unacknowledged message in
// sequence order, then new messages as they are buffered, while a
// goroutine reads the acknowledgements. It returns when the stream fails
// or ctx ends, reporting whether any acknowledgement arrived.
func (a *Agent) stream(ctx context.Context, client pb.TelemetryClient, hello *pb.AgentHello, reconnect bool) (gotAck bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := client.Stream(sctx)
	if err != nil {
		return false, err
	}
	recvDone := make(chan struct{})
	var recvErr error
	var acked atomic.Bool
	go func() {
		defer close(recvDone)
		for {
			ack, err := st.Recv()
			if err != nil {
				recvErr = err
				return
			}
			acked.Store(true)
			a.onAck(ack)
		}
	}()
	// fail ends the stream after a send error: the receiver reports why
	// the stream ended (a send error is io.EOF then).
	fail := func(sendErr error) (bool, error) {
		if errors.Is(sendErr, io.EOF) {
			<-recvDone
		} else {
			cancel()
			<-recvDone
		}
		if recvErr != nil && (errors.Is(sendErr, io.EOF) || ctx.Err() != nil) {
			return acked.Load(), recvErr
		}
		return acked.Load(), sendErr
	}
	defer func() {
		cancel()
		<-recvDone
		a.connected.Store(false)
	}()

	if err := st.Send(&pb.AgentMessage{Seq: 0, Body: &pb.AgentMessage_Hello{Hello: hello}}); err != nil {
		return fail(err)
	}
	a.buf.countSent(1)
	a.connected.Store(true)
	if reconnect {
		a.buf.countReconnect()
	}
	pending := a.buf.after(0)
	a.log.Info("telemetry stream open", "server", a.cfg.Server, "reconnect", reconnect, "resending", len(pending))
	var next uint64
	for {
		for _, m := range pending {
			if err := st.Send(m); err != nil {
				return fail(err)
			}
			next = m.Seq
			a.buf.countSent(1)
			if g := m.GetGap(); g != nil {
				a.log.Warn("sent a gap notice: messages dropped from the full buffer",
					"seq", m.Seq, "samples", g.Samples, "iteration_reports", g.IterationReports,
					"from", time.Unix(0, g.FromUnixNanos).UTC(), "to", time.Unix(0, g.ToUnixNanos).UTC())
			}
		}
		select {
		case <-ctx.Done():
			st.CloseSend()
			return acked.Load(), errStopped
		case <-recvDone:
			if recvErr == nil || errors.Is(recvErr, io.EOF) {
				return acked.Load(), errors.New("server closed the stream")
			}
			return acked.Load(), recvErr
		case <-a.buf.wake:
			pending = a.buf.after(next)
		}
	}
}

// onAck drops the acknowledged messages and checks the server's staleness
// limit against the sampling interval.
func (a *Agent) onAck(ack *pb.AgentAck) {
	if _, ok := a.buf.ack(ack.AckedSeq); !ok {
		a.log.Warn("server acknowledged a sequence number not yet sent", "acked_seq", ack.AckedSeq)
	}
	if s := ack.StaleAfterS; s > 0 && a.cfg.Interval.Seconds() >= s {
		a.staleMu.Lock()
		if a.staleSaid != s {
			a.staleSaid = s
			a.log.Warn("the sampling interval is not below the server's staleness limit: the node will look stale between samples",
				"interval", a.cfg.Interval, "stale_after_s", s)
		}
		a.staleMu.Unlock()
	}
}
