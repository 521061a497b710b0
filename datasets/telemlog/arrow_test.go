package telemlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/internal/pqlog"
	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// TestReadersAgree: every file of testdata reads the same with Decode
// (parquet-go) as with arrow-go, an independent reader, through the same
// columns.
func TestReadersAgree(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.parquet"))
	if err != nil || len(paths) < 3 {
		t.Fatalf("testdata files %v, %v; want the golden files", paths, err)
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
			n, cols := pqlogtest.ArrowColumns(t, data)
			want := make([]Sample, n)
			for _, c := range format.Columns {
				for i, v := range cols[c.Name] {
					if v == nil {
						continue
					}
					if err := c.Set(&want[i], pqlog.Value(*v)); err != nil {
						t.Fatalf("arrow-go: row %d, column %q: %v", i+1, c.Name, err)
					}
				}
			}
			for i := range want {
				format.Finish(&want[i])
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("Decode against arrow-go (-arrow,+Decode):\n%s", diff)
			}
		})
	}
}
