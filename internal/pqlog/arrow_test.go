package pqlog

import (
	"testing"

	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// arrowDecode reads the log file data with arrow-go (pqlogtest.ArrowColumns)
// into records through f's Columns, as Decode does with parquet-go, so
// that a test can check that both readers agree. Nulls and missing
// optional columns leave the zero value; Finish is applied, Validate is
// not.
func arrowDecode[T any](t testing.TB, f *Format[T], data []byte) []T {
	t.Helper()
	n, cols := pqlogtest.ArrowColumns(t, data)
	recs := make([]T, n)
	for _, c := range f.Columns {
		vs, ok := cols[c.Name]
		if !ok && !c.Optional {
			t.Fatalf("arrow-go: column %q missing", c.Name)
		}
		for i, v := range vs {
			if v == nil {
				continue
			}
			if err := c.Set(&recs[i], Value(*v)); err != nil {
				t.Fatalf("arrow-go: row %d, column %q: %v", i+1, c.Name, err)
			}
		}
	}
	if f.Finish != nil {
		for i := range recs {
			f.Finish(&recs[i])
		}
	}
	return recs
}
