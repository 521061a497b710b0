package pqlog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// row is the record of the test log: a sequence number and a name.
type row struct {
	Seq  int64
	Name string
}

var errVersion = errors.New("bad test log version")

// testFormat is a two-column log, "rows-NNNNNN.parquet".
var testFormat = &Format[row]{
	Log:        "pqlogtest",
	Prefix:     "rows-",
	Schema:     []Field{{Name: "seq", Type: Int64}, {Name: "name", Type: String}},
	VersionKey: "v", Version: "1", ErrVersion: errVersion, ErrClosed: errors.New("closed"), CreatedBy: "pqlog test",
	Append: func(b *Row, r *row) {
		b.Int64(0, r.Seq)
		b.String(1, r.Name)
	},
	Columns: []Column[row]{
		{Name: "seq", Set: func(r *row, v Value) error { r.Seq = v.Int; return nil }},
		{Name: "name", Set: func(r *row, v Value) error { r.Name = v.Str; return nil }},
	},
	Validate: func(r *row) error {
		if r.Seq < 0 {
			return &FormatError{Log: "pqlogtest", Field: "seq", Err: errors.New("negative")}
		}
		return nil
	},
	FrameVersion: 1,
	AppendFrame:  func(b []byte, r *row) []byte { return AppendString(AppendInt(b, r.Seq), r.Name) },
	DecodeFrame:  func(d *Dec) row { return row{Seq: d.Int(), Name: d.String()} },
}

func makeRows(n int) []row {
	rs := make([]row, n)
	for i := range rs {
		rs[i] = row{Seq: int64(i), Name: fmt.Sprintf("row-%d", i)}
	}
	return rs
}

// waitQueueTaken waits until w's background goroutine has taken every
// queued record.
func waitQueueTaken[T any](w *Writer[T]) {
	for {
		w.qmu.Lock()
		n := len(w.pending)
		w.qmu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestQueueDrops: with the background goroutine held, Write queues up to
// Queue records and drops (and counts) the rest without blocking; Close
// writes every queued record.
func TestQueueDrops(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 4, Queue: 5})
	if err != nil {
		t.Fatal(err)
	}
	rs := makeRows(9)
	w.mu.Lock() // hold the files: the goroutine takes one batch and waits
	if err := w.Write(rs[0]); err != nil {
		t.Fatal(err)
	}
	waitQueueTaken(w)
	if err := w.Write(rs[1:]...); err != nil { // 5 fit, 3 dropped
		t.Fatal(err)
	}
	if got := w.Dropped(); got != 3 {
		t.Errorf("dropped %d, want 3", got)
	}
	w.mu.Unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := ReadDir(testFormat, dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rs[:6], log.Records); diff != "" {
		t.Errorf("records (-want,+got):\n%s", diff)
	}
	if err := w.Write(rs[0]); !errors.Is(err, testFormat.ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
}

// TestQueueMatchesDirect: the queue changes who writes, not what: the
// same records, limits and flushes give byte-identical files with and
// without a queue, written from concurrent goroutines with Flush calls
// among them (each goroutine's order kept).
func TestQueueMatchesDirect(t *testing.T) {
	rs := makeRows(500)
	files := map[int][][]byte{}
	for _, queue := range []int{0, 1 << 20} {
		dir := t.TempDir()
		w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 16, MaxRecords: 100, Queue: queue})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(rs); i += 50 {
			if err := w.Write(rs[i : i+50]...); err != nil {
				t.Fatal(err)
			}
			if i == 100 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Files() {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[queue] = append(files[queue], data)
		}
	}
	if len(files[0]) != 6 || len(files[0]) != len(files[1<<20]) {
		t.Fatalf("%d and %d files, want 6 each", len(files[0]), len(files[1<<20]))
	}
	for i := range files[0] {
		if !bytes.Equal(files[0][i], files[1<<20][i]) {
			t.Errorf("file %d differs with a queue", i+1)
		}
	}

	dir := t.TempDir()
	w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 7, MaxRecords: 30, Queue: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(rs); i += 4 {
				if err := w.Write(rs[i]); err != nil {
					t.Error(err)
				}
				if i%97 == 0 {
					if err := w.Flush(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := ReadDir(testFormat, dir)
	if err != nil {
		t.Fatal(err)
	}
	last := map[int64]int64{0: -4, 1: -3, 2: -2, 3: -1}
	for _, r := range log.Records {
		if g := r.Seq % 4; r.Seq != last[g]+4 {
			t.Fatalf("goroutine %d: %d after %d", g, r.Seq, last[g])
		}
		last[r.Seq%4] = r.Seq
	}
	if len(log.Records) != len(rs) || w.Dropped() != 0 {
		t.Errorf("%d records, %d dropped; want %d, 0", len(log.Records), w.Dropped(), len(rs))
	}
}

// TestSealIntervalOnCaller: the seal interval is measured by the times
// Write accepted the records, so it does not depend on when the queue
// reaches them.
func TestSealIntervalOnCaller(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1e9, 0)
	w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 100, SealInterval: time.Minute, Now: func() time.Time { return now }, Queue: 100})
	if err != nil {
		t.Fatal(err)
	}
	rs := makeRows(5)
	for i := range rs {
		now = time.Unix(1e9, 0).Add(time.Duration(i) * 25 * time.Second)
		if err := w.Write(rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(w.Files()); got != 2 { // 0, 25, 50 s; then 75, 100 s
		t.Errorf("%d files, want 2", got)
	}
}

// TestFrames: frames round-trip, and every prefix of a log decodes to a
// prefix of its records with the rest counted as lost.
func TestFrames(t *testing.T) {
	rs := makeRows(20)
	data := testFormat.appendHeader(nil)
	var ends []int
	for i := range rs {
		data = AppendFrame(testFormat, data, &rs[i])
		ends = append(ends, len(data))
	}
	got, lost, err := ReadFrames(testFormat, data)
	if err != nil || lost != 0 {
		t.Fatalf("ReadFrames: %v, %d lost", err, lost)
	}
	if diff := cmp.Diff(rs, got); diff != "" {
		t.Errorf("records (-want,+got):\n%s", diff)
	}
	h := len(testFormat.appendHeader(nil))
	for n := h; n <= len(data); n++ {
		got, lost, err := ReadFrames(testFormat, data[:n])
		whole := 0
		for whole < len(ends) && ends[whole] <= n {
			whole++
		}
		if err != nil || len(got) != whole || n-lost != max(h, endOr(ends, whole-1, h)) {
			t.Fatalf("prefix %d: %d records, %d lost, %v; want %d records", n, len(got), lost, err, whole)
		}
	}
	if _, _, err := ReadFrames(testFormat, []byte("DWAL\x02")); !errors.Is(err, ErrWALHeader) {
		t.Errorf("bad header: %v, want ErrWALHeader", err)
	}
}

func endOr(ends []int, i, def int) int {
	if i < 0 {
		return def
	}
	return ends[i]
}

// FuzzReadFrames: arbitrary bytes after a valid header never panic, and
// the records and lost bytes account for the whole input.
func FuzzReadFrames(f *testing.F) {
	rs := makeRows(3)
	valid := testFormat.appendHeader(nil)
	for i := range rs {
		valid = AppendFrame(testFormat, valid, &rs[i])
	}
	f.Add(valid, uint64(0))
	f.Add(valid[:len(valid)-3], uint64(1))
	f.Add([]byte("DWAL"), uint64(2))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		if len(data) > 0 && seed%2 == 1 {
			rng := rand.New(rand.NewPCG(seed, seed))
			data = bytes.Clone(data)
			data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
		}
		got, lost, err := ReadFrames(testFormat, data)
		if lost < 0 || lost > len(data) || (err != nil && len(got) > 0) {
			t.Fatalf("%d records, %d of %d bytes lost, %v", len(got), lost, len(data), err)
		}
	})
}

// TestRecoverWAL: a write-ahead log left by a crash becomes its sealed
// file, with rowGroup records per row group: the same bytes a Writer
// sealing those records writes.
func TestRecoverWAL(t *testing.T) {
	rs := makeRows(10)
	dir := t.TempDir()
	w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, testFormat.FileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	wal := testFormat.appendHeader(nil)
	for i := range rs {
		wal = AppendFrame(testFormat, wal, &rs[i])
	}
	if err := os.WriteFile(filepath.Join(crashed, "rows-000001.wal"), wal, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = NewWriter(testFormat, crashed, Config[row]{RowGroup: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if diff := cmp.Diff([]Recovery{{File: filepath.Join(crashed, testFormat.FileName(1)), Records: 10}}, w.Recovered()); diff != "" {
		t.Errorf("recovered (-want,+got):\n%s", diff)
	}
	got, err := os.ReadFile(filepath.Join(crashed, testFormat.FileName(1)))
	if err != nil || !bytes.Equal(want, got) {
		t.Errorf("recovered file: %v, or bytes differ from the sealed one", err)
	}
}

// TestNewWriterWarmsZstd: a queued Writer has the zstd encoder made (and
// its tables used) by NewWriter, before the first row group, which would
// otherwise pay for it on the background goroutine while serving.
func TestNewWriterWarmsZstd(t *testing.T) {
	// As in a fresh process (the package's other tests made it).
	zstdMu.Lock()
	zstdEnc = nil
	zstdMu.Unlock()
	warm = sync.Once{}
	w, err := NewWriter(testFormat, t.TempDir(), Config[row]{RowGroup: 4, Queue: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	zstdMu.Lock()
	made := zstdEnc != nil
	zstdMu.Unlock()
	if !made {
		t.Error("NewWriter left the zstd encoder unmade")
	}
}

// TestWALDelay: with Config.WALDelay the background goroutine holds the
// write-ahead log's frames in memory (the .wal stays empty while records
// are taken from the queue) until they are that old, when its timer wakes
// it with no new record; Flush writes them at once; and without a delay
// every batch is written as it is taken.
func TestWALDelay(t *testing.T) {
	walSize := func(dir string) int64 {
		fi, err := os.Stat(filepath.Join(dir, testFormat.walName(1)))
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	// waitTaken waits until the goroutine has taken the queue and
	// finished the batch (it holds mu while writing).
	waitTaken := func(w *Writer[row]) {
		waitQueueTaken(w)
		w.mu.Lock()
		w.mu.Unlock()
	}
	// eventually waits up to a minute (what a loaded machine under -race
	// cannot take) for the .wal to hold something.
	eventually := func(dir string) bool {
		for range 6000 {
			if walSize(dir) > 0 {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	rs := makeRows(5)

	t.Run("held until flushed", func(t *testing.T) {
		dir := t.TempDir()
		w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 100, Queue: 100, WALDelay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, r := range rs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
		w.qmu.Lock()
		queued := len(w.pending)
		w.qmu.Unlock()
		if queued != len(rs) {
			t.Errorf("%d records queued within the delay, want %d (the goroutine took them early)", queued, len(rs))
		}
		if n := walSize(dir); n > 0 {
			t.Errorf("the write-ahead log holds %d bytes within its delay, want none yet", n)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		log, err := ReadDir(testFormat, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(log.Records) != len(rs) {
			t.Errorf("%d records after Flush, want %d", len(log.Records), len(rs))
		}
	})
	// A full batch is taken at once, delay or not; its frames still wait.
	t.Run("batch", func(t *testing.T) {
		dir := t.TempDir()
		w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 1000, Queue: 1000, WALDelay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, r := range makeRows(wakeBatch) {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		waitTaken(w)
		if n := walSize(dir); n > 0 {
			t.Errorf("the write-ahead log holds %d bytes within its delay, want none yet", n)
		}
	})
	// Written by the timer, with no record after the first; and at once
	// without a delay.
	for _, delay := range []time.Duration{20 * time.Millisecond, 0} {
		t.Run(fmt.Sprintf("delay=%v", delay), func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(testFormat, dir, Config[row]{RowGroup: 100, Queue: 100, WALDelay: delay})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Write(rs[0]); err != nil {
				t.Fatal(err)
			}
			if !eventually(dir) {
				t.Errorf("the write-ahead log stayed empty a minute after a record, with a delay of %v", delay)
			}
		})
	}
}
