package pqlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// The logs' Parquet reader: parquet-go's column pages, read value by
// value into each Column's Set. It reads what this package's encoder
// writes and what arrow-go's writer wrote before it (dictionary pages),
// and any file whose columns have the schema's types (nullable columns
// whose values are all set, timestamps in milliseconds or microseconds,
// int32 for int64, lists of two or three levels).

// Decode reads the records of one log file held in data; name is the
// file's name for error messages. It checks the version, the columns and
// every row, and returns a *FormatError naming the file, row and column of
// the first problem. Corrupt input never panics: a panic inside the
// Parquet library is recovered and returned as an error.
func Decode[T any](f *Format[T], data []byte, name string) (recs []T, err error) {
	defer func() {
		if p := recover(); p != nil {
			recs, err = nil, &FormatError{Log: f.Log, File: name, Field: "file", Err: fmt.Errorf("corrupt parquet: %v", p)}
		}
	}()
	fail := func(row int, field string, err error) ([]T, error) {
		return nil, &FormatError{Log: f.Log, File: name, Row: row, Field: field, Err: err}
	}
	pf, err := OpenFile(data)
	if err != nil {
		return fail(0, "file", err)
	}
	v, ok := pf.Lookup(f.VersionKey)
	if !ok {
		return fail(0, f.VersionKey, fmt.Errorf("%w: key missing", f.ErrVersion))
	}
	if v != f.Version {
		return fail(0, f.VersionKey, fmt.Errorf("%w: %q (this build reads %s)", f.ErrVersion, v, f.Version))
	}
	n := pf.NumRows()
	types := make(map[string]Type, len(f.Schema))
	for _, fd := range f.Schema {
		types[fd.Name] = fd.Type
	}
	rows := -1 // rows of the first column read; recs grows with it
	// Room for the rows the footer claims, within what the file's bytes
	// can hold (at a 64:1 compression; past that, append grows recs).
	recs = make([]T, 0, min(n, int64(64*len(data)+1024)))
	for _, c := range f.Columns {
		t, ok := types[c.Name]
		if !ok {
			panic(fmt.Sprintf("pqlog: %s: column %q is not in the schema", f.Log, c.Name))
		}
		has := pf.Has(c.Name)
		if !has && c.Optional {
			continue // an older file: the zero value
		}
		if !has {
			return fail(0, c.Name, errors.New("column missing"))
		}
		row := 0
		set := func(v *Value) error {
			if v == nil {
				return errors.New("null")
			}
			if rows < 0 {
				if int64(len(recs)) >= n {
					return fmt.Errorf("column has more than %d rows", n)
				}
				if len(recs) < cap(recs) {
					recs = recs[:len(recs)+1] // zeroed by make
				} else {
					var zero T
					recs = append(recs, zero)
				}
			} else if row >= rows {
				return fmt.Errorf("column has more than %d rows", rows)
			}
			if err := c.Set(&recs[row], *v); err != nil {
				return err
			}
			row++
			return nil
		}
		if err := pf.ReadColumn(c.Name, t, set); err != nil {
			return fail(row+1, c.Name, err)
		}
		if int64(row) != n {
			return fail(0, c.Name, fmt.Errorf("column has %d rows, want %d", row, n))
		}
		rows = row
	}
	if rows < 0 && n > 0 {
		return fail(0, "file", fmt.Errorf("%d rows and none of the log's columns", n))
	}
	for i := range recs {
		if f.Finish != nil {
			f.Finish(&recs[i])
		}
		if err := f.Validate(&recs[i]); err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.File, fe.Row = name, i+1
			}
			return nil, err
		}
	}
	return recs, nil
}

// File is a Parquet file opened to be read column by column: Decode's
// reader, for tables that are not logs (datasets' job table) too. Its
// methods may panic on corrupt input: recover, as Decode does.
type File struct {
	pf   *parquet.File
	buf  []parquet.Value
	strs []string // the strings of buf, for a String column
}

// OpenFile opens the Parquet file held in data, reading its footer.
func OpenFile(data []byte) (*File, error) {
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)),
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(4096))
	if err != nil {
		return nil, err
	}
	return &File{pf: pf}, nil
}

// Lookup returns the value of key in the file's key-value metadata.
func (f *File) Lookup(key string) (string, bool) { return f.pf.Lookup(key) }

// NumRows returns the number of rows the file's footer gives.
func (f *File) NumRows() int64 { return f.pf.NumRows() }

// Has reports whether the file has a top-level column of that name.
func (f *File) Has(name string) bool { return f.pf.Root().Column(name) != nil }

// ReadColumn calls set with each row's value of the top-level column
// name, read as type t, in row order, and returns set's first error or
// what is wrong with the column: missing, of a type that cannot be read
// as t, a null list element. A null value is nil (a null list is an empty
// one); int32 columns read as Int64, timestamps in milliseconds or
// microseconds as nanoseconds, and lists of two or three levels as lists.
func (f *File) ReadColumn(name string, t Type, set func(v *Value) error) error {
	col := f.pf.Root().Column(name)
	if col == nil {
		return errors.New("column missing")
	}
	leaf := col
	for !leaf.Leaf() {
		cs := leaf.Columns()
		if len(cs) != 1 {
			return fmt.Errorf("type group of %d columns, want %s", len(cs), t)
		}
		leaf = cs[0]
	}
	list, elem := t.list()
	maxRep, maxDef := leaf.MaxRepetitionLevel(), leaf.MaxDefinitionLevel()
	if maxRep > 1 || (maxRep == 1) != list {
		return fmt.Errorf("type %s of %d repeated levels, want %s", leaf.Type(), maxRep, t)
	}
	conv, err := f.converter(leaf.Type(), elem)
	if err != nil {
		return err
	}
	// A list's elements are at maxDef; below it, down to nullElem, a null
	// element; below that an empty or null list.
	nullElem := maxDef
	if leaf.Optional() {
		nullElem = maxDef - 1
	}
	if f.buf == nil {
		f.buf = make([]parquet.Value, 1024)
	}
	var v Value
	open := false // a list row is being read
	flush := func() error {
		if !open {
			return nil
		}
		open = false
		err := set(&v)
		v = Value{}
		return err
	}
	pages := leaf.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		vr := p.Values()
		for {
			k, rerr := vr.ReadValues(f.buf)
			if elem == String {
				f.strs = appendStrings(f.strs[:0], f.buf[:k])
			}
			for i, pv := range f.buf[:k] {
				if !list {
					var err error
					if pv.DefinitionLevel() < maxDef || pv.IsNull() {
						err = set(nil)
					} else if err = conv(&v, pv, i, false); err == nil {
						err = set(&v)
					}
					v = Value{}
					if err != nil {
						parquet.Release(p)
						return err
					}
					continue
				}
				if pv.RepetitionLevel() == 0 {
					if err := flush(); err != nil {
						parquet.Release(p)
						return err
					}
					open = true
				} else if !open {
					parquet.Release(p)
					return errors.New("list continued before it started")
				}
				switch d := pv.DefinitionLevel(); {
				case d >= maxDef && !pv.IsNull():
					if err := conv(&v, pv, i, true); err != nil {
						parquet.Release(p)
						return err
					}
				case d >= nullElem:
					parquet.Release(p)
					return fmt.Errorf("element %d: null", v.len())
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				parquet.Release(p)
				return rerr
			}
		}
		parquet.Release(p)
	}
	return flush()
}

// len returns the length of a list value.
func (v *Value) len() int { return len(v.Strs) + len(v.Ints) + len(v.Floats) }

// appendStrings appends the byte arrays of vs to dst as strings that
// share one allocation (a string per value would be most of a column's
// garbage).
func appendStrings(dst []string, vs []parquet.Value) []string {
	n := 0
	for i := range vs {
		n += len(vs[i].ByteArray())
	}
	var b strings.Builder
	b.Grow(n)
	for i := range vs {
		b.Write(vs[i].ByteArray())
	}
	all, off := b.String(), 0
	for i := range vs {
		l := len(vs[i].ByteArray())
		dst = append(dst, all[off:off+l])
		off += l
	}
	return dst
}

// converter returns the function that stores value pv, the i-th of the
// batch in f.buf, of the physical type pt into a Value of type t
// (appending it to the list when list is set), or an error when pt
// cannot be read as t.
func (f *File) converter(pt parquet.Type, t Type) (func(v *Value, pv parquet.Value, i int, list bool) error, error) {
	kind := pt.Kind()
	bad := fmt.Errorf("type %s, want %s", pt, t)
	switch t {
	case String:
		if kind != parquet.ByteArray {
			return nil, bad
		}
		return func(v *Value, _ parquet.Value, i int, list bool) error {
			s := f.strs[i]
			if list {
				v.Strs = append(v.Strs, s)
			} else {
				v.Str = s
			}
			return nil
		}, nil
	case Int64:
		if kind != parquet.Int64 && kind != parquet.Int32 || timeUnit(pt) != 0 {
			return nil, bad
		}
		return func(v *Value, pv parquet.Value, _ int, list bool) error {
			x := pv.Int64()
			if kind == parquet.Int32 {
				x = int64(pv.Int32())
			}
			if list {
				v.Ints = append(v.Ints, x)
			} else {
				v.Int = x
			}
			return nil
		}, nil
	case Float64:
		if kind != parquet.Double {
			return nil, bad
		}
		return func(v *Value, pv parquet.Value, _ int, list bool) error {
			if list {
				v.Floats = append(v.Floats, pv.Double())
			} else {
				v.Float = pv.Double()
			}
			return nil
		}, nil
	case Timestamp:
		unit := timeUnit(pt)
		if kind != parquet.Int64 || unit == 0 {
			return nil, bad
		}
		return func(v *Value, pv parquet.Value, _ int, _ bool) error {
			x := pv.Int64()
			if x > math.MaxInt64/unit || x < math.MinInt64/unit {
				return fmt.Errorf("timestamp %d x %d ns out of range", x, unit)
			}
			v.Int = x * unit
			return nil
		}, nil
	}
	panic(fmt.Sprintf("pqlog: no reader for column type %s", t))
}

// timeUnit returns the nanoseconds of the unit of a timestamp type, 0
// for a type that is not a timestamp.
func timeUnit(pt parquet.Type) int64 {
	if lt := pt.LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok {
			switch ts.Unit.Value.(type) {
			case *format.MilliSeconds:
				return 1e6
			case *format.MicroSeconds:
				return 1e3
			case *format.NanoSeconds:
				return 1
			}
		}
	}
	if ct := pt.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.TimestampMillis:
			return 1e6
		case deprecated.TimestampMicros:
			return 1e3
		}
	}
	return 0
}
