package state_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// fakeStream is one agent's telemetry stream as the Service sees it: it
// hands out msgs, then io.EOF, and records the acknowledgements. Its
// context ends when the handler returns (end), as gRPC's does.
type fakeStream struct {
	grpc.ServerStream // the rest of the interface; never called
	ctx               context.Context
	msgs              []*pb.AgentMessage
	acks              []uint64
}

func (f *fakeStream) Context() context.Context { return f.ctx }

func (f *fakeStream) Recv() (*pb.AgentMessage, error) {
	if err := f.ctx.Err(); err != nil {
		return nil, err
	}
	if len(f.msgs) == 0 {
		return nil, io.EOF
	}
	m := f.msgs[0]
	f.msgs = f.msgs[1:]
	return m, nil
}

func (f *fakeStream) Send(a *pb.AgentAck) error {
	f.acks = append(f.acks, a.GetAckedSeq())
	return nil
}

// fuzzBytes reads the fuzz input; past its end every read is zero.
type fuzzBytes struct{ b []byte }

func (r *fuzzBytes) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	x := r.b[0]
	r.b = r.b[1:]
	return x
}

func (r *fuzzBytes) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// streamScript decodes the fuzz input into streams of one node's agents,
// each a hello and the messages after it, and cluster reports made
// between streams. Sequence numbers mostly follow the last one by 0 (a
// resend) to 3, and jump anywhere (up to 2^64-1) on op 3.
type streamScript struct {
	streams []scriptStream
}

type scriptStream struct {
	agent  string
	msgs   []*pb.AgentMessage
	finish []string // jobs the cluster reports finished before the stream
}

func decodeScript(data []byte) streamScript {
	r := &fuzzBytes{data}
	var sc streamScript
	cur := scriptStream{agent: "a0"}
	var seq uint64
	agents := 0
	for len(r.b) > 0 {
		switch op := r.byte() % 8; op {
		case 0: // a sample
			seq += uint64(r.byte() % 4)
			cpu := float64(r.byte()) / 255
			cur.msgs = append(cur.msgs, sampleMsg(seq, at(float64(seq%1000)+1), cpu, 0))
		case 1: // iteration times of a job's worker
			seq += uint64(r.byte() % 4)
			job := fmt.Sprintf("j%d", r.byte()%40)
			w := int32(r.byte()) - 1
			secs := make([]float64, r.byte()%16)
			for i := range secs {
				secs[i] = float64(r.byte())/64 + 0.01
			}
			cur.msgs = append(cur.msgs, itersMsg(seq, job, w, secs...))
		case 2: // a gap notice
			seq += uint64(r.byte() % 8)
			cur.msgs = append(cur.msgs, gapMsg(seq, int64(r.byte()), int64(r.byte())))
		case 3: // any sequence number
			seq = r.uvarint()
			cur.msgs = append(cur.msgs, sampleMsg(seq, at(1), 0.5, 0))
		case 4: // the stream ends; the next is the same agent, or a new one
			sc.streams = append(sc.streams, cur)
			if r.byte()%2 == 1 {
				agents++
				seq = 0
			}
			cur = scriptStream{agent: fmt.Sprintf("a%d", agents)}
		case 5: // an arbitrary message
			n := int(r.byte() % 64)
			var m pb.AgentMessage
			if proto.Unmarshal(r.b[:min(n, len(r.b))], &m) == nil {
				cur.msgs = append(cur.msgs, &m)
			}
			r.b = r.b[min(n, len(r.b)):]
		case 6: // a second hello
			cur.msgs = append(cur.msgs, helloMsg(hello("n1", cur.agent)))
		case 7: // the cluster reports a job finished
			cur.finish = append(cur.finish, fmt.Sprintf("j%d", r.byte()%40))
		}
	}
	sc.streams = append(sc.streams, cur)
	return sc
}

// FuzzTelemetryStream drives a sequence of agent messages decoded from
// the fuzz input through the Service, one stream after another as an
// agent reconnects. Invariants: no panic; a stream ends cleanly or with
// InvalidArgument; acknowledgements never go down within an agent's
// streams (a reconnecting agent's hello returns its last), never exceed
// MaxSeq, and are the highest number applied; a message at or below the
// acknowledged number is not applied; the store stays within its limits
// and so does its snapshot, which loads back.
func FuzzTelemetryStream(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 1, 20, 1, 1, 3, 1, 4, 50, 60, 70, 80})
	f.Add([]byte{3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 1, 10})
	f.Add([]byte{0, 1, 5, 3, 5, 3, 100, 2, 3, 2, 1, 4, 0, 0, 1, 1})
	f.Add([]byte{1, 1, 1, 0, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 7, 1, 4, 1, 0, 1, 0})
	f.Add([]byte{6, 0, 1, 0, 5, 4, 0x08, 0x01, 0x2a, 0x02, 0x08, 0x01})
	cfg := state.Config{History: 8, MaxJobs: 8, MaxJobsPerNode: 4, MaxJobWorkers: 4, ProfileIterations: 8, MaxIterationTimes: 40}
	// The largest snapshot cfg allows, generously: a node, its ring, and
	// MaxJobs jobs of MaxJobWorkers workers (ids and counts of at most 20
	// digits), MaxIterationTimes times of at most 25 bytes each.
	maxSnapshot := 4096 + cfg.History*150 + cfg.MaxJobs*(600+cfg.MaxJobWorkers*200) + cfg.MaxIterationTimes*25
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := decodeScript(data)
		st := newStore(t, cfg)
		svc := state.NewService(st, (&fakeClock{t: at(0)}).Now)
		var samples int64
		acked := map[string]uint64{} // the last ack per agent
		for _, s := range sc.streams {
			for _, j := range s.finish {
				st.JobFinished(j, at(2))
			}
			ctx, cancel := context.WithCancel(context.Background())
			fs := &fakeStream{ctx: ctx, msgs: append([]*pb.AgentMessage{helloMsg(hello("n1", s.agent))}, s.msgs...)}
			sent := fs.msgs
			err := svc.Stream(fs)
			cancel()
			if err != nil && status.Code(err) != codes.InvalidArgument {
				t.Fatalf("stream of %s ended with %v, want nil or InvalidArgument", s.agent, err)
			}
			if len(fs.acks) == 0 {
				t.Fatalf("stream of %s: the hello was not acknowledged (%v)", s.agent, err)
			}
			if fs.acks[0] != acked[s.agent] {
				t.Fatalf("hello of %s acked %d, want its last ack %d", s.agent, fs.acks[0], acked[s.agent])
			}
			// Each ack answers sent[i]: the highest number applied.
			prev := fs.acks[0]
			for i, a := range fs.acks[1:] {
				m := sent[i+1]
				want := max(prev, m.GetSeq())
				if a != want || a > state.MaxSeq {
					t.Fatalf("%s: message %d (seq %d) acked %d after %d, want %d (at most MaxSeq)", s.agent, i+1, m.GetSeq(), a, prev, want)
				}
				if m.GetSample() != nil && m.GetSeq() > prev {
					samples++
				}
				prev = a
			}
			acked[s.agent] = prev
		}
		v, _ := st.Node("n1", at(3))
		if v.Samples != samples {
			t.Errorf("%d samples applied, want %d (the samples above the acknowledged number)", v.Samples, samples)
		}
		if n := len(st.History("n1")); n > cfg.History {
			t.Errorf("%d samples kept, more than %d", n, cfg.History)
		}
		sum := st.Summarize(at(3))
		if sum.Jobs > int64(cfg.MaxJobs) || sum.IterationTimes > int64(cfg.MaxIterationTimes) {
			t.Errorf("%d jobs, %d iteration times kept; limits %d, %d", sum.Jobs, sum.IterationTimes, cfg.MaxJobs, cfg.MaxIterationTimes)
		}
		b, err := st.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > maxSnapshot {
			t.Errorf("snapshot of %d bytes, more than the %d the limits allow", len(b), maxSnapshot)
		}
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := state.Load(path, cfg); err != nil {
			t.Fatalf("Load of the saved state: %v", err)
		}
	})
}
