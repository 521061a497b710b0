package telemlog

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
// writer plus this test; rewritten on 2026-12-04 when the columns of
// distinct values, format.Plain, lost their dictionaries): 150 samples, 40 per row group, 100 per file,
// sealed in two files; and Encode of 12 samples.
func TestGoldenBytes(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, Options{MaxSamples: 100, RowGroupSamples: 40, SealInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range makeSamples(150) {
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(makeSamples(12))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(w.Files()); n != 2 {
		t.Fatalf("%d files sealed, want 2", n)
	}
	pqlogtest.Golden(t, map[string][]byte{"golden-encode.parquet": enc}, w.Files(), *updateGolden)
	pqlogtest.Encoding(t, enc)
}
