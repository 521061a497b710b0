package agent

import (
	"slices"
	"sort"
	"sync"

	pb "github.com/drover-sched/drover/serve/proto"
)

// entry is one buffered message.
type entry struct {
	msg *pb.AgentMessage
	// at is when the message's content was taken (a sample's time, an
	// iteration report's arrival), in Unix nanoseconds.
	at int64
	// gap marks a Gap notice: it is never dropped.
	gap bool
	// sent marks a gap handed to a stream: it is no longer merged into,
	// so a resend carries what the first send carried.
	sent bool
}

// buffer holds the messages the server has not acknowledged, in sequence
// order, at most limit samples and iteration reports (gap notices come on
// top). It is safe for concurrent use: the sampler and the iteration
// endpoint push, the stream reads and acknowledges.
//
// Sequence numbers are assigned on push and grow by one. When the buffer
// is full, the oldest sample or iteration report makes room: it becomes a
// Gap notice with its sequence number, or joins the unsent Gap just before
// it. So a gap's sequence number is that of the last message it stands
// for, the sequence numbers the server sees still grow, and the ones it
// never sees are accounted for by the Gap that follows them.
type buffer struct {
	mu    sync.Mutex
	limit int
	q     []entry // in sequence order
	n     int     // samples and iteration reports in q (gaps excluded)
	seq   uint64  // last assigned sequence number
	acked uint64  // highest acknowledged sequence number

	// wake receives a value (non-blocking) after each push.
	wake chan struct{}

	sent, ackedN, dropped, rejected, reconnects uint64
}

func newBuffer(limit int) *buffer {
	return &buffer{limit: limit, wake: make(chan struct{}, 1)}
}

// push gives m the next sequence number and buffers it; at is the time of
// its content. It returns true when it dropped a message and started a new
// Gap notice (for the caller to log once per gap).
func (b *buffer) push(m *pb.AgentMessage, at int64) (newGap bool) {
	b.mu.Lock()
	b.seq++
	m.Seq = b.seq
	if b.n >= b.limit {
		newGap = b.dropOldest()
	}
	b.q = append(b.q, entry{msg: m, at: at})
	b.n++
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return newGap
}

// dropOldest replaces the oldest sample or iteration report with a Gap
// notice, or merges it into the unsent Gap just before it. It reports
// whether it started a new Gap. b.mu is held and b.n > 0.
func (b *buffer) dropOldest() bool {
	i := slices.IndexFunc(b.q, func(e entry) bool { return !e.gap })
	old := b.q[i]
	var samples, iters int64
	if old.msg.GetIterations() != nil {
		iters = 1
	} else {
		samples = 1
	}
	b.n--
	b.dropped++
	if i > 0 && !b.q[i-1].sent {
		prev := &b.q[i-1]
		g := prev.msg.GetGap()
		g.Samples += samples
		g.IterationReports += iters
		g.FromUnixNanos = min(g.FromUnixNanos, old.at)
		g.ToUnixNanos = max(g.ToUnixNanos, old.at)
		prev.msg.Seq = old.msg.Seq
		prev.at = g.ToUnixNanos
		b.q = slices.Delete(b.q, i, i+1)
		return false
	}
	b.q[i] = entry{
		msg: &pb.AgentMessage{Seq: old.msg.Seq, Body: &pb.AgentMessage_Gap{Gap: &pb.Gap{
			Samples: samples, IterationReports: iters, FromUnixNanos: old.at, ToUnixNanos: old.at,
		}}},
		at:  old.at,
		gap: true,
	}
	return true
}

// after returns the buffered messages with sequence numbers above seq, in
// order, and marks the gaps among them sent.
func (b *buffer) after(seq uint64) []*pb.AgentMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := sort.Search(len(b.q), func(i int) bool { return b.q[i].msg.Seq > seq })
	out := make([]*pb.AgentMessage, 0, len(b.q)-i)
	for j := i; j < len(b.q); j++ {
		if b.q[j].gap {
			b.q[j].sent = true
		}
		out = append(out, b.q[j].msg)
	}
	return out
}

// ack drops the messages with sequence numbers up to seq and returns how
// many it dropped. An acknowledgement beyond the last assigned sequence
// number (a confused server) counts as one up to it; ok is then false.
func (b *buffer) ack(seq uint64) (n int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ok = seq <= b.seq
	seq = min(seq, b.seq)
	if seq <= b.acked {
		return 0, ok
	}
	b.acked = seq
	n = sort.Search(len(b.q), func(i int) bool { return b.q[i].msg.Seq > seq })
	for _, e := range b.q[:n] {
		if !e.gap {
			b.n--
		}
	}
	b.ackedN += uint64(n)
	b.q = b.q[n:]
	if len(b.q) == 0 {
		b.q = nil
	}
	return n, ok
}

// reject drops the first unacknowledged message, which the server
// refused, and returns it (nil when there is none).
func (b *buffer) reject() *pb.AgentMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.q) == 0 {
		return nil
	}
	e := b.q[0]
	b.q = b.q[1:]
	if !e.gap {
		b.n--
	}
	b.rejected++
	return e.msg
}

// countSent adds n to the messages sent.
func (b *buffer) countSent(n int) {
	b.mu.Lock()
	b.sent += uint64(n)
	b.mu.Unlock()
}

// countReconnect adds one to the reconnections.
func (b *buffer) countReconnect() {
	b.mu.Lock()
	b.reconnects++
	b.mu.Unlock()
}

// stats returns the counters.
func (b *buffer) stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{
		Sent: b.sent, Acked: b.ackedN, Dropped: b.dropped, Rejected: b.rejected, Reconnects: b.reconnects,
		Buffered: len(b.q), LastSeq: b.seq, AckedSeq: b.acked,
	}
}
