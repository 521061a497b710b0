// Package pqlogtest holds the test helpers of the logs built on
// internal/pqlog (serve/declog, serve/telemlog), as raft keeps its test
// harness in rafttest.
package pqlogtest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// Golden compares each file's bytes with testdata/NAME in the test's
// package: the encoder's output is deterministic for the same records and
// writer properties, so a difference is a change of format. Encoded holds
// in-memory files by name; sealed lists files on disk, compared under
// the name "golden-" + their base name. With update set it rewrites the
// golden files instead (commit them only with a writer known good).
func Golden(t testing.TB, encoded map[string][]byte, sealed []string, update bool) {
	t.Helper()
	got := map[string][]byte{}
	for name, data := range encoded {
		got[name] = data
	}
	for _, p := range sealed {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got["golden-"+filepath.Base(p)] = data
	}
	for name, data := range got {
		path := filepath.Join("testdata", name)
		if update {
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

// Dictionaries checks that every column chunk of the Parquet file data
// has a dictionary page unless its column path is in plain, and has none
// when it is (pqlog.Format's Plain).
func Dictionaries(t testing.TB, data []byte, plain []string) {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData()
	if md.NumRowGroups() == 0 {
		t.Fatal("no row groups")
	}
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			path := cc.PathInSchema().String()
			if want := !slices.Contains(plain, path); cc.HasDictionaryPage() != want {
				t.Errorf("row group %d, column %s: dictionary page %v, want %v", g, path, cc.HasDictionaryPage(), want)
			}
		}
	}
}
