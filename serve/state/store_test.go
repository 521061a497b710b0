package state_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/env"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// t0 is the tests' epoch: every time is t0 plus an explicit offset, so no
// test reads the wall clock.
var t0 = time.Unix(1_700_000_000, 0)

// at returns t0 + s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

var nan = math.NaN()

// approx compares floats to 1e-12 (absolute) or 1e-12 relative.
var approx = cmpopts.EquateApprox(1e-12, 1e-12)

// hello is an agent's hello for node on a 25 Gbps NIC.
func hello(node, agent string) *pb.AgentHello {
	return &pb.AgentHello{NodeId: node, AgentId: agent, Gpus: 8, Cpus: 64, MemoryGib: 512, NicGbps: 25, Rack: 0, IntervalS: 5}
}

// sampleMsg is message seq: a sample taken at t with the given CPU
// utilisation and memory pressure, no network rates (NaN).
func sampleMsg(seq uint64, t time.Time, cpu, memPressure float64) *pb.AgentMessage {
	return &pb.AgentMessage{Seq: seq, Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{
		UnixNanos: t.UnixNano(), CpuUtil: cpu, MemUsed: nan, CpuPressure: nan, MemPressure: memPressure, NetRxBps: nan, NetTxBps: nan}}}
}

// itersMsg is message seq: iteration times of job's worker.
func itersMsg(seq uint64, job string, worker int32, secs ...float64) *pb.AgentMessage {
	return &pb.AgentMessage{Seq: seq, Body: &pb.AgentMessage_Iterations{Iterations: &pb.JobIterations{JobId: job, Worker: worker, Seconds: secs}}}
}

// gapMsg is message seq: a gap notice.
func gapMsg(seq uint64, samples, reports int64) *pb.AgentMessage {
	return &pb.AgentMessage{Seq: seq, Body: &pb.AgentMessage_Gap{Gap: &pb.Gap{Samples: samples, IterationReports: reports}}}
}

// repeat returns n copies of x.
func repeat(x float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = x
	}
	return s
}

func newStore(t testing.TB, cfg state.Config) *state.Store {
	t.Helper()
	st, err := state.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustHello(t testing.TB, st *state.Store, h *pb.AgentHello, now time.Time) uint64 {
	t.Helper()
	seq, err := st.Hello(h, now)
	if err != nil {
		t.Fatalf("Hello(%s/%s): %v", h.GetNodeId(), h.GetAgentId(), err)
	}
	return seq
}

func mustApply(t testing.TB, st *state.Store, node string, m *pb.AgentMessage, now time.Time) uint64 {
	t.Helper()
	seq, err := st.Apply(node, m, now)
	if err != nil {
		t.Fatalf("Apply(%s, seq %d): %v", node, m.GetSeq(), err)
	}
	return seq
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		s    *pb.NodeSample
		nic  float64
		prev env.Usage
		want env.Usage
	}{{
		// CPU is cpu_util, MemBW mem_pressure; unmeasured network keeps
		// the previous Net.
		name: "cpu and memory pressure",
		s:    &pb.NodeSample{CpuUtil: 0.42, MemUsed: 0.9, CpuPressure: 0.7, MemPressure: 0.1, NetRxBps: nan, NetTxBps: nan},
		nic:  25, prev: env.Usage{Net: 0.3},
		want: env.Usage{CPU: 0.42, MemBW: 0.1, Net: 0.3},
	}, {
		// Net = max(1.25e9, 0.5e9) B/s * 8 / (25 * 1e9) b/s = 1e10/2.5e10 = 0.4.
		name: "receive busier",
		s:    &pb.NodeSample{CpuUtil: nan, MemPressure: nan, NetRxBps: 1.25e9, NetTxBps: 0.5e9},
		nic:  25, prev: env.Usage{CPU: 0.5, MemBW: 0.6, Net: 0.9},
		want: env.Usage{CPU: 0.5, MemBW: 0.6, Net: 0.4},
	}, {
		// The same with the directions swapped: max picks tx.
		name: "send busier",
		s:    &pb.NodeSample{CpuUtil: nan, MemPressure: nan, NetRxBps: 0.5e9, NetTxBps: 1.25e9},
		nic:  25,
		want: env.Usage{Net: 0.4},
	}, {
		// 1e9 B/s * 8 / (10 * 1e9) b/s = 0.8.
		name: "10 Gbps NIC",
		s:    &pb.NodeSample{NetRxBps: 1e9, NetTxBps: 0},
		nic:  10,
		want: env.Usage{Net: 0.8},
	}, {
		name: "idle NIC overrides the previous load",
		s:    &pb.NodeSample{CpuUtil: 0, MemPressure: 0, NetRxBps: 0, NetTxBps: 0},
		nic:  25, prev: env.Usage{CPU: 0.5, MemBW: 0.5, Net: 0.7},
		want: env.Usage{},
	}, {
		name: "all NaN keeps the previous load",
		s:    &pb.NodeSample{CpuUtil: nan, MemPressure: nan, NetRxBps: nan, NetTxBps: nan},
		nic:  25, prev: env.Usage{CPU: 0.1, MemBW: 0.2, Net: 0.3},
		want: env.Usage{CPU: 0.1, MemBW: 0.2, Net: 0.3},
	}, {
		// max(rx, tx) is unknown when either direction is.
		name: "one direction NaN keeps the previous Net",
		s:    &pb.NodeSample{CpuUtil: 0.2, MemPressure: 0.3, NetRxBps: 1e9, NetTxBps: nan},
		nic:  25, prev: env.Usage{Net: 0.3},
		want: env.Usage{CPU: 0.2, MemBW: 0.3, Net: 0.3},
	}, {
		// 5e9 * 8 / 25e9 = 1.6 -> 1.
		name: "clamped above",
		s:    &pb.NodeSample{CpuUtil: 1.5, MemPressure: 2, NetRxBps: 5e9, NetTxBps: 0},
		nic:  25,
		want: env.Usage{CPU: 1, MemBW: 1, Net: 1},
	}, {
		name: "clamped below",
		s:    &pb.NodeSample{CpuUtil: -0.5, MemPressure: -1, NetRxBps: -1e9, NetTxBps: -2e9},
		nic:  25, prev: env.Usage{CPU: 0.5, MemBW: 0.5, Net: 0.5},
		want: env.Usage{},
	}, {
		name: "no NIC bandwidth keeps the previous Net",
		s:    &pb.NodeSample{CpuUtil: 0.42, MemPressure: 0.1, NetRxBps: 1.25e9, NetTxBps: 0.5e9},
		nic:  0, prev: env.Usage{Net: 0.7},
		want: env.Usage{CPU: 0.42, MemBW: 0.1, Net: 0.7},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := state.Usage(tt.s, tt.nic, tt.prev)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Usage (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	want := state.Config{StaleAfter: 15 * time.Second, History: 720, MaxNodes: 10_000, MaxJobs: 20_000, MaxJobsPerNode: 256, AgentJobTTL: 2 * time.Minute, FinishedJobTTL: time.Minute,
		ProfileIterations: 256, MaxJobWorkers: 1024, MaxIterationTimes: 1 << 20}
	if diff := cmp.Diff(want, state.Config{}.WithDefaults()); diff != "" {
		t.Errorf("WithDefaults (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want, newStore(t, state.Config{}).Config()); diff != "" {
		t.Errorf("New(Config{}).Config() (-want,+got):\n%s", diff)
	}
	for _, cfg := range []state.Config{{StaleAfter: -time.Second}, {History: -1}, {MaxNodes: -1}, {MaxJobs: -1}, {ProfileIterations: -1},
		{MaxJobsPerNode: -1}, {MaxJobWorkers: -1}, {MaxIterationTimes: -1}} {
		if _, err := state.New(cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
}

// TestApplySequence walks one node through hellos, samples and resends,
// checking the acknowledged number and what was applied after each step.
func TestApplySequence(t *testing.T) {
	st := newStore(t, state.Config{})
	steps := []struct {
		name        string
		hello       *pb.AgentHello // a hello, else msg
		msg         *pb.AgentMessage
		now         time.Time
		wantSeq     uint64
		wantSamples int64
		wantCPU     float64
		wantLastT   time.Time
	}{
		{name: "first hello", hello: hello("n1", "a1"), now: at(0), wantSeq: 0},
		{name: "seq 1", msg: sampleMsg(1, at(1), 0.2, 0), now: at(1.1), wantSeq: 1, wantSamples: 1, wantCPU: 0.2, wantLastT: at(1)},
		{name: "seq 2", msg: sampleMsg(2, at(2), 0.4, 0), now: at(2.1), wantSeq: 2, wantSamples: 2, wantCPU: 0.4, wantLastT: at(2)},
		{name: "seq 3", msg: sampleMsg(3, at(3), 0.6, 0), now: at(3.1), wantSeq: 3, wantSamples: 3, wantCPU: 0.6, wantLastT: at(3)},
		// A resend of 2 with other content: skipped, the ack stays at 3.
		{name: "resend 2", msg: sampleMsg(2, at(9), 0.9, 0), now: at(4), wantSeq: 3, wantSamples: 3, wantCPU: 0.6, wantLastT: at(3)},
		{name: "resend 3", msg: sampleMsg(3, at(9), 0.9, 0), now: at(4.1), wantSeq: 3, wantSamples: 3, wantCPU: 0.6, wantLastT: at(3)},
		// The same agent reconnecting: its hello returns the last applied.
		{name: "same agent hello", hello: hello("n1", "a1"), now: at(5), wantSeq: 3, wantSamples: 3, wantCPU: 0.6, wantLastT: at(3)},
		{name: "resend 1 after reconnect", msg: sampleMsg(1, at(9), 0.9, 0), now: at(5.1), wantSeq: 3, wantSamples: 3, wantCPU: 0.6, wantLastT: at(3)},
		// Numbers may skip (a gap notice covers what was lost).
		{name: "seq 5", msg: sampleMsg(5, at(6), 0.5, 0), now: at(6.1), wantSeq: 5, wantSamples: 4, wantCPU: 0.5, wantLastT: at(6)},
		// A restarted agent (new id) starts its numbers afresh; the node's
		// samples stay.
		{name: "new agent hello", hello: hello("n1", "a2"), now: at(7), wantSeq: 0, wantSamples: 4, wantCPU: 0.5, wantLastT: at(6)},
		{name: "new agent seq 1", msg: sampleMsg(1, at(8), 0.1, 0), now: at(8.1), wantSeq: 1, wantSamples: 5, wantCPU: 0.1, wantLastT: at(8)},
	}
	for _, s := range steps {
		var seq uint64
		if s.hello != nil {
			seq = mustHello(t, st, s.hello, s.now)
		} else {
			seq = mustApply(t, st, "n1", s.msg, s.now)
		}
		if seq != s.wantSeq {
			t.Errorf("%s: acked %d, want %d", s.name, seq, s.wantSeq)
		}
		v, ok := st.Node("n1", s.now)
		if !ok {
			t.Fatalf("%s: node n1 unknown", s.name)
		}
		if v.LastSeq != s.wantSeq || v.Samples != s.wantSamples || v.Last.Usage.CPU != s.wantCPU || !v.Last.Time.Equal(s.wantLastT) || !v.Seen.Equal(s.now) || v.Stale {
			t.Errorf("%s: node %+v; want LastSeq %d, Samples %d, CPU %v at %v, seen %v, fresh", s.name, v, s.wantSeq, s.wantSamples, s.wantCPU, s.wantLastT, s.now)
		}
	}
	// Five samples applied (seqs 1, 2, 3, 5 of a1 and 1 of a2), in order.
	var cpus []float64
	for _, x := range st.History("n1") {
		cpus = append(cpus, x.Usage.CPU)
	}
	if diff := cmp.Diff([]float64{0.2, 0.4, 0.6, 0.5, 0.1}, cpus); diff != "" {
		t.Errorf("History CPU (-want,+got):\n%s", diff)
	}
	v, _ := st.Node("n1", at(8.1))
	wantInfo := state.NodeInfo{ID: "n1", AgentID: "a2", GPUs: 8, CPUs: 64, MemoryGiB: 512, NICGbps: 25, Rack: 0, Interval: 5 * time.Second}
	if diff := cmp.Diff(wantInfo, v.Info); diff != "" {
		t.Errorf("Info (-want,+got):\n%s", diff)
	}
}

func TestStoreErrors(t *testing.T) {
	st := newStore(t, state.Config{MaxNodes: 2})
	if _, err := st.Apply("n1", sampleMsg(1, at(1), 0.5, 0), at(1)); !errors.Is(err, state.ErrNoHello) {
		t.Errorf("Apply before hello: %v, want ErrNoHello", err)
	}
	mustHello(t, st, hello("n1", "a"), at(0))
	mustHello(t, st, hello("n2", "a"), at(0))
	if _, err := st.Hello(hello("n3", "a"), at(0)); !errors.Is(err, state.ErrTooManyNodes) {
		t.Errorf("third node of MaxNodes 2: %v, want ErrTooManyNodes", err)
	}
	if _, ok := st.Node("n3", at(0)); ok {
		t.Error("refused node n3 is known")
	}
	// A known node may say hello again when the store is full.
	mustHello(t, st, hello("n1", "b"), at(1))

	fieldTests := []struct {
		name  string
		err   func() error
		field string
	}{
		{"hello without node", func() error { _, err := st.Hello(hello("", "a"), at(0)); return err }, "hello.node_id"},
		{"hello without agent", func() error { _, err := st.Hello(hello("n1", ""), at(0)); return err }, "hello.agent_id"},
		{"hello negative nic", func() error {
			h := hello("n1", "a")
			h.NicGbps = -1
			_, err := st.Hello(h, at(0))
			return err
		}, "hello.nic_gbps"},
		{"seq 0", func() error { _, err := st.Apply("n1", sampleMsg(0, at(1), 0.5, 0), at(1)); return err }, "seq"},
		{"cpu 1.5", func() error { _, err := st.Apply("n1", sampleMsg(1, at(1), 1.5, 0), at(1)); return err }, "sample.cpu_util"},
		{"mem pressure -0.1", func() error { _, err := st.Apply("n1", sampleMsg(1, at(1), 0.5, -0.1), at(1)); return err }, "sample.mem_pressure"},
		{"iteration time 0", func() error { _, err := st.Apply("n1", itersMsg(1, "j", 0, 1, 0), at(1)); return err }, "iterations.seconds[1]"},
		{"worker -2", func() error { _, err := st.Apply("n1", itersMsg(1, "j", -2, 1), at(1)); return err }, "iterations.worker"},
		{"negative gap", func() error { _, err := st.Apply("n1", gapMsg(1, -1, 0), at(1)); return err }, "gap"},
		{"second hello", func() error {
			_, err := st.Apply("n1", &pb.AgentMessage{Seq: 1, Body: &pb.AgentMessage_Hello{Hello: hello("n1", "a")}}, at(1))
			return err
		}, "hello"},
		{"no body", func() error { _, err := st.Apply("n1", &pb.AgentMessage{Seq: 1}, at(1)); return err }, "body"},
	}
	for _, tt := range fieldTests {
		t.Run(tt.name, func(t *testing.T) {
			var fe *state.FieldError
			if err := tt.err(); !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("error %v, want a FieldError on %q", err, tt.field)
			}
		})
	}
	// Refused messages changed nothing.
	if v, _ := st.Node("n1", at(1)); v.Samples != 0 || v.LastSeq != 0 || st.Jobs() != 0 {
		t.Errorf("after refused messages: node %+v, %d jobs; want nothing applied", v, st.Jobs())
	}
}

func TestHistoryRing(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 7, 9} {
		t.Run(fmt.Sprintf("samples=%d", n), func(t *testing.T) {
			// A ring of 3 keeps samples max(1, n-2)..n, oldest first.
			st := newStore(t, state.Config{History: 3})
			mustHello(t, st, hello("n1", "a"), at(0))
			for i := 1; i <= n; i++ {
				mustApply(t, st, "n1", sampleMsg(uint64(i), at(float64(i)), float64(i)/10, 0), at(float64(i)))
			}
			var want []state.Sample
			for i := max(1, n-2); i <= n; i++ {
				want = append(want, state.Sample{Time: at(float64(i)), Usage: env.Usage{CPU: float64(i) / 10}})
			}
			if diff := cmp.Diff(want, st.History("n1"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("History (-want,+got):\n%s", diff)
			}
			if v, _ := st.Node("n1", at(float64(n))); v.Samples != int64(n) {
				t.Errorf("Samples %d, want %d", v.Samples, n)
			}
		})
	}
	if h := newStore(t, state.Config{}).History("nobody"); h != nil {
		t.Errorf("History of an unknown node: %v", h)
	}
}

func TestGap(t *testing.T) {
	st := newStore(t, state.Config{})
	mustHello(t, st, hello("n1", "a"), at(0))
	mustApply(t, st, "n1", gapMsg(1, 4, 2), at(1))     // 4 + 2 = 6 lost
	mustApply(t, st, "n1", gapMsg(2, 1, 0), at(2))     // 6 + 1 = 7
	mustApply(t, st, "n1", gapMsg(2, 100, 100), at(3)) // a resend: skipped
	mustApply(t, st, "n1", sampleMsg(3, at(3), 0.5, 0), at(3))
	v, _ := st.Node("n1", at(3))
	if v.Lost != 7 || v.Samples != 1 || v.LastSeq != 3 {
		t.Errorf("node %+v; want Lost 7, Samples 1, LastSeq 3", v)
	}
}

func TestOverlay(t *testing.T) {
	st := newStore(t, state.Config{StaleAfter: 10 * time.Second})
	// Every node says hello at t0; now is t0+12 s.
	for _, id := range []string{"fresh", "stale", "edge", "silent"} {
		mustHello(t, st, hello(id, "a"), at(0))
	}
	mustApply(t, st, "fresh", sampleMsg(1, at(4), 0.3, 0.2), at(5)) // seen 7 s ago
	mustApply(t, st, "stale", sampleMsg(1, at(1), 0.6, 0.1), at(1)) // seen 11 s ago > 10 s
	mustApply(t, st, "edge", sampleMsg(1, at(2), 0.7, 0.4), at(2))  // seen exactly 10 s ago: not more than StaleAfter
	mustHello(t, st, hello("silent", "a"), at(11))                  // fresh, but no samples
	now := at(12)

	req := env.Usage{CPU: 0.99, MemBW: 0.98, Net: 0.97}
	ids := []string{"fresh", "stale", "edge", "silent", "unknown"}
	load := []env.Usage{req, req, req, req, req}
	free := []int{8, 8, 8, 8, 8}
	stale, live := st.Overlay(ids, load, free, now)
	if stale != 1 || live != 2 {
		t.Errorf("Overlay = %d stale, %d live; want 1, 2", stale, live)
	}
	// Samples have no network rates (NaN) and start from a zero Net.
	wantLoad := []env.Usage{{CPU: 0.3, MemBW: 0.2}, req, {CPU: 0.7, MemBW: 0.4}, req, req}
	if diff := cmp.Diff(wantLoad, load); diff != "" {
		t.Errorf("load (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{8, 0, 8, 8, 8}, free); diff != "" {
		t.Errorf("free (-want,+got):\n%s", diff)
	}
	var gotStale []string
	for _, v := range st.Nodes(now) {
		if v.Stale {
			gotStale = append(gotStale, v.Info.ID)
		}
	}
	if diff := cmp.Diff([]string{"stale"}, gotStale); diff != "" {
		t.Errorf("Nodes stale (-want,+got):\n%s", diff)
	}

	// An empty store changes nothing.
	load, free = []env.Usage{req}, []int{8}
	if s, l := newStore(t, state.Config{}).Overlay([]string{"fresh"}, load, free, now); s != 0 || l != 0 || load[0] != req || free[0] != 8 {
		t.Errorf("empty store: %d, %d, %v, %v", s, l, load, free)
	}
}

func TestNodesSorted(t *testing.T) {
	st := newStore(t, state.Config{})
	for _, id := range []string{"c", "a", "b"} {
		mustHello(t, st, hello(id, "x"), at(0))
	}
	var ids []string
	for _, v := range st.Nodes(at(0)) {
		ids = append(ids, v.Info.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("Nodes order (-want,+got):\n%s", diff)
	}
}

func TestMean(t *testing.T) {
	st := newStore(t, state.Config{History: 4})
	mustHello(t, st, hello("n1", "a"), at(0))
	// Samples at t0+1..6 s with CPU 0.1..0.6 and memory pressure 0.05 i;
	// a ring of 4 keeps those at 3, 4, 5, 6.
	for i := 1; i <= 6; i++ {
		mustApply(t, st, "n1", sampleMsg(uint64(i), at(float64(i)), float64(i)/10, float64(i)*0.05), at(float64(i)))
	}
	tests := []struct {
		name     string
		from, to time.Time
		want     env.Usage
		wantN    int
	}{
		// (3, 5]: samples 4 and 5: CPU (0.4+0.5)/2 = 0.45, mem (0.2+0.25)/2 = 0.225.
		{"half-open window", at(3), at(5), env.Usage{CPU: 0.45, MemBW: 0.225}, 2},
		// Everything kept: (0.3+0.4+0.5+0.6)/4 = 0.45, (0.15+0.2+0.25+0.3)/4 = 0.225.
		{"all kept", at(0), at(10), env.Usage{CPU: 0.45, MemBW: 0.225}, 4},
		// (5.5, 6]: sample 6 alone.
		{"one", at(5.5), at(6), env.Usage{CPU: 0.6, MemBW: 0.3}, 1},
		// Samples 1 and 2 were overwritten.
		{"forgotten", at(0), at(2), env.Usage{}, 0},
		{"empty window", at(6), at(6), env.Usage{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := st.Mean("n1", tt.from, tt.to)
			if n != tt.wantN {
				t.Errorf("Mean count %d, want %d", n, tt.wantN)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Mean (-want,+got):\n%s", diff)
			}
		})
	}
	if u, n := st.Mean("nobody", at(0), at(10)); n != 0 || u != (env.Usage{}) {
		t.Errorf("Mean of an unknown node: %v, %d", u, n)
	}
}

// recorder records samples, failing when fail is set.
type recorder struct {
	mu    sync.Mutex
	fail  bool
	nodes []string
	cpus  []float64
}

func (r *recorder) Record(node string, s state.Sample, raw *pb.NodeSample) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("disk full")
	}
	if s.Usage.CPU != raw.GetCpuUtil() {
		return fmt.Errorf("usage %v for raw cpu_util %v", s.Usage, raw.GetCpuUtil())
	}
	r.nodes = append(r.nodes, node)
	r.cpus = append(r.cpus, s.Usage.CPU)
	return nil
}

func TestRecorder(t *testing.T) {
	rec := &recorder{}
	st := newStore(t, state.Config{Recorder: rec})
	mustHello(t, st, hello("n1", "a"), at(0))
	mustApply(t, st, "n1", sampleMsg(1, at(1), 0.25, 0), at(1))
	mustApply(t, st, "n1", sampleMsg(1, at(1), 0.75, 0), at(1)) // resend: not recorded
	mustApply(t, st, "n1", gapMsg(2, 1, 0), at(2))              // not a sample
	mustApply(t, st, "n1", itersMsg(3, "j", 0, 1, 1), at(2))    // not a sample
	mustApply(t, st, "n1", sampleMsg(4, at(4), 0.5, 0), at(4))
	rec.fail = true
	// A recorder error is counted, not returned: the sample is applied.
	mustApply(t, st, "n1", sampleMsg(5, at(5), 0.125, 0), at(5))
	if diff := cmp.Diff([]float64{0.25, 0.5}, rec.cpus); diff != "" {
		t.Errorf("recorded CPU (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"n1", "n1"}, rec.nodes); diff != "" {
		t.Errorf("recorded nodes (-want,+got):\n%s", diff)
	}
	if n := st.RecordErrors(); n != 1 {
		t.Errorf("RecordErrors = %d, want 1", n)
	}
	if v, _ := st.Node("n1", at(5)); v.Samples != 3 || v.Last.Usage.CPU != 0.125 {
		t.Errorf("node %+v; want 3 samples, the last at CPU 0.125", v)
	}
}

// TestConcurrent applies several nodes' streams at once while readers
// overlay, list and snapshot the store (for the race detector).
func TestConcurrent(t *testing.T) {
	const nodes, samples = 4, 200
	st := newStore(t, state.Config{History: 50})
	var wg sync.WaitGroup
	for i := range nodes {
		id := fmt.Sprintf("n%d", i)
		mustHello(t, st, hello(id, "a"), at(0))
		wg.Go(func() {
			for s := 1; s <= samples; s++ {
				if _, err := st.Apply(id, sampleMsg(uint64(2*s-1), at(float64(s)), 0.5, 0.25), at(float64(s))); err != nil {
					t.Error(err)
					return
				}
				if _, err := st.Apply(id, itersMsg(uint64(2*s), "job", int32(i), 1), at(float64(s))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		ids := []string{"n0", "n1", "n2", "n3"}
		for {
			select {
			case <-stop:
				return
			default:
			}
			st.Overlay(ids, make([]env.Usage, 4), make([]int, 4), at(1))
			st.Nodes(at(1))
			st.Profile("job", "")
			st.Mean("n0", at(0), at(samples))
			if _, err := st.MarshalJSON(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	for _, v := range st.Nodes(at(samples)) {
		// Sample s is message 2s-1 and iteration report s message 2s.
		if v.Samples != samples || v.LastSeq != 2*samples {
			t.Errorf("node %s: %d samples, last seq %d; want %d, %d", v.Info.ID, v.Samples, v.LastSeq, samples, 2*samples)
		}
	}
	// Every worker's 200 iterations of 1 s: a profile of 4 x 200.
	if p, ok := st.Profile("job", ""); !ok || p.Workers != nodes || p.Iterations != samples || p.Base != 1 || p.Straggling != 0 {
		t.Errorf("Profile = %+v, %v; want %d workers x %d iterations of 1 s", p, ok, nodes, samples)
	}
}
