package declog

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/pqlog"
)

// walOf returns recs as a write-ahead log's bytes.
func walOf(recs []Record) []byte {
	var b []byte
	for i := range recs {
		b = pqlog.AppendFrame(format, b, &recs[i])
	}
	return append(walHeader(), b...)
}

// walHeader is the header of a decision log's write-ahead log
// (docs/format/decision-log.md).
func walHeader() []byte { return []byte("DWAL\x01\x01\x06declog") }

// TestFramesRoundTrip: every field of both kinds survives the write-ahead
// log, as it survives the Parquet file.
func TestFramesRoundTrip(t *testing.T) {
	want := makeRecords(60)
	got, lost, err := pqlog.ReadFrames(format, walOf(want))
	if err != nil || lost != 0 {
		t.Fatalf("ReadFrames: %v, %d bytes lost", err, lost)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
}

// FuzzDecodeWAL feeds arbitrary frames to the write-ahead log's reader: it
// returns valid records and the lost bytes, never panics.
func FuzzDecodeWAL(f *testing.F) {
	valid := walOf(makeRecords(6))[len(walHeader()):]
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frames []byte) {
		recs, lost, err := pqlog.ReadFrames(format, append(walHeader(), frames...))
		if err != nil || lost > len(frames) {
			t.Fatalf("%v, %d of %d bytes lost", err, lost, len(frames))
		}
		for i := range recs {
			if err := recs[i].Validate(); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	})
}
