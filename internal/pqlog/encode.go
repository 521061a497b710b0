package pqlog

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The logs' Parquet encoder. parquet-go reads the files (Decode, ReadDir),
// but they are written by this small encoder of our own, for the one
// thing arrow-go's writer could not do on the server's processor: encode
// 10,000 records/s beside the Place calls without holding the processor
// long. arrow-go's writer builds a row group in Arrow builders and
// encodes each column chunk in one call: 7.4 us, 16 allocations and
// 2.7 KB of garbage per decision record (declog's BenchmarkAppend), a
// column's compression that cannot be divided (up to 0.9 ms), and
// buffers whose pages the runtime's scavenger returned to the OS and the
// next row group faulted back in (1.1-1.3 ms slices). This encoder
// appends each value to its column's page buffer as the record arrives,
// compresses a page once it reaches pageSize (one page at a time, so the
// Writer can yield between pages), keeps every buffer for the next page,
// row group and file, and encodes each row group's metadata as the row
// group is written, so that sealing a file only copies it.
//
// What it writes (docs/format/decision-log.md): Parquet format version 2
// files of required columns, each a string (BYTE_ARRAY, UTF8), an int64,
// a timestamp (INT64, nanoseconds, UTC), a double, or a required list of
// required strings, int64s or doubles (the three-level LIST structure,
// element "element"); v1 data pages, PLAIN values, RLE/bit-packed levels
// (one bit-packed run per page), zstd; column statistics (null count, min
// and max) on the columns that are not lists; no dictionaries (zstd
// compresses the repeated strings about as well); the Format's schema
// metadata as the file's key-value metadata.

// pageSize is the uncompressed bytes of values and levels at which a
// column's page is compressed and closed. Compressing 16 KiB took 20-60 us
// on the benchmark machine: the longest the Writer holds the processor
// between two yields.
const pageSize = 16 << 10

// statMax is the longest string kept as a column chunk's min or max;
// a chunk with a longer string has no min and max.
const statMax = 64

// Parquet's enumerations, as far as the encoder uses them.
const (
	pqInt64     = 2 // Type
	pqDouble    = 5
	pqByteArray = 6

	pqRequired = 0 // FieldRepetitionType
	pqRepeated = 2

	ctUTF8 = 0 // ConvertedType
	ctLIST = 3

	encPlain = 0 // Encoding
	encRLE   = 3

	codecZstd = 6 // CompressionCodec

	pageData = 0 // PageType
)

// leafKind is a column's physical type.
type leafKind uint8

const (
	leafString leafKind = iota
	leafInt64
	leafFloat64
)

func (k leafKind) String() string {
	return [...]string{"string", "int64", "float64"}[k]
}

// leaf is one column of a Format's schema, as the encoder writes it.
type leaf struct {
	name string
	kind leafKind
	list bool // a required list of required values
	ts   bool // an int64 timestamp, nanoseconds, UTC
}

// leaves returns the columns of a schema, or an error naming the first
// field the encoder cannot write.
func leaves(s []Field) ([]leaf, error) {
	out := make([]leaf, 0, len(s))
	for _, f := range s {
		l := leaf{name: f.Name}
		list, t := f.Type.list()
		l.list = list
		switch t {
		case String:
			l.kind = leafString
		case Int64:
			l.kind = leafInt64
		case Float64:
			l.kind = leafFloat64
		case Timestamp:
			l.kind, l.ts = leafInt64, true
		default:
			return nil, fmt.Errorf("field %q: type %s not supported by the log encoder", f.Name, f.Type)
		}
		out = append(out, l)
	}
	return out, nil
}

// column is one column's encoding state: the values and levels of the
// page being filled, the pages of the row group being built, and the
// chunk's statistics.
type column struct {
	leaf
	vals     []byte // PLAIN values of the open page
	rep, def []byte // the open page's levels, one byte each (lists only)
	n        int    // values of the open page (levels, for a list)
	rows     int    // rows of the row group being built
	full     bool   // listed in Row.full

	chunk  []byte // the row group's closed pages, headers included
	values int64  // values (levels) in chunk
	uncomp int64  // chunk's uncompressed size, headers included

	// Statistics of the row group's values (not for lists).
	stat       bool // a value seen
	noStat     bool // a string longer than statMax seen
	minI, maxI int64
	minF, maxF float64
	minB, maxB []byte
}

func (c *column) size() int { return len(c.vals) + len(c.def) }

// Row receives one record's values from a Format's Append: one call per
// column, by the column's index in the schema, with the method of its
// type (String for a string column, Strings for a list of strings, Int64
// for an int64 or a timestamp in nanoseconds since the Unix epoch, ...).
// A call of the wrong type panics: it is a bug of the Format.
type Row struct {
	cols []column
	full []int // columns whose open page reached pageSize
}

func (r *Row) col(i int, k leafKind, list bool) *column {
	c := &r.cols[i]
	if c.kind != k || c.list != list {
		what := k.String()
		if list {
			what = "list of " + what
		}
		panic(fmt.Sprintf("pqlog: column %d (%q) is not a %s", i, c.name, what))
	}
	c.rows++
	return c
}

// filled notes a column whose open page reached pageSize: it is closed
// once the record is complete (pages start at row boundaries).
func (r *Row) filled(i int, c *column) {
	if !c.full && c.size() >= pageSize {
		c.full = true
		r.full = append(r.full, i)
	}
}

// String sets string column i.
func (r *Row) String(i int, s string) {
	c := r.col(i, leafString, false)
	c.vals = appendString(c.vals, s)
	c.n++
	c.statString(s)
	r.filled(i, c)
}

// Int64 sets int64 (or timestamp) column i.
func (r *Row) Int64(i int, v int64) {
	c := r.col(i, leafInt64, false)
	c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(v))
	c.n++
	if !c.stat || v < c.minI {
		c.minI = v
	}
	if !c.stat || v > c.maxI {
		c.maxI = v
	}
	c.stat = true
	r.filled(i, c)
}

// Float64 sets float64 column i.
func (r *Row) Float64(i int, v float64) {
	c := r.col(i, leafFloat64, false)
	c.vals = binary.LittleEndian.AppendUint64(c.vals, math.Float64bits(v))
	c.n++
	if !math.IsNaN(v) { // NaN has no place in min and max
		if !c.stat || v < c.minF {
			c.minF = v
		}
		if !c.stat || v > c.maxF {
			c.maxF = v
		}
		c.stat = true
	}
	r.filled(i, c)
}

// Strings sets list-of-strings column i.
func (r *Row) Strings(i int, xs []string) {
	c := r.col(i, leafString, true)
	c.levels(len(xs))
	for _, s := range xs {
		c.vals = appendString(c.vals, s)
	}
	r.filled(i, c)
}

// Float64s sets list-of-float64 column i.
func (r *Row) Float64s(i int, xs []float64) {
	c := r.col(i, leafFloat64, true)
	c.levels(len(xs))
	for _, v := range xs {
		c.vals = binary.LittleEndian.AppendUint64(c.vals, math.Float64bits(v))
	}
	r.filled(i, c)
}

// Int64s sets list-of-int64 column i.
func (r *Row) Int64s(i int, xs []int64) {
	c := r.col(i, leafInt64, true)
	c.levels(len(xs))
	for _, v := range xs {
		c.vals = binary.LittleEndian.AppendUint64(c.vals, uint64(v))
	}
	r.filled(i, c)
}

// levels appends the levels of a list of k elements: an empty list is
// one level (repetition 0, definition 0); k > 0 elements are k levels,
// all defined (1), the first starting the row (repetition 0).
func (c *column) levels(k int) {
	if k == 0 {
		c.rep = append(c.rep, 0)
		c.def = append(c.def, 0)
		c.n++
		return
	}
	c.rep = append(c.rep, 0)
	c.def = append(c.def, 1)
	for range k - 1 {
		c.rep = append(c.rep, 1)
		c.def = append(c.def, 1)
	}
	c.n += k
}

func (c *column) statString(s string) {
	if c.noStat {
		return
	}
	if len(s) > statMax {
		c.noStat = true
		return
	}
	// string(b) in a comparison does not allocate.
	if !c.stat || s < string(c.minB) {
		c.minB = append(c.minB[:0], s...)
	}
	if !c.stat || s > string(c.maxB) {
		c.maxB = append(c.maxB[:0], s...)
	}
	c.stat = true
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendLevels appends a v1 page's levels: their byte length (4 bytes,
// little-endian), then one bit-packed run of bit width 1 (header: the
// groups of 8 values, shifted left, with the low bit set), the last group
// padded with zeros.
func appendLevels(b []byte, lv []byte) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	groups := (len(lv) + 7) / 8
	b = binary.AppendUvarint(b, uint64(groups)<<1|1)
	for g := range groups {
		var x byte
		for j, v := range lv[g*8 : min(g*8+8, len(lv))] {
			x |= v << j
		}
		b = append(b, x)
	}
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// zstdEncoder returns the encoder of every page: one for the process,
// made at first use and kept (its tables are over 1 MB; warmZstd sets
// them up before serving). EncodeAll is safe for concurrent use. The
// fastest level: encoding 100,000 decision records (declog's
// makeRecords) took 0.73 us per record against 1.06 at the default
// level, for a file 8% larger (642 against 596 KB).
func zstdEncoder() *zstd.Encoder {
	zstdMu.Lock()
	defer zstdMu.Unlock()
	if zstdEnc == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithZeroFrames(true))
		if err != nil {
			panic(fmt.Sprintf("pqlog: zstd encoder: %v", err)) // only for invalid options
		}
		zstdEnc = enc
	}
	return zstdEnc
}

var (
	zstdMu  sync.Mutex
	zstdEnc *zstd.Encoder
)

// encoder writes one Parquet file at a time to an io.Writer: the magic,
// row groups as Append fills them, the footer. It keeps its buffers from
// file to file.
type encoder struct {
	schema    []leaf
	kv        [][2]string
	createdBy string

	Row
	w      io.Writer
	off    int64 // bytes written to w
	rgRows int   // rows of the row group being built
	rows   int64 // rows of the file's written row groups
	groups int   // row groups written
	meta   thrift
	foot   thrift
	hdr    thrift
	body   []byte // a list page's levels and values, uncompressed
	zbuf   []byte // a compressed page
}

var magic = []byte("PAR1")

// maxPage bounds a page's uncompressed bytes: Parquet's page sizes are
// int32.
const maxPage = math.MaxInt32 - 1<<20

func newEncoder[T any](f *Format[T]) (*encoder, error) {
	ls, err := leaves(f.Schema)
	if err != nil {
		return nil, err
	}
	e := &encoder{schema: ls, createdBy: f.CreatedBy}
	e.kv = append([][2]string{{f.VersionKey, f.Version}}, f.Metadata...)
	e.cols = make([]column, len(ls))
	for i := range ls {
		e.cols[i].leaf = ls[i]
	}
	return e, nil
}

// start begins a file on w. The rows set before it (the row group being
// built) are the file's first.
func (e *encoder) start(w io.Writer) error {
	e.w, e.off = w, 0
	return e.write(magic)
}

func (e *encoder) write(b []byte) error {
	n, err := e.w.Write(b)
	e.off += int64(n)
	return err
}

// endRow completes the record Append has just set: every column must
// have had exactly one call. Pages it fills are closed by closeFull.
func (e *encoder) endRow() error {
	e.rgRows++
	for i := range e.cols {
		if c := &e.cols[i]; c.rows != e.rgRows {
			return fmt.Errorf("pqlog: column %q set %d times in %d rows (a bug of the Format's Append)", c.name, c.rows, e.rgRows)
		}
	}
	return nil
}

// closeFull closes the pages endRow found full; y (nil: never) yields
// between them.
func (e *encoder) closeFull(y *yielder) error {
	for len(e.full) > 0 {
		y.maybe()
		i := e.full[len(e.full)-1]
		e.full = e.full[:len(e.full)-1]
		if err := e.closePage(&e.cols[i]); err != nil {
			return err
		}
	}
	return nil
}

// closePage compresses the column's open page and appends it, with its
// header, to the column's chunk.
func (e *encoder) closePage(c *column) error {
	if c.n == 0 {
		return nil
	}
	src := c.vals
	if c.list {
		e.body = appendLevels(e.body[:0], c.rep)
		e.body = appendLevels(e.body, c.def)
		e.body = append(e.body, c.vals...)
		src = e.body
	}
	if len(src) > maxPage {
		return fmt.Errorf("pqlog: column %q: a page of %d bytes (one record's list too long?)", c.name, len(src))
	}
	e.zbuf = zstdEncoder().EncodeAll(src, e.zbuf[:0])
	h := &e.hdr
	h.reset()
	h.begin() // PageHeader
	h.i32(1, pageData)
	h.i32(2, int32(len(src)))
	h.i32(3, int32(len(e.zbuf)))
	h.structField(5) // DataPageHeader
	h.i32(1, int32(c.n))
	h.i32(2, encPlain)
	h.i32(3, encRLE)
	h.i32(4, encRLE)
	h.end()
	h.end()
	c.chunk = append(c.chunk, h.b...)
	c.chunk = append(c.chunk, e.zbuf...)
	c.values += int64(c.n)
	c.uncomp += int64(len(h.b) + len(src))
	c.vals, c.rep, c.def, c.n, c.full = c.vals[:0], c.rep[:0], c.def[:0], 0, false
	if cap(c.vals) > 4*pageSize { // one huge record: do not keep its buffer
		c.vals = nil
	}
	if cap(e.body) > 4*pageSize {
		e.body = nil
	}
	return nil
}

// writeRowGroup closes every open page and writes the row group's chunks,
// encoding its metadata for the footer; y (nil: never) yields between
// columns. A row group of no rows writes nothing.
func (e *encoder) writeRowGroup(y *yielder) error {
	if e.rgRows == 0 {
		return nil
	}
	for i := range e.cols {
		y.maybe()
		if err := e.closePage(&e.cols[i]); err != nil {
			return err
		}
	}
	e.full = e.full[:0]
	t := &e.meta
	start := e.off
	var total, comp int64
	t.begin() // RowGroup
	t.list(1, ctStruct, len(e.cols))
	for i := range e.cols {
		y.maybe()
		c := &e.cols[i]
		at := e.off
		if err := e.write(c.chunk); err != nil {
			return err
		}
		t.begin() // ColumnChunk
		t.i64(2, at)
		t.structField(3) // ColumnMetaData
		t.i32(1, c.physical())
		if c.list {
			t.list(2, ctI32, 2)
			t.listI32(encPlain)
			t.listI32(encRLE)
			t.list(3, ctBinary, 3)
			t.listString(c.name)
			t.listString("list")
			t.listString("element")
		} else {
			t.list(2, ctI32, 1)
			t.listI32(encPlain)
			t.list(3, ctBinary, 1)
			t.listString(c.name)
		}
		t.i32(4, codecZstd)
		t.i64(5, c.values)
		t.i64(6, c.uncomp)
		t.i64(7, int64(len(c.chunk)))
		t.i64(9, at)
		if !c.list {
			c.appendStats(t)
		}
		t.end()
		t.end()
		total += c.uncomp
		comp += int64(len(c.chunk))
		c.chunk, c.values, c.uncomp, c.rows = c.chunk[:0], 0, 0, 0
		c.stat, c.noStat = false, false
		if cap(c.chunk) > 1<<20 {
			c.chunk = nil
		}
	}
	t.i64(2, total)
	t.i64(3, int64(e.rgRows))
	t.i64(5, start)
	t.i64(6, comp)
	t.end()
	e.groups++
	e.rows += int64(e.rgRows)
	e.rgRows = 0
	return nil
}

func (c *column) physical() int32 {
	switch c.kind {
	case leafInt64:
		return pqInt64
	case leafFloat64:
		return pqDouble
	}
	return pqByteArray
}

// appendStats appends the chunk's Statistics: no nulls, and min and max
// (the PLAIN encodings of the values) when it has them.
func (c *column) appendStats(t *thrift) {
	t.structField(12)
	t.i64(3, 0)
	if c.stat && !c.noStat {
		var lo, hi [8]byte
		var mn, mx []byte
		switch c.kind {
		case leafInt64:
			binary.LittleEndian.PutUint64(lo[:], uint64(c.minI))
			binary.LittleEndian.PutUint64(hi[:], uint64(c.maxI))
			mn, mx = lo[:], hi[:]
		case leafFloat64:
			// A zero min is written -0 and a zero max +0 (the format's
			// rule: readers cannot tell which zeros the chunk holds).
			mnF, mxF := c.minF, c.maxF
			if mnF == 0 {
				mnF = math.Copysign(0, -1)
			}
			if mxF == 0 {
				mxF = 0
			}
			binary.LittleEndian.PutUint64(lo[:], math.Float64bits(mnF))
			binary.LittleEndian.PutUint64(hi[:], math.Float64bits(mxF))
			mn, mx = lo[:], hi[:]
		default:
			mn, mx = c.minB, c.maxB
		}
		t.binary(5, mx)
		t.binary(6, mn)
	}
	t.end()
}

// finish writes the last row group and the footer; the file is complete.
func (e *encoder) finish(y *yielder) error {
	if err := e.writeRowGroup(y); err != nil {
		return err
	}
	t := &e.foot
	t.reset()
	t.begin() // FileMetaData
	t.i32(1, 2)
	e.appendSchema(t)
	t.i64(3, e.rows)
	t.list(4, ctStruct, e.groups)
	t.b = append(t.b, e.meta.b...)
	if len(e.kv) > 0 {
		t.list(5, ctStruct, len(e.kv))
		for _, kv := range e.kv {
			t.begin()
			t.string(1, kv[0])
			t.string(2, kv[1])
			t.end()
		}
	}
	t.string(6, e.createdBy)
	t.list(7, ctStruct, len(e.cols)) // column orders: by type
	for range e.cols {
		t.begin()
		t.empty(1)
		t.end()
	}
	t.end()
	t.b = binary.LittleEndian.AppendUint32(t.b, uint32(len(t.b)))
	t.b = append(t.b, magic...)
	if err := e.write(t.b); err != nil {
		return err
	}
	if cap(e.foot.b) > 1<<20 {
		e.foot.b = nil
	}
	e.w, e.rows, e.groups = nil, 0, 0
	e.meta.reset()
	return nil
}

// appendSchema appends FileMetaData's schema: the root, then each
// column's elements.
func (e *encoder) appendSchema(t *thrift) {
	n := 1
	for _, l := range e.schema {
		n++
		if l.list {
			n += 2
		}
	}
	t.list(2, ctStruct, n)
	t.begin()
	t.string(4, "schema")
	t.i32(5, int32(len(e.schema)))
	t.end()
	for i := range e.cols {
		c := &e.cols[i]
		name := c.name
		if c.list {
			t.begin()
			t.i32(3, pqRequired)
			t.string(4, c.name)
			t.i32(5, 1)
			t.i32(6, ctLIST)
			t.structField(10)
			t.empty(3) // LIST
			t.end()
			t.end()
			t.begin()
			t.i32(3, pqRepeated)
			t.string(4, "list")
			t.i32(5, 1)
			t.end()
			name = "element"
		}
		t.begin()
		t.i32(1, c.physical())
		t.i32(3, pqRequired)
		t.string(4, name)
		switch {
		case c.kind == leafString:
			t.i32(6, ctUTF8)
			t.structField(10)
			t.empty(1) // STRING
			t.end()
		case c.ts:
			t.structField(10)
			t.structField(8) // TIMESTAMP
			t.bool(1, true)
			t.structField(2)
			t.empty(3) // NANOS
			t.end()
			t.end()
			t.end()
		}
		t.end()
	}
}
