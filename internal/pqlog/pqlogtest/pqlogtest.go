// Package pqlogtest holds the test helpers of the logs built on
// internal/pqlog (datasets/declog, datasets/telemlog), as raft keeps its
// test harness in rafttest. Its checks read files with arrow-go, a reader
// independent of the one the logs use (parquet-go); only tests link it.
package pqlogtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Value is one row's value of a column as ArrowColumns read it. It has
// pqlog.Value's fields, so that pqlog.Value(v) converts it: this package
// cannot import pqlog, whose tests use it.
type Value struct {
	Str    string
	Int    int64
	Float  float64
	Strs   []string
	Ints   []int64
	Floats []float64
}

// ArrowColumns reads the Parquet file data with arrow-go (pqarrow), a
// reader independent of pqlog.Decode's parquet-go, and returns its rows
// and each column's values by name (nil for a null), as pqlog.Decode
// gives them to a Column's Set: timestamps in nanoseconds, empty lists
// nil.
func ArrowColumns(t testing.TB, data []byte) (rows int, cols map[string][]*Value) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	cols = map[string][]*Value{}
	for c := range int(tbl.NumCols()) {
		var vs []*Value
		for _, a := range tbl.Column(c).Data().Chunks() {
			for i := range a.Len() {
				if a.IsNull(i) {
					vs = append(vs, nil)
					continue
				}
				v := arrowValue(t, a, i)
				vs = append(vs, &v)
			}
		}
		cols[tbl.Column(c).Name()] = vs
	}
	return int(tbl.NumRows()), cols
}

// arrowValue returns row i of a.
func arrowValue(t testing.TB, a arrow.Array, i int) Value {
	switch a := a.(type) {
	case *array.String:
		return Value{Str: a.Value(i)}
	case *array.Int64:
		return Value{Int: a.Value(i)}
	case *array.Float64:
		return Value{Float: a.Value(i)}
	case *array.Timestamp:
		u := a.DataType().(*arrow.TimestampType).Unit
		return Value{Int: a.Value(i).ToTime(u).UnixNano()}
	case *array.List:
		var v Value
		lo, hi := a.ValueOffsets(i)
		for k := lo; k < hi; k++ {
			e := arrowValue(t, a.ListValues(), int(k))
			switch a.ListValues().(type) {
			case *array.String:
				v.Strs = append(v.Strs, e.Str)
			case *array.Int64:
				v.Ints = append(v.Ints, e.Int)
			case *array.Float64:
				v.Floats = append(v.Floats, e.Float)
			}
		}
		return v
	}
	t.Fatalf("arrow-go: array of type %s", a.DataType())
	return Value{}
}

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

// Encoding checks what the logs' encoder (internal/pqlog) promises of
// every column chunk of the Parquet file data: zstd, no dictionary page,
// and, on the columns that are not lists, statistics of no nulls whose
// min and max are the chunk's smallest and largest values (NaN aside),
// read back by arrow-go; a chunk holding a string longer than 64 bytes
// (the encoder's statMax) has no min and max.
func Encoding(t testing.TB, data []byte) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	md := pf.MetaData()
	if md.NumRowGroups() == 0 {
		t.Fatal("no row groups")
	}
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		leaves := make([]int, rg.NumColumns())
		for i := range leaves {
			leaves[i] = i
		}
		tbl, err := fr.ReadRowGroups(context.Background(), leaves, []int{g})
		if err != nil {
			t.Fatal(err)
		}
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			path := cc.PathInSchema().String()
			if cc.HasDictionaryPage() {
				t.Errorf("row group %d, column %s: a dictionary page", g, path)
			}
			if cc.Compression() != compress.Codecs.Zstd {
				t.Errorf("row group %d, column %s: compression %v, want zstd", g, path, cc.Compression())
			}
			st, err := cc.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			col := tbl.Column(c).Data().Chunks()
			if len(col) > 0 && col[0].DataType().ID() == arrow.LIST {
				if st != nil {
					t.Errorf("row group %d, column %s: statistics on a list", g, path)
				}
				continue
			}
			if st != nil && !st.HasMinMax() && longString(col) {
				continue
			}
			if st == nil || !st.HasMinMax() || !st.HasNullCount() || st.NullCount() != 0 {
				t.Errorf("row group %d, column %s: statistics %v, want null count 0, min and max", g, path, st)
				continue
			}
			if got, want := statMinMax(st), arrayMinMax(col); got != want {
				t.Errorf("row group %d, column %s: statistics min, max %s, values' %s", g, path, got, want)
			}
		}
		tbl.Release()
	}
}

// statMinMax formats a chunk's statistics' min and max.
func statMinMax(st metadata.TypedStatistics) string {
	switch s := st.(type) {
	case *metadata.Int64Statistics:
		return fmt.Sprint(s.Min(), s.Max())
	case *metadata.Float64Statistics:
		return fmt.Sprint(noSign(s.Min()), noSign(s.Max()))
	case *metadata.ByteArrayStatistics:
		return fmt.Sprintf("%q %q", s.Min(), s.Max())
	}
	return fmt.Sprintf("statistics of type %T", st)
}

// arrayMinMax formats the smallest and largest values of a column's
// chunks, as statMinMax does a chunk's statistics.
func arrayMinMax(chunks []arrow.Array) string {
	var ints []int64
	var floats []float64
	var strs []string
	for _, a := range chunks {
		switch a := a.(type) {
		case *array.Int64:
			ints = append(ints, a.Int64Values()...)
		case *array.Timestamp:
			for _, v := range a.TimestampValues() {
				ints = append(ints, int64(v))
			}
		case *array.Float64:
			for _, v := range a.Float64Values() {
				if !math.IsNaN(v) {
					floats = append(floats, v)
				}
			}
		case *array.String:
			for i := range a.Len() {
				strs = append(strs, a.Value(i))
			}
		default:
			return fmt.Sprintf("array of type %s", a.DataType())
		}
	}
	switch {
	case len(ints) > 0:
		return fmt.Sprint(slices.Min(ints), slices.Max(ints))
	case len(floats) > 0:
		return fmt.Sprint(noSign(slices.Min(floats)), noSign(slices.Max(floats)))
	case len(strs) > 0:
		return fmt.Sprintf("%q %q", slices.Min(strs), slices.Max(strs))
	}
	return "no values"
}

// noSign returns v, +0 for -0: a chunk's float statistics write a zero
// min as -0 and a zero max as +0, whatever zeros it holds.
func noSign(v float64) float64 {
	if v == 0 {
		return 0
	}
	return v
}

// longString reports whether a string column's chunks hold a string
// longer than the encoder's statMax, 64 bytes.
func longString(chunks []arrow.Array) bool {
	for _, a := range chunks {
		if s, ok := a.(*array.String); ok {
			for i := range s.Len() {
				if len(s.Value(i)) > 64 {
					return true
				}
			}
		}
	}
	return false
}
