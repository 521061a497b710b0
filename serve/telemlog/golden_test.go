package telemlog

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// updateGolden rewrites the golden files of TestGoldenBytes. Run it only
// at a commit whose writer is known good, and commit the files with it.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*.parquet")

// TestGoldenBytes: the Writer and Encode produce, byte for byte, the files
// the writer produced before the shared machinery moved to internal/pqlog
// (testdata/golden-*.parquet, written by this test at commit 2ee1c5e's
// writer plus this test): 150 samples, 40 per row group, 100 per file,
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
	got := map[string][]byte{"golden-encode.parquet": enc}
	for _, p := range w.Files() {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got["golden-"+filepath.Base(p)] = data
	}
	if len(got) != 3 {
		t.Fatalf("%d files, want 3 (Encode and two sealed)", len(got))
	}
	for name, data := range got {
		path := filepath.Join("testdata", name)
		if *updateGolden {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, data) {
			t.Errorf("%s: %d bytes differ from the golden %d bytes", name, len(data), len(want))
		}
	}
}
