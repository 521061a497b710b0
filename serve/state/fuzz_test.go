package state_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// FuzzRestore loads arbitrary bytes as a snapshot: Load never panics, and
// a snapshot it accepts saves and loads back to the same state.
func FuzzRestore(f *testing.F) {
	f.Add(mustMarshal(f, fixtureStore(f)))
	f.Add(mustMarshal(f, newStore(f, state.Config{})))
	valid := mustMarshal(f, fixtureStore(f))
	f.Add(valid[:len(valid)/2])
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"nodes":null,"jobs":null,"profiles":null}`))
	f.Add([]byte(`{"version":1,"nodes":[{"info":{"ID":"a"},"history":[{"t":1,"cpu":1,"membw":0,"net":0.5}]}],"jobs":[{"id":"j","workers":[{"index":-1,"seconds":[1e300]},{"index":-1,"seconds":[2]}]},{"id":"j"}],"profiles":{"":{"Workers":1,"Rel":[[1]]}}}`))
	f.Add([]byte(`{"version":1,"nodes":[{"info":{"ID":"a"}},{"info":{"ID":"a"}}]}`))
	f.Add([]byte(`{"version":1,"saved_unix_nanos":-1,"nodes":[{"info":{"ID":"\xff"},"seen":-9223372036854775808,"last_seq":18446744073709551615}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "in.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := state.Config{History: 8, MaxNodes: 16, MaxJobs: 16, ProfileIterations: 32}
		st, err := state.Load(path, cfg)
		if err != nil {
			if st != nil {
				t.Errorf("Load returned a store with its error %v", err)
			}
			return
		}
		// Re-save: Save's bytes are MarshalJSON's with the save time;
		// written without Save's fsyncs, which would slow fuzzing a
		// hundredfold (TestSaveLoadRoundTrip covers Save itself).
		first := mustMarshal(t, st)
		again := filepath.Join(dir, "again.json")
		if err := os.WriteFile(again, first, 0o600); err != nil {
			t.Fatal(err)
		}
		st2, err := state.Load(again, cfg)
		if err != nil {
			t.Fatalf("Load of a re-saved snapshot: %v\n%s", err, first)
		}
		if second := mustMarshal(t, st2); string(first) != string(second) {
			t.Errorf("re-saved snapshot differs:\n%s\n%s", first, second)
		}
		// What the loaded store answers is sane.
		for _, v := range st.Nodes(at(0)) {
			for _, s := range st.History(v.Info.ID) {
				if u := s.Usage; !(u.CPU >= 0 && u.CPU <= 1 && u.MemBW >= 0 && u.MemBW <= 1 && u.Net >= 0 && u.Net <= 1) {
					t.Errorf("node %s: load %+v out of [0, 1]", v.Info.ID, u)
				}
			}
			if n := len(st.History(v.Info.ID)); n > cfg.History {
				t.Errorf("node %s: %d samples kept, more than %d", v.Info.ID, n, cfg.History)
			}
		}
		if st.Jobs() > cfg.MaxJobs {
			t.Errorf("%d jobs, more than %d", st.Jobs(), cfg.MaxJobs)
		}
	})
}

// FuzzValidateMessage decodes arbitrary bytes as an agent's message:
// validation never panics, and a message it accepts is applied without
// error, acknowledged with its number, and leaves a store that snapshots
// and loads back.
func FuzzValidateMessage(f *testing.F) {
	for _, m := range []*pb.AgentMessage{
		sampleMsg(1, at(1), 0.42, 0.1),
		{Seq: 2, Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{UnixNanos: 1, CpuUtil: 1, MemUsed: 0, CpuPressure: 0, MemPressure: 1, NetRxBps: 1.25e9, NetTxBps: 0.5e9,
			Gpus: []*pb.GPUReading{{Index: 0, Util: 0.5, MemUsed: 0.5, PcieRxBps: 1e9, PcieTxBps: 1e9, NvlinkBps: 0}}}}},
		sampleMsg(3, at(1), math.NaN(), math.NaN()),
		sampleMsg(3, at(1), 1.5, 0),
		itersMsg(4, "job-1", 0, 1, 1.5, 2),
		itersMsg(5, "job-1", -1, 0.5),
		itersMsg(6, "", 0, 1),
		gapMsg(7, 3, 1),
		gapMsg(8, -1, 0),
		helloMsg(hello("n1", "a")),
		{Seq: 0},
		{Seq: 9},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m pb.AgentMessage
		if err := proto.Unmarshal(data, &m); err != nil {
			return
		}
		st := newStore(t, state.Config{History: 4, ProfileIterations: 16})
		if h := m.GetHello(); h != nil {
			// The hello as a stream's first message: no panic either way.
			st.Hello(h, at(0))
		}
		mustHello(t, st, hello("node", "agent"), at(0))
		err := state.ValidateMessage(&m)
		if err != nil {
			var fe *state.FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Errorf("ValidateMessage: %v, want a FieldError naming a field", err)
			}
			if _, aerr := st.Apply("node", &m, at(1)); aerr == nil {
				t.Errorf("Apply accepted what ValidateMessage refused (%v)", err)
			}
			return
		}
		seq, err := st.Apply("node", &m, at(1))
		if err != nil || seq != m.GetSeq() {
			t.Fatalf("Apply of a valid message: %d, %v; want %d", seq, err, m.GetSeq())
		}
		// A resend is skipped with the same ack.
		if again, err := st.Apply("node", &m, at(2)); err != nil || again != seq {
			t.Errorf("resend: %d, %v; want %d", again, err, seq)
		}
		v, _ := st.Node("node", at(2))
		if u := v.Last.Usage; !(u.CPU >= 0 && u.CPU <= 1 && u.MemBW >= 0 && u.MemBW <= 1 && u.Net >= 0 && u.Net <= 1) {
			t.Errorf("load %+v out of [0, 1]", u)
		}
		if it := m.GetIterations(); it != nil {
			st.JobModel(it.GetJobId(), "model", at(2))
			st.Profile(it.GetJobId(), "model")
			st.JobFinished(it.GetJobId(), at(3))
		}
		// Save's bytes, written without its fsyncs (see FuzzRestore).
		b, err := st.MarshalJSON()
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := state.Load(path, st.Config()); err != nil {
			t.Fatalf("Load of the saved state: %v", err)
		}
	})
}
