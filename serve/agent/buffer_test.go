package agent

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	pb "github.com/drover-sched/drover/serve/proto"
)

// sampleAt returns a sample message taken at t (Unix nanoseconds).
func sampleAt(t int64) *pb.AgentMessage {
	return &pb.AgentMessage{Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{UnixNanos: t}}}
}

func itersAt() *pb.AgentMessage {
	return &pb.AgentMessage{Body: &pb.AgentMessage_Iterations{Iterations: &pb.JobIterations{JobId: "j"}}}
}

// describe renders messages as "s3" (sample, seq 3), "i4" (iteration
// report) and "g5[2s1i 10-30]" (gap: 2 samples, 1 report, times 10 to 30).
func describe(ms []*pb.AgentMessage) []string {
	var out []string
	for _, m := range ms {
		switch {
		case m.GetSample() != nil:
			out = append(out, fmt.Sprintf("s%d", m.Seq))
		case m.GetIterations() != nil:
			out = append(out, fmt.Sprintf("i%d", m.Seq))
		case m.GetGap() != nil:
			g := m.GetGap()
			out = append(out, fmt.Sprintf("g%d[%ds%di %d-%d]", m.Seq, g.Samples, g.IterationReports, g.FromUnixNanos, g.ToUnixNanos))
		}
	}
	return out
}

// contents returns the buffered messages without marking gaps sent.
func (b *buffer) contents() []*pb.AgentMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*pb.AgentMessage
	for _, e := range b.q {
		out = append(out, e.msg)
	}
	return out
}

func TestBuffer(t *testing.T) {
	// Each step: "s<t>" pushes a sample at t, "i<t>" a report at t,
	// "sent <seq>" takes the messages after seq as a stream would, "ack
	// <seq>" acknowledges; want is the buffer afterwards.
	type step struct {
		op   string
		arg  int64
		want []string
	}
	tests := []struct {
		name  string
		limit int
		steps []step
	}{
		{"acks drop the acknowledged", 4, []step{
			{"s", 10, []string{"s1"}},
			{"s", 20, []string{"s1", "s2"}},
			{"i", 25, []string{"s1", "s2", "i3"}},
			{"ack", 2, []string{"i3"}},
			{"ack", 1, []string{"i3"}}, // stale ack: nothing
			{"ack", 3, nil},
		}},
		{"overflow drops the oldest into one gap", 2, []step{
			{"s", 10, []string{"s1"}},
			{"i", 15, []string{"s1", "i2"}},
			{"s", 20, []string{"g1[1s0i 10-10]", "i2", "s3"}},
			{"s", 30, []string{"g2[1s1i 10-15]", "s3", "s4"}},
			{"s", 40, []string{"g3[2s1i 10-20]", "s4", "s5"}},
			{"ack", 3, []string{"s4", "s5"}},
		}},
		{"a sent gap is not merged into", 1, []step{
			{"s", 10, []string{"s1"}},
			{"s", 20, []string{"g1[1s0i 10-10]", "s2"}},
			{"sent", 0, []string{"g1[1s0i 10-10]", "s2"}},
			{"s", 30, []string{"g1[1s0i 10-10]", "g2[1s0i 20-20]", "s3"}},
			{"s", 40, []string{"g1[1s0i 10-10]", "g3[2s0i 20-30]", "s4"}},
			{"ack", 1, []string{"g3[2s0i 20-30]", "s4"}},
			{"ack", 4, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuffer(tt.limit)
			for i, s := range tt.steps {
				switch s.op {
				case "s":
					b.push(sampleAt(s.arg), s.arg)
				case "i":
					b.push(itersAt(), s.arg)
				case "sent":
					b.after(uint64(s.arg))
				case "ack":
					b.ack(uint64(s.arg))
				}
				if diff := cmp.Diff(s.want, describe(b.contents())); diff != "" {
					t.Fatalf("step %d (%s %d) (-want,+got):\n%s", i, s.op, s.arg, diff)
				}
			}
		})
	}
}

func TestBufferAfterAndStats(t *testing.T) {
	b := newBuffer(3)
	for i := range 5 {
		b.push(sampleAt(int64(i)), int64(i))
	}
	if diff := cmp.Diff([]string{"s4", "s5"}, describe(b.after(3))); diff != "" {
		t.Errorf("after(3) (-want,+got):\n%s", diff)
	}
	if n, ok := b.ack(9); n != 4 || ok {
		t.Errorf("ack(9) beyond the last seq: %d, %v; want 4 (all), false", n, ok)
	}
	want := Stats{Acked: 4, Dropped: 2, LastSeq: 5, AckedSeq: 5}
	if diff := cmp.Diff(want, b.stats()); diff != "" {
		t.Errorf("stats (-want,+got):\n%s", diff)
	}
}

// The buffer against a naive model: a random mix of pushes, takes and
// acks keeps at most limit samples and reports, every sequence number up
// to the last is acknowledged, buffered or covered by a gap, and gaps
// count exactly the dropped messages.
func TestBufferAgainstModel(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		limit := 1 + r.IntN(6)
		b := newBuffer(limit)
		var dropped int64
		for range 300 {
			switch r.IntN(6) {
			case 0:
				b.after(b.stats().AckedSeq)
			case 1:
				st := b.stats()
				b.ack(st.AckedSeq + uint64(r.IntN(int(st.LastSeq-st.AckedSeq)+1)))
			case 2:
				b.push(itersAt(), 0)
			default:
				b.push(sampleAt(0), 0)
			}
			msgs := b.contents()
			st := b.stats()
			n := 0
			prev := st.AckedSeq
			for _, m := range msgs {
				if m.Seq <= prev {
					t.Fatalf("seed %d: seqs not increasing: %v", seed, describe(msgs))
				}
				if m.GetGap() == nil {
					n++
					if m.Seq != prev+1 {
						t.Fatalf("seed %d: hole before %d not covered by a gap: %v", seed, m.Seq, describe(msgs))
					}
				}
				prev = m.Seq
			}
			if n > limit || prev != st.LastSeq {
				t.Fatalf("seed %d: %d buffered (limit %d), last %d of %d: %v", seed, n, limit, prev, st.LastSeq, describe(msgs))
			}
			dropped = int64(st.Dropped)
		}
		if dropped == 0 && limit < 3 {
			t.Errorf("seed %d: nothing dropped with limit %d", seed, limit)
		}
	}
}

func TestBackoff(t *testing.T) {
	a, err := New(Config{Server: "x:1", NodeID: "n", Rand: rand.NewPCG(1, 1), GPU: noGPU{}})
	if err != nil {
		t.Fatal(err)
	}
	// base: 100ms, 200ms, ..., capped at 30s; each wait in [base/2, base]
	// and never below 100ms.
	base := 100 * time.Millisecond
	for f := range 20 {
		for range 50 {
			d := a.backoff(f)
			if d < max(base/2, DefaultMinBackoff) || d > base {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", f, d, max(base/2, DefaultMinBackoff), base)
			}
		}
		base = min(2*base, DefaultMaxBackoff)
	}
	if d := a.backoff(1 << 20); d > DefaultMaxBackoff {
		t.Errorf("backoff after many failures %v, above the cap", d)
	}
}

type noGPU struct{}

func (noGPU) Read(time.Time) ([]*pb.GPUReading, error) { return nil, nil }
