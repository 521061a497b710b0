package telemlog

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/pqlog"
)

// walOf returns samples as a write-ahead log's bytes.
func walOf(samples []Sample) []byte {
	var b []byte
	for i := range samples {
		b = pqlog.AppendFrame(format, b, &samples[i])
	}
	return append(walHeader(), b...)
}

// walHeader is the header of a telemetry log's write-ahead log
// (docs/format/telemetry-log.md).
func walHeader() []byte { return []byte("DWAL\x01\x01\x08telemlog") }

// TestFramesRoundTrip: every field, NaN included, survives the
// write-ahead log.
func TestFramesRoundTrip(t *testing.T) {
	want := makeSamples(30)
	got, lost, err := pqlog.ReadFrames(format, walOf(want))
	if err != nil || lost != 0 {
		t.Fatalf("ReadFrames: %v, %d bytes lost", err, lost)
	}
	if diff := cmp.Diff(want, got, nanEqual); diff != "" {
		t.Errorf("round trip (-want,+got):\n%s", diff)
	}
}

// FuzzDecodeWAL feeds arbitrary frames to the write-ahead log's reader: it
// returns valid samples and the lost bytes, never panics.
func FuzzDecodeWAL(f *testing.F) {
	valid := walOf(makeSamples(6))[len(walHeader()):]
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frames []byte) {
		samples, lost, err := pqlog.ReadFrames(format, append(walHeader(), frames...))
		if err != nil || lost > len(frames) {
			t.Fatalf("%v, %d of %d bytes lost", err, lost, len(frames))
		}
		for i := range samples {
			if err := samples[i].Validate(); err != nil {
				t.Fatalf("sample %d: %v", i, err)
			}
		}
	})
}

// TestRestartRecovers: samples written and never closed (a crash of the
// process once they reached the write-ahead log) are sealed by the next
// Writer, after the samples sealed before them, with a queue or without.
func TestRestartRecovers(t *testing.T) {
	for _, queue := range []int{0, DefaultQueue} {
		t.Run(fmt.Sprintf("queue=%d", queue), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(dir, Options{MaxSamples: 4, RowGroupSamples: 3, SealInterval: -1, Queue: queue})
			if err != nil {
				t.Fatal(err)
			}
			in := makeSamples(10)
			for _, s := range in {
				if err := w.Write(s); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.drain(); err != nil {
				t.Fatal(err)
			}
			// No Close: the process "dies" here; its open files are
			// abandoned (and its goroutine, if any, waits on an empty queue).
			w2, err := NewWriter(dir, Options{SealInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			want := []Recovery{{File: filepath.Join(dir, FileName(3)), Records: 2}}
			if diff := cmp.Diff(want, w2.Recovered()); diff != "" {
				t.Errorf("recovered (-want,+got):\n%s", diff)
			}
			if err := w2.Close(); err != nil {
				t.Fatal(err)
			}
			log, err := ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, log.Samples, nanEqual); diff != "" {
				t.Errorf("samples (-want,+got):\n%s", diff)
			}
		})
	}
}
