package declog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/pqlog"
	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// TestReadersAgree: every file of testdata (the golden files of this
// package's encoder and the v1 files arrow-go's writer wrote before new
// columns, with dictionaries) reads the same with Decode (parquet-go) as
// with arrow-go, an independent reader, through the same columns.
func TestReadersAgree(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.parquet"))
	if err != nil || len(paths) < 6 {
		t.Fatalf("testdata files %v, %v; want the golden and v1 files", paths, err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(data, p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(arrowDecode(t, data), got); diff != "" {
				t.Errorf("Decode against arrow-go (-arrow,+Decode):\n%s", diff)
			}
		})
	}
}

// arrowDecode reads a log file with arrow-go (pqlogtest.ArrowColumns)
// into records through the format's columns, as Decode does with
// parquet-go.
func arrowDecode(t *testing.T, data []byte) []Record {
	t.Helper()
	n, cols := pqlogtest.ArrowColumns(t, data)
	recs := make([]Record, n)
	for _, c := range columns {
		for i, v := range cols[c.Name] {
			if v == nil {
				continue
			}
			if err := c.Set(&recs[i], pqlog.Value(*v)); err != nil {
				t.Fatalf("arrow-go: row %d, column %q: %v", i+1, c.Name, err)
			}
		}
	}
	for i := range recs {
		finish(&recs[i])
	}
	return recs
}
