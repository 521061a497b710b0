package declog

import (
	"flag"
	"testing"

	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// updateGolden rewrites the golden files of TestGoldenBytes. Run it only
// at a commit whose writer is known good, and commit the files with it.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*.parquet")

// TestGoldenBytes: the Writer and Encode produce, byte for byte, the files
// the writer produced before the shared machinery moved to internal/pqlog
// (testdata/golden-*.parquet, written by this test at commit 2ee1c5e's
// writer plus this test): 150 records, 40 per row group, 100 per file,
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
}
