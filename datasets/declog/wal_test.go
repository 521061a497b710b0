package declog

import (
	"os"
	"path/filepath"
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

// TestReadDirTail: ReadDir sees only sealed files; ReadDirTail also reads
// the unsealed tail from the write-ahead logs: a live Writer's current
// file once its records reached the WAL (a torn last frame left out),
// and not a WAL whose file is sealed already (the moment between the
// rename and the WAL's removal).
func TestReadDirTail(t *testing.T) {
	dir := t.TempDir()
	recs := makeRecords(9)
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs[:3]...); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil { // sealed: decisions-000001.parquet
		t.Fatal(err)
	}
	if err := w.Append(recs[3:7]...); err != nil {
		t.Fatal(err)
	}
	if err := w.drain(); err != nil { // in decisions-000002.wal, unsealed
		t.Fatal(err)
	}
	sealed, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed.Records) != 3 || sealed.Tail != 0 || len(sealed.Partial) == 0 {
		t.Fatalf("ReadDir: %d records, tail %d, partial %v; want the 3 sealed, none, the live file", len(sealed.Records), sealed.Tail, sealed.Partial)
	}
	live, err := ReadDirTail(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs[:7], live.Records); diff != "" || live.Tail != 4 {
		t.Errorf("ReadDirTail of a live writer: tail %d, want 4; records (-want,+got):\n%s", live.Tail, diff)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// By hand: a stale WAL beside its sealed file, and a WAL with a torn
	// last frame.
	stale := walOf(recs[:3])
	if err := os.WriteFile(filepath.Join(dir, "decisions-000001.wal"), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	torn := walOf(recs[7:9])
	if err := os.WriteFile(filepath.Join(dir, "decisions-000003.wal"), torn[:len(torn)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDirTail(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs[:8], got.Records); diff != "" || got.Tail != 1 {
		t.Errorf("ReadDirTail: tail %d, want 1; records (-want,+got):\n%s", got.Tail, diff)
	}
}
