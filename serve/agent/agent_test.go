package agent_test

import (
	"context"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve/agent"
	pb "github.com/drover-sched/drover/serve/proto"
)

// nan stands for an unknown value in expected samples (cmpopts.EquateNaNs).
var nan = math.NaN()

// sampleOpts compares samples with NaNs equal and floats to 1e-12.
var sampleOpts = cmp.Options{protocmp.Transform(), cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-12)}

func TestHelloThenSamplesInOrder(t *testing.T) {
	leakcheck.Check(t)
	h := newHarness(t)
	h.start()
	cfg := h.config(fixtureRoot(t, "node-a", "t0"))
	cfg.NICGbps = 100
	cfg.Version = "v-test"
	cfg.Interval = 2 * time.Second
	a, stop := h.run(t, cfg)

	hello := h.next(t)
	want := &pb.AgentMessage{Seq: 0, Body: &pb.AgentMessage_Hello{Hello: &pb.AgentHello{
		NodeId: "node-a", AgentId: "agent-1",
		// node-a's fixture: four cpuN lines, MemTotal 16777216 kB.
		Cpus: 4, MemoryGib: 16, NicGbps: 100, Rack: -1,
		GpuTelemetry: false, GpuNote: "test: no GPUs", IntervalS: 2, Version: "v-test",
	}}}
	if diff := cmp.Diff(want, hello, protocmp.Transform()); diff != "" {
		t.Fatalf("hello (-want,+got):\n%s", diff)
	}
	// The first sample is taken at Run's start (the clock's now), the
	// others at each tick, numbered 1, 2, 3, ...
	for i := range 4 {
		if i > 0 {
			h.clock.tick(t, t0.Add(time.Duration(i)*cfg.Interval))
		}
		m := h.next(t)
		if m.Seq != uint64(i+1) || m.GetSample() == nil {
			t.Fatalf("message %d: %v, want sample with seq %d", i, m, i+1)
		}
		if got, want := m.GetSample().UnixNanos, t0.Add(time.Duration(i)*cfg.Interval).UnixNano(); got != want {
			t.Errorf("sample %d at %d, want %d", i+1, got, want)
		}
	}
	waitFor(t, "all acknowledged", func() bool { s := a.Stats(); return s.AckedSeq == 4 && s.Buffered == 0 })
	stop()
	got := a.Stats()
	want2 := agent.Stats{Sent: 5, Acked: 4, LastSeq: 4, AckedSeq: 4}
	if diff := cmp.Diff(want2, got); diff != "" {
		t.Errorf("Stats (-want,+got):\n%s", diff)
	}
	if n := strings.Count(h.log.String(), "test: no GPUs"); n != 1 {
		t.Errorf("GPU note logged %d times, want once:\n%s", n, h.log)
	}
}

// The samples of the procfs fixtures, worked by hand from the files.
func TestFixtureSamples(t *testing.T) {
	tests := []struct {
		name          string
		node          string
		first, second *pb.NodeSample
		logs          []string
	}{
		{
			name: "node-a",
			node: "node-a",
			// t0: 12 of 16 GiB available; nothing else is known yet.
			first: &pb.NodeSample{UnixNanos: t0.UnixNano(), CpuUtil: nan, MemUsed: 0.25,
				CpuPressure: nan, MemPressure: nan, NetRxBps: nan, NetTxBps: nan},
			second: &pb.NodeSample{
				UnixNanos: t0.Add(10 * time.Second).UnixNano(),
				// cpu line total 95500 -> 96500 jiffies; idle+iowait
				// 81500 -> 81750: 1 - 250/1000.
				CpuUtil: 0.75,
				// 4 of 16 GiB available.
				MemUsed: 0.75,
				// cpu some total 50,000,000 -> 54,000,000 us over 10 s;
				// memory some total 1,000,000 -> 3,000,000 us.
				CpuPressure: 0.4,
				MemPressure: 0.2,
				// eth0+ib0 (veth1 is new at t1, lo excluded): rx
				// 2,100,000,000 -> 3,375,000,000 bytes, tx 3,050,000,000
				// -> 4,305,000,000, over 10 s.
				NetRxBps: 127.5e6,
				NetTxBps: 125.5e6,
			},
		},
		{
			name: "node-b without PSI, eth0 counters reset",
			node: "node-b",
			// t0: 2 of 8 GiB available.
			first: &pb.NodeSample{UnixNanos: t0.UnixNano(), CpuUtil: nan, MemUsed: 0.75,
				CpuPressure: nan, MemPressure: nan, NetRxBps: nan, NetTxBps: nan},
			second: &pb.NodeSample{
				UnixNanos: t0.Add(10 * time.Second).UnixNano(),
				// total 26000 -> 27000; idle 20000 -> 20500: 1 - 500/1000.
				CpuUtil: 0.5,
				MemUsed: 0.75,
				// No PSI files; eth0's counters went backwards.
				CpuPressure: nan, MemPressure: nan, NetRxBps: nan, NetTxBps: nan,
			},
			logs: []string{"proc/pressure/memory: not provided", "proc/pressure/cpu: not provided"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			root := fixtureRoot(t, tt.node, "t0")
			h.run(t, h.config(root))
			h.next(t) // hello
			if diff := cmp.Diff(tt.first, h.next(t).GetSample(), sampleOpts); diff != "" {
				t.Errorf("first sample (-want,+got):\n%s", diff)
			}
			useSnapshot(t, root, tt.node, "t1")
			h.clock.tick(t, t0.Add(10*time.Second))
			if diff := cmp.Diff(tt.second, h.next(t).GetSample(), sampleOpts); diff != "" {
				t.Errorf("second sample (-want,+got):\n%s", diff)
			}
			h.clock.tick(t, t0.Add(20*time.Second))
			h.next(t)
			for _, l := range tt.logs {
				if n := strings.Count(h.log.String(), l); n != 1 {
					t.Errorf("%q logged %d times, want once:\n%s", l, n, h.log)
				}
			}
		})
	}
}

// A server restart: the agent reconnects, says hello again, resends what
// was not acknowledged and nothing that was.
func TestReconnectResendsUnacknowledged(t *testing.T) {
	leakcheck.Check(t)
	h := newHarness(t)
	h.srv.setAckUpTo(2)
	h.start()
	a, stop := h.run(t, h.config(fixtureRoot(t, "node-a", "t0")))
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }

	seqs := func(n int) []uint64 {
		var s []uint64
		for range n {
			s = append(s, h.next(t).Seq)
		}
		return s
	}
	h.clock.tick(t, at(1))
	h.clock.tick(t, at(2))
	if diff := cmp.Diff([]uint64{0, 1, 2, 3}, seqs(4)); diff != "" {
		t.Fatalf("first stream's seqs (-want,+got):\n%s", diff)
	}
	waitFor(t, "ack of 2", func() bool { return a.Stats().AckedSeq == 2 })

	h.stop()
	waitFor(t, "the agent to notice", func() bool { return !a.Stats().Connected })
	h.clock.tick(t, at(3))
	h.clock.tick(t, at(4))
	waitFor(t, "samples 4 and 5 buffered", func() bool { return a.Stats().LastSeq == 5 })

	h.srv.setAckUpTo(math.MaxUint64)
	h.start()
	// hello, then 3 (sent, never acknowledged), 4 and 5; not 1 or 2.
	if diff := cmp.Diff([]uint64{0, 3, 4, 5}, seqs(4)); diff != "" {
		t.Fatalf("second stream's seqs (-want,+got):\n%s", diff)
	}
	waitFor(t, "ack of 5", func() bool { return a.Stats().AckedSeq == 5 })
	h.clock.tick(t, at(5))
	if m := h.next(t); m.Seq != 6 {
		t.Fatalf("after the resend: %v, want seq 6", m)
	}
	waitFor(t, "ack of 6", func() bool { return a.Stats().AckedSeq == 6 })
	h.noMore(t)
	stop()

	st := a.Stats()
	if st.Reconnects < 1 || st.Buffered != 0 || st.Acked != 6 || st.Dropped != 0 {
		t.Errorf("Stats: %+v, want a reconnect, 6 acknowledged, none buffered or dropped", st)
	}
	for _, w := range []string{"telemetry stream failed; reconnecting", "reconnect=true resending=3"} {
		if !strings.Contains(h.log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, h.log)
		}
	}
	// The backoff grows from MinBackoff while connecting fails.
	h.clock.mu.Lock()
	waits := h.clock.waits
	h.clock.mu.Unlock()
	for _, w := range waits {
		if w < time.Millisecond || w > 10*time.Millisecond {
			t.Errorf("backoff %v outside [MinBackoff, MaxBackoff] = [1ms, 10ms]", w)
		}
	}
}

// While the server is down the buffer fills; the oldest messages give way
// to one Gap notice that counts them, sent first when the server is back.
func TestBufferOverflowSendsGap(t *testing.T) {
	leakcheck.Check(t)
	h := newHarness(t) // the server is down
	cfg := h.config(fixtureRoot(t, "node-a", "t0"))
	cfg.Buffer = 3
	a, stop := h.run(t, cfg)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	// seq 1: the first sample, at t0; seq 2: an iteration report at
	// t0+500ms; seqs 3..7: samples at t0+1s .. t0+5s.
	waitFor(t, "the first sample", func() bool { return a.Stats().LastSeq == 1 })
	h.clock.set(at(500))
	postIterations(t, a, `{"job_id":"job-1","worker":0,"seconds":[0.5]}`, 202)
	for i := 1; i <= 5; i++ {
		h.clock.tick(t, at(1000*i))
	}
	waitFor(t, "seq 7 buffered", func() bool { return a.Stats().LastSeq == 7 })
	if st := a.Stats(); st.Dropped != 4 || st.Buffered != 4 {
		t.Fatalf("Stats: %+v, want 4 dropped, 4 buffered (a gap and three samples)", st)
	}

	h.start()
	if m := h.next(t); m.GetHello() == nil {
		t.Fatalf("first message %v, want hello", m)
	}
	// Seqs 1-4 (three samples and the report) are gone; the gap takes
	// the last one's number.
	wantGap := &pb.AgentMessage{Seq: 4, Body: &pb.AgentMessage_Gap{Gap: &pb.Gap{
		Samples: 3, IterationReports: 1, FromUnixNanos: t0.UnixNano(), ToUnixNanos: at(2000).UnixNano(),
	}}}
	if diff := cmp.Diff(wantGap, h.next(t), protocmp.Transform()); diff != "" {
		t.Errorf("gap (-want,+got):\n%s", diff)
	}
	for _, seq := range []uint64{5, 6, 7} {
		if m := h.next(t); m.Seq != seq || m.GetSample() == nil {
			t.Errorf("got %v, want sample %d", m, seq)
		}
	}
	waitFor(t, "all acknowledged", func() bool { return a.Stats().Buffered == 0 })
	stop()
	log := h.log.String()
	for w, n := range map[string]int{"buffer full": 1, "sent a gap notice": 1} {
		if got := strings.Count(log, w); got != n {
			t.Errorf("%q logged %d times, want %d:\n%s", w, got, n, log)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	ok := agent.Config{Server: "x:1", NodeID: "n"}
	tests := []struct {
		name string
		edit func(*agent.Config)
		want string
	}{
		{"no server", func(c *agent.Config) { c.Server = "" }, "Server"},
		{"no node", func(c *agent.Config) { c.NodeID = "" }, "NodeID"},
		{"negative interval", func(c *agent.Config) { c.Interval = -time.Second }, "Interval"},
		{"negative buffer", func(c *agent.Config) { c.Buffer = -1 }, "Buffer"},
		{"backoff upside down", func(c *agent.Config) { c.MinBackoff, c.MaxBackoff = time.Second, time.Millisecond }, "MinBackoff"},
		{"rack", func(c *agent.Config) { c.Rack = -2 }, "Rack"},
		{"gpus", func(c *agent.Config) { c.GPUs = -1 }, "GPUs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			_, err := agent.New(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error naming %s", err, tt.want)
			}
		})
	}
	if _, err := agent.New(ok); err != nil {
		t.Errorf("New(%+v): %v", ok, err)
	}
}

func TestRunFailsOnMissingRoot(t *testing.T) {
	h := newHarness(t)
	a, err := agent.New(h.config(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	err = a.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "proc") {
		t.Errorf("Run on an empty root: %v, want an error naming proc", err)
	}
	if err := a.Run(t.Context()); err != agent.ErrRunning {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
}

// An iteration report posted to the running agent's endpoint reaches the
// server as a JobIterations message in the stream's sequence.
func TestIterationsEndToEnd(t *testing.T) {
	leakcheck.Check(t)
	h := newHarness(t)
	h.start()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.config(fixtureRoot(t, "node-a", "t0"))
	cfg.IterListener = lis
	h.run(t, cfg)
	h.next(t) // hello
	h.next(t) // first sample
	resp, err := http.Post("http://"+lis.Addr().String()+agent.IterationsPath, "application/json",
		strings.NewReader(`{"job_id":"job-9","worker":1,"seconds":[0.5,0.25],"dropped":3}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST: %s", resp.Status)
	}
	want := &pb.AgentMessage{Seq: 2, Body: &pb.AgentMessage_Iterations{Iterations: &pb.JobIterations{
		JobId: "job-9", Worker: 1, Seconds: []float64{0.5, 0.25}, Dropped: 3}}}
	if diff := cmp.Diff(want, h.next(t), protocmp.Transform()); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	http.DefaultClient.CloseIdleConnections()
}

// A message the server refuses (InvalidArgument) is dropped after the
// stream fails, so it does not block the ones behind it.
func TestRefusedMessageIsDropped(t *testing.T) {
	leakcheck.Check(t)
	h := newHarness(t)
	h.start()
	a, _ := h.run(t, h.config(fixtureRoot(t, "node-a", "t0")))
	h.next(t) // hello
	h.next(t) // sample 1
	waitFor(t, "ack of 1", func() bool { return a.Stats().AckedSeq == 1 })
	postIterations(t, a, `{"job_id":"poison","seconds":[1]}`, 202)
	if m := h.next(t); m.Seq != 2 {
		t.Fatalf("got %v, want the poison report, seq 2", m)
	}
	h.clock.tick(t, t0.Add(time.Second))
	if m := h.next(t); m.GetHello() == nil {
		t.Fatalf("got %v, want a new stream's hello", m)
	}
	if m := h.next(t); m.Seq != 3 || m.GetSample() == nil {
		t.Fatalf("got %v, want sample 3 (not the poison again)", m)
	}
	waitFor(t, "ack of 3", func() bool { return a.Stats().AckedSeq == 3 })
	if st := a.Stats(); st.Rejected != 1 || st.Buffered != 0 {
		t.Errorf("Stats %+v, want 1 rejected, none buffered", st)
	}
	if !strings.Contains(h.log.String(), "the server refused a message") {
		t.Errorf("log lacks the refusal:\n%s", h.log)
	}
}

// An agent the server says was superseded by another agent of its node
// (Aborted: a rolling update runs the old pod beside the new one) waits
// the longest backoff before it says hello again, instead of taking the
// node back at once; its messages stay buffered and are resent.
func TestSupersededWaitsLongest(t *testing.T) {
	leakcheck.Check(t)
	h := newHarness(t)
	h.start()
	cfg := h.config(fixtureRoot(t, "node-a", "t0"))
	a, _ := h.run(t, cfg)
	h.next(t) // hello
	h.next(t) // sample 1
	waitFor(t, "ack of 1", func() bool { return a.Stats().AckedSeq == 1 })
	postIterations(t, a, `{"job_id":"supersede","seconds":[1]}`, 202)
	if m := h.next(t); m.Seq != 2 {
		t.Fatalf("got %v, want the report, seq 2", m)
	}
	if m := h.next(t); m.GetHello() == nil {
		t.Fatalf("got %v, want a new stream's hello", m)
	}
	if m := h.next(t); m.Seq != 2 || m.GetIterations().GetJobId() != "supersede" {
		t.Fatalf("got %v, want the report resent (seq 2)", m)
	}
	h.clock.mu.Lock()
	waits := append([]time.Duration(nil), h.clock.waits...)
	h.clock.mu.Unlock()
	max := agent.DefaultMaxBackoff
	if cfg.MaxBackoff > 0 {
		max = cfg.MaxBackoff
	}
	if len(waits) == 0 || waits[len(waits)-1] < max/2 {
		t.Errorf("waits %v: the wait after Aborted is below half the longest backoff (%v)", waits, max)
	}
	if !strings.Contains(h.log.String(), "superseded by another agent") {
		t.Errorf("log lacks the supersession:\n%s", h.log)
	}
}

// An agent whose hello the server refuses (InvalidArgument before any
// acknowledgement: drover agent -nic-gbps NaN did this) or whose
// credentials it refuses stops with the server's message after one try,
// instead of reconnecting for ever with the same hello (issue 32, item 7).
func TestRefusedAgentStops(t *testing.T) {
	for _, tt := range []struct{ node, want string }{
		{"bad-hello", "hello.nic_gbps: NaN"},
		{"no-entry", "not this node"},
	} {
		t.Run(tt.node, func(t *testing.T) {
			leakcheck.Check(t)
			h := newHarness(t)
			h.start()
			cfg := h.config(fixtureRoot(t, "node-a", "t0"))
			cfg.NodeID = tt.node
			a, err := agent.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- a.Run(context.Background()) }()
			select {
			case err = <-done:
			case <-time.After(time.Minute): // a loaded machine under -race cannot take this long
				t.Fatalf("Run still running a minute after the refusal; log:\n%s", h.log)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: %v, want the server's refusal (%q)", err, tt.want)
			}
			if m := h.next(t); m.GetHello() == nil {
				t.Errorf("got %v, want the hello", m)
			}
			h.noMore(t)
			if st := a.Stats(); st.Reconnects != 0 {
				t.Errorf("%d reconnects, want none", st.Reconnects)
			}
		})
	}
}
