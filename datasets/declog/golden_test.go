package declog

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// updateGolden rewrites the golden files of TestGoldenBytes. Run it only
// at a commit whose writer is known good, and commit the files with it.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*.parquet")

// TestGoldenBytes: the Writer and Encode produce, byte for byte, the files
// the writer produced before the shared machinery moved to internal/pqlog
// (testdata/golden-*.parquet, written by this test at commit 2ee1c5e's
// writer plus this test; rewritten on 2026-12-04 when the columns of
// distinct values, format.Plain, lost their dictionaries): 150 records, 40 per row group, 100 per file,
// sealed in two files; and Encode of 12 records.
func TestGoldenBytes(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, WithClock(tick()), WithRowGroupRecords(40), WithMaxRecords(100))
	if err != nil {
		t.Fatal(err)
	}
	recs := makeRecords(150)
	for i := range recs {
		if err := w.Append(recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(makeRecords(12))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.Files()); n != 2 {
		t.Fatalf("%d files sealed, want 2", n)
	}
	pqlogtest.Golden(t, map[string][]byte{"golden-encode.parquet": enc}, w.Files(), *updateGolden)
	pqlogtest.Encoding(t, enc)
}

// TestWriterMatchesEncode: the Writer, which encodes a row group a column
// at a time in slices of 64 rows, writes the bytes Encode writes in one
// call (one row group of 300 records: five slices, list columns of 0 to 3
// elements and files sealed by count).
func TestWriterMatchesEncode(t *testing.T) {
	recs := makeRecords(300)
	want, err := Encode(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, queue := range []int{DefaultQueue, 0} {
		t.Run(fmt.Sprintf("queue=%d", queue), func(t *testing.T) {
			w := writeLog(t, t.TempDir(), recs, WithRowGroupRecords(len(recs)), WithMaxRecords(len(recs)), WithQueue(queue))
			if len(w.Files()) != 1 {
				t.Fatalf("%d files, want 1", len(w.Files()))
			}
			got, err := os.ReadFile(w.Files()[0])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the Writer's file (%d bytes) differs from Encode's (%d bytes)", len(got), len(want))
			}
		})
	}
}
