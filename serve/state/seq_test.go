package state_test

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// TestSeqNoWrap: a number above MaxSeq is refused, naming the field, and
// the agent's later messages are applied. Issue 32: after one message
// with seq 2^64-1 every later message of the agent was acknowledged as a
// resend and dropped.
func TestSeqNoWrap(t *testing.T) {
	for _, seq := range []uint64{math.MaxUint64, state.MaxSeq + 1} {
		st := newStore(t, state.Config{})
		mustHello(t, st, hello("n1", "a1"), at(0))
		mustApply(t, st, "n1", sampleMsg(1, at(1), 0.1, 0), at(1))
		_, err := st.Apply("n1", sampleMsg(seq, at(2), 0.2, 0), at(2))
		var fe *state.FieldError
		if !errors.As(err, &fe) || fe.Field != "seq" {
			t.Errorf("seq %d: %v, want a FieldError naming seq", seq, err)
		}
		if got := mustApply(t, st, "n1", sampleMsg(2, at(3), 0.3, 0), at(3)); got != 2 {
			t.Errorf("after seq %d was sent: seq 2 acked %d, want 2", seq, got)
		}
		if v, _ := st.Node("n1", at(3)); v.Samples != 2 || v.Last.Usage.CPU != 0.3 {
			t.Errorf("after seq %d was sent: %d samples, CPU %v; want 2 samples, 0.3 (seq 2 applied)", seq, v.Samples, v.Last.Usage.CPU)
		}
	}
	// MaxSeq itself is a number like any other.
	st := newStore(t, state.Config{})
	mustHello(t, st, hello("n1", "a1"), at(0))
	if got := mustApply(t, st, "n1", sampleMsg(state.MaxSeq, at(1), 0.1, 0), at(1)); got != state.MaxSeq {
		t.Errorf("seq MaxSeq acked %d", got)
	}
}

// TestSeqGaps: a jump in an agent's numbers that no Gap message accounts
// for is counted, per node and in the summary, with the messages it
// skipped; resends, a Gap covering the jump, and the first message after
// a hello that starts the numbers (the baseline) are not gaps. Issue 32:
// jumps (5 -> 100) passed without any notice.
func TestSeqGaps(t *testing.T) {
	type counts struct{ Gaps, Missing int64 }
	st := newStore(t, state.Config{})
	mustHello(t, st, hello("n1", "a1"), at(0))
	steps := []struct {
		name string
		msg  *pb.AgentMessage
		want counts
	}{
		{"baseline 5", sampleMsg(5, at(1), 0.1, 0), counts{}},
		{"6 follows 5", sampleMsg(6, at(2), 0.1, 0), counts{}},
		{"resend 3", sampleMsg(3, at(2), 0.1, 0), counts{}},
		{"jump 6 -> 100", sampleMsg(100, at(3), 0.1, 0), counts{1, 93}},
		// A Gap's number is that of the last message it stands for: 101
		// to 104, four dropped, accounted for.
		{"gap of 4 at 104", gapMsg(104, 3, 1), counts{1, 93}},
		{"105", itersMsg(105, "j", 0, 1), counts{1, 93}},
		// A Gap of 2 at 110: 106..108 missing beyond it (3 messages).
		{"gap of 2 at 110", gapMsg(110, 2, 0), counts{2, 96}},
		{"jump 110 -> 112", sampleMsg(112, at(4), 0.1, 0), counts{3, 97}},
	}
	for _, s := range steps {
		mustApply(t, st, "n1", s.msg, at(5))
		v, _ := st.Node("n1", at(5))
		if diff := cmp.Diff(s.want, counts{v.SeqGaps, v.Missing}); diff != "" {
			t.Errorf("%s: node's gaps (-want,+got):\n%s", s.name, diff)
		}
	}
	sum := st.Summarize(at(5))
	if diff := cmp.Diff(counts{3, 97}, counts{sum.SeqGaps, sum.Missing}); diff != "" {
		t.Errorf("summary's gaps (-want,+got):\n%s", diff)
	}
	// A new agent of the node starts afresh: its first number is a
	// baseline again, its jumps counted on top.
	mustHello(t, st, hello("n1", "a2"), at(6))
	mustApply(t, st, "n1", sampleMsg(1, at(7), 0.1, 0), at(7))
	mustApply(t, st, "n1", sampleMsg(3, at(8), 0.1, 0), at(8))
	if v, _ := st.Node("n1", at(8)); v.SeqGaps != 4 || v.Missing != 98 {
		t.Errorf("after the new agent's 1 -> 3: %d gaps, %d missing; want 4, 98", v.SeqGaps, v.Missing)
	}
	// The counts survive a snapshot.
	if v, _ := saveLoad(t, st).Node("n1", at(8)); v.SeqGaps != 4 || v.Missing != 98 {
		t.Errorf("after a snapshot: %d gaps, %d missing; want 4, 98", v.SeqGaps, v.Missing)
	}
}

// saveLoad saves st and loads it back with st's config.
func saveLoad(t *testing.T, st *state.Store) *state.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.json")
	if err := st.Save(path, at(100)); err != nil {
		t.Fatalf("Save: %v", err)
	}
	st2, err := state.Load(path, st.Config())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return st2
}
