package pqlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/drover-sched/drover/internal/pqlog/pqlogtest"
)

// wide is the record of a log with every column type the encoder writes.
type wide struct {
	Name   string    `parquet:"name"`
	Time   time.Time `parquet:"time,timestamp(nanosecond)"`
	N      int64     `parquet:"n"`
	X      float64   `parquet:"x"`
	Tags   []string  `parquet:"tags,list"`
	Xs     []float64 `parquet:"xs,list"`
	Ns     []int64   `parquet:"ns,list"`
	Source string    `parquet:"source"`
}

var wideFormat = newWideFormat()

// newWideFormat returns the Format of the wide test log.
func newWideFormat() *Format[wide] {
	return &Format[wide]{
		Log:    "widetest",
		Prefix: "wide-",
		Schema: []Field{
			{Name: "name", Type: String},
			{Name: "time", Type: Timestamp},
			{Name: "n", Type: Int64},
			{Name: "x", Type: Float64},
			{Name: "tags", Type: Strings},
			{Name: "xs", Type: Float64s},
			{Name: "ns", Type: Int64s},
			{Name: "source", Type: String},
		},
		VersionKey: "v", Version: "1", ErrVersion: errVersion, ErrClosed: errors.New("closed"), CreatedBy: "pqlog wide test",
		Append: func(b *Row, r *wide) {
			b.String(0, r.Name)
			b.Int64(1, r.Time.UnixNano())
			b.Int64(2, r.N)
			b.Float64(3, r.X)
			b.Strings(4, r.Tags)
			b.Float64s(5, r.Xs)
			b.Int64s(6, r.Ns)
			b.String(7, r.Source)
		},
		Columns: []Column[wide]{
			{Name: "name", Set: func(r *wide, v Value) error { r.Name = v.Str; return nil }},
			{Name: "time", Set: func(r *wide, v Value) error { r.Time = time.Unix(0, v.Int).UTC(); return nil }},
			{Name: "n", Set: func(r *wide, v Value) error { r.N = v.Int; return nil }},
			{Name: "x", Set: func(r *wide, v Value) error { r.X = v.Float; return nil }},
			{Name: "tags", Set: func(r *wide, v Value) error { r.Tags = v.Strs; return nil }},
			{Name: "xs", Set: func(r *wide, v Value) error { r.Xs = v.Floats; return nil }},
			{Name: "ns", Set: func(r *wide, v Value) error { r.Ns = v.Ints; return nil }},
			{Name: "source", Set: func(r *wide, v Value) error { r.Source = v.Str; return nil }},
		},
		Validate:     func(*wide) error { return nil },
		FrameVersion: 1,
		AppendFrame:  func(b []byte, r *wide) []byte { return AppendString(b, r.Name) },
		DecodeFrame:  func(d *Dec) wide { return wide{Name: d.String()} },
	}
}

// makeWide returns n records of varied shapes: empty and long strings
// (past statMax, and one record's list past pageSize alone), empty lists,
// negative, zero and extreme numbers.
func makeWide(n int, seed uint64) []wide {
	rng := rand.New(rand.NewPCG(seed, 1))
	ws := make([]wide, n)
	for i := range ws {
		w := &ws[i]
		w.Name = fmt.Sprintf("job-%d", rng.IntN(1_000_000))
		switch rng.IntN(20) {
		case 0:
			w.Name = ""
		case 1:
			w.Name = strings.Repeat("long", 20+rng.IntN(20))
		}
		w.Time = time.Unix(1_700_000_000+int64(i), int64(rng.IntN(1e9))).UTC()
		w.N = rng.Int64() - math.MaxInt64/2
		switch rng.IntN(10) {
		case 0:
			w.N = math.MinInt64
		case 1:
			w.N = math.MaxInt64
		}
		w.X = rng.NormFloat64() * 1e3
		switch rng.IntN(10) {
		case 0:
			w.X = 0
		case 1:
			w.X = math.Copysign(0, -1)
		case 2:
			w.X = math.Inf(-1)
		}
		for range rng.IntN(4) {
			w.Tags = append(w.Tags, fmt.Sprintf("node-%d", rng.IntN(64)))
		}
		for range rng.IntN(3) {
			w.Xs = append(w.Xs, rng.Float64())
		}
		for range rng.IntN(3) {
			w.Ns = append(w.Ns, rng.Int64N(100)-50)
		}
		w.Source = []string{"strn", "sas", "fallback"}[rng.IntN(3)]
	}
	// One record whose list alone is larger than a page.
	big := &ws[n/2]
	big.Xs = make([]float64, pageSize/8+100)
	for j := range big.Xs {
		big.Xs[j] = float64(j)
	}
	return ws
}

// TestEncodeReadBack: files of every column type, several row groups of
// several pages each (pages cut at pageSize, one record's list larger
// than a page), read back equal by Decode (parquet-go's pages), by
// parquet-go's row reader and by an independent implementation
// (arrow-go), with the statistics and encodings the encoder promises.
func TestEncodeReadBack(t *testing.T) {
	recs := makeWide(9000, 7)
	for _, rowGroup := range []int{1, 1000, 4096, len(recs)} {
		t.Run(fmt.Sprintf("rowgroup=%d", rowGroup), func(t *testing.T) {
			in := recs
			if rowGroup == 1 {
				in = recs[:50]
			}
			var buf bytes.Buffer
			if err := wideFormat.encode(&buf, in, rowGroup); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			got, err := Decode(wideFormat, data, "wide.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if diff := diffWides(in, got); diff != "" {
				t.Fatalf("Decode (-want,+got):\n%s", diff)
			}
			if diff := diffWides(in, arrowDecode(t, wideFormat, data)); diff != "" {
				t.Fatalf("arrow-go read (-want,+got):\n%s", diff)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			if want := (len(in) + rowGroup - 1) / rowGroup; len(pf.RowGroups()) != want {
				t.Errorf("%d row groups, want %d", len(pf.RowGroups()), want)
			}
			rows := make([]wide, pf.NumRows())
			r := parquet.NewGenericReader[wide](bytes.NewReader(data))
			if n, err := r.Read(rows); n != len(rows) {
				t.Fatalf("parquet-go read %d of %d rows: %v", n, len(rows), err)
			}
			r.Close()
			for i := range rows { // parquet-go reads empty lists as empty, not nil
				for _, p := range []*[]string{&rows[i].Tags} {
					if len(*p) == 0 {
						*p = nil
					}
				}
				if len(rows[i].Xs) == 0 {
					rows[i].Xs = nil
				}
				if len(rows[i].Ns) == 0 {
					rows[i].Ns = nil
				}
				rows[i].Time = rows[i].Time.UTC()
			}
			if diff := diffWides(in, rows); diff != "" {
				t.Fatalf("parquet-go read (-want,+got):\n%s", diff)
			}
			pqlogtest.Encoding(t, data)
		})
	}
}

// sameFloat compares floats bit for bit: -0 is not 0.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// sameWides is cmp.Equal(a, b, cmp.Comparer(sameFloat)) for records of
// wide, written out: the times by Equal, the floats by sameFloat, a nil
// list unequal to an empty one. Under the race detector cmp's reflection
// over 9,000 records took half of TestEncodeReadBack's time; cmp.Diff now
// runs only to report a difference (diffWides). TestSameWidesIsCmpEqual
// holds the two together.
func sameWides(a, b []wide) bool {
	sameNil := func(x, y bool) bool { return x == y }
	return slices.EqualFunc(a, b, func(x, y wide) bool {
		return x.Name == y.Name && x.Time.Equal(y.Time) && x.N == y.N && sameFloat(x.X, y.X) &&
			sameNil(x.Tags == nil, y.Tags == nil) && slices.Equal(x.Tags, y.Tags) &&
			sameNil(x.Xs == nil, y.Xs == nil) && slices.EqualFunc(x.Xs, y.Xs, sameFloat) &&
			sameNil(x.Ns == nil, y.Ns == nil) && slices.Equal(x.Ns, y.Ns) &&
			x.Source == y.Source
	})
}

// diffWides is cmp.Diff(want, got, cmp.Comparer(sameFloat)), computed only
// where sameWides finds a difference.
func diffWides(want, got []wide) string {
	if sameWides(want, got) {
		return ""
	}
	return cmp.Diff(want, got, cmp.Comparer(sameFloat))
}

// TestSameWidesIsCmpEqual: sameWides agrees with cmp.Equal on equal
// records and on each field changed in turn (nil against empty lists, -0
// against 0 and the same instant in another zone included), and wide has
// the fields sameWides compares.
func TestSameWidesIsCmpEqual(t *testing.T) {
	if n := reflect.TypeFor[wide]().NumField(); n != 8 {
		t.Fatalf("wide has %d fields; sameWides compares 8", n)
	}
	base := makeWide(20, 7)
	base[10].Xs = base[10].Xs[:3] // makeWide's list past a page: cmp is slow on it, and its length is not the point here
	changes := []func(w *wide){
		func(w *wide) { w.Name += "x" },
		func(w *wide) { w.Time = w.Time.Add(1) },
		func(w *wide) { w.Time = w.Time.In(time.FixedZone("x", 3600)) }, // the same instant: equal
		func(w *wide) { w.N++ },
		func(w *wide) { w.X = math.Copysign(0, -1) },
		func(w *wide) { w.X = math.NaN() },
		func(w *wide) { w.Tags = append(w.Tags, "t") },
		func(w *wide) { w.Tags = []string{} },
		func(w *wide) { w.Xs = append(w.Xs, 1) },
		func(w *wide) { w.Xs = []float64{} },
		func(w *wide) { w.Ns = append(w.Ns, 1) },
		func(w *wide) { w.Ns = []int64{} },
		func(w *wide) { w.Source += "x" },
	}
	clone := func() []wide {
		c := make([]wide, len(base))
		for i, w := range base {
			w.Tags, w.Xs, w.Ns = slices.Clone(w.Tags), slices.Clone(w.Xs), slices.Clone(w.Ns)
			c[i] = w
		}
		return c
	}
	if !sameWides(base, clone()) || !cmp.Equal(base, clone(), cmp.Comparer(sameFloat)) {
		t.Fatal("a record list differs from its copy")
	}
	for i, change := range changes {
		for _, at := range []int{0, 11, len(base) - 1} {
			c := clone()
			change(&c[at])
			if got, want := sameWides(base, c), cmp.Equal(base, c, cmp.Comparer(sameFloat)); got != want {
				t.Errorf("change %d at record %d: sameWides %v, cmp.Equal %v", i, at, got, want)
			}
		}
	}
	if sameWides(base, base[1:]) {
		t.Error("lists of different lengths are the same")
	}
}

// TestEncodeStatsLongStrings: a column chunk with a string longer than
// statMax has no min and max; the next row group's chunk, without one,
// has them again.
func TestEncodeStatsLongStrings(t *testing.T) {
	recs := makeWide(20, 3)
	for i := range recs {
		recs[i].Name = fmt.Sprintf("n%02d", i)
	}
	recs[3].Name = strings.Repeat("x", statMax+1)
	var buf bytes.Buffer
	if err := wideFormat.encode(&buf, recs, 10); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	var got []string
	for _, rg := range md.RowGroups {
		st := rg.Columns[0].MetaData.Statistics
		got = append(got, fmt.Sprintf("%q-%q", st.MinValue, st.MaxValue))
	}
	if want := []string{`""-""`, `"n10"-"n19"`}; !cmp.Equal(got, want) {
		t.Errorf("name column's min-max per row group %v, want %v", got, want)
	}
}

// TestEncodeNoRecords: no records make a valid file of no rows.
func TestEncodeNoRecords(t *testing.T) {
	data, err := Encode(wideFormat, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(wideFormat, data, "empty.parquet")
	if err != nil || len(got) != 0 {
		t.Errorf("Decode: %d records, %v; want none", len(got), err)
	}
}

// TestEncodeBadAppend: a Format whose Append skips a column, or sets one
// with the wrong type, is an error (or a panic) naming the column, not a
// corrupt file.
func TestEncodeBadAppend(t *testing.T) {
	f := newWideFormat()
	f.Append = func(b *Row, r *wide) { wideFormat.Append(b, r); b.String(0, "again") }
	if _, err := Encode(f, makeWide(2, 1)); err == nil || !strings.Contains(err.Error(), `"name" set 2 times`) {
		t.Errorf("column set twice: %v", err)
	}
	f.Append = func(b *Row, r *wide) { b.Int64(0, 1) }
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), `"name"`) {
				t.Errorf("wrong type: panic %v", p)
			}
		}()
		Encode(f, makeWide(1, 1))
	}()
}

// TestLeavesRejects: schemas the encoder cannot write are refused, naming
// the field.
func TestLeavesRejects(t *testing.T) {
	for _, f := range []Field{{Name: "zero"}, {Name: "unknown", Type: Float64s + 1}} {
		_, err := leaves([]Field{{Name: "ok", Type: String}, f})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", f.Name)) {
			t.Errorf("field %s: %v, want an error naming it", f.Name, err)
		}
	}
}

// TestLevels: appendLevels against levels worked by hand: 11 levels
// 1,0,1,1,0,0,0,1 | 1,1,0 are two bit-packed groups, LSB first: 0x8d,
// 0x03, after the run header (2 groups << 1 | 1 = 5) and the length (3).
func TestLevels(t *testing.T) {
	got := appendLevels(nil, []byte{1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0})
	want := []byte{3, 0, 0, 0, 5, 0x8d, 0x03}
	if !bytes.Equal(got, want) {
		t.Errorf("levels % x, want % x", got, want)
	}
}

// TestThriftFieldIDs: compact-protocol field headers against the
// encoding worked by hand: a delta of 1..15 in the high nibble, a larger
// jump (or a first id of 0) as a zigzag varint after the type, and a
// nested struct's ids counted from 0.
func TestThriftFieldIDs(t *testing.T) {
	var w thrift
	w.begin()
	w.i32(1, 3)       // delta 1, I32: 0x15, zigzag 3 = 6
	w.i64(20, -1)     // jump 19: 0x06, zigzag 20 = 40 (0x28), zigzag -1 = 1
	w.structField(21) // delta 1, struct: 0x1c
	w.bool(2, true)   // nested: delta 2, true: 0x21
	w.end()           // 0
	w.string(22, "ab")
	w.end()
	want := []byte{0x15, 6, 0x06, 0x28, 1, 0x1c, 0x21, 0, 0x18, 2, 'a', 'b', 0}
	if !bytes.Equal(w.b, want) {
		t.Errorf("thrift % x, want % x", w.b, want)
	}
}

// wideFromBytes reads records of the wide log from fuzz input: every
// field's length and bytes come from data, strings of any bytes, floats
// of any bits (NaN payloads included).
func wideFromBytes(data []byte) []wide {
	next := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n]
		data = data[n:]
		return b
	}
	u64 := func() uint64 {
		var b [8]byte
		copy(b[:], next(8))
		return binary.LittleEndian.Uint64(b[:])
	}
	b1 := func() int {
		if b := next(1); len(b) == 1 {
			return int(b[0])
		}
		return 0
	}
	var out []wide
	for len(data) > 0 {
		var w wide
		w.Name = string(next(b1() % 80))
		w.Time = time.Unix(0, int64(u64())).UTC()
		w.N = int64(u64())
		w.X = math.Float64frombits(u64())
		for range b1() % 5 {
			w.Tags = append(w.Tags, string(next(b1()%20)))
		}
		for range b1() % 4 {
			w.Xs = append(w.Xs, math.Float64frombits(u64()))
		}
		for range b1() % 4 {
			w.Ns = append(w.Ns, int64(u64()))
		}
		w.Source = string(next(b1() % 8))
		out = append(out, w)
	}
	return out
}

// FuzzEncodeRoundTrip: whatever the records (any bytes in strings, any
// float bits, any list lengths) and row-group size, Decode reads back
// exactly what the encoder wrote, and so does arrow-go.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte("hello, world: a record or two of the wide log"), uint16(3))
	f.Add(bytes.Repeat([]byte{0xff, 0x00, 0x7f}, 400), uint16(1))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, rowGroup uint16) {
		recs := wideFromBytes(data)
		var buf bytes.Buffer
		if err := wideFormat.encode(&buf, recs, int(rowGroup%64)+1); err != nil {
			t.Fatal(err)
		}
		got, err := Decode(wideFormat, buf.Bytes(), "fuzz.parquet")
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 && len(got) == 0 {
			return
		}
		if diff := cmp.Diff(recs, got, cmp.Comparer(sameFloat)); diff != "" {
			t.Fatalf("read back (-want,+got):\n%s", diff)
		}
		if diff := cmp.Diff(recs, arrowDecode(t, wideFormat, buf.Bytes()), cmp.Comparer(sameFloat)); diff != "" {
			t.Fatalf("arrow-go read back (-want,+got):\n%s", diff)
		}
	})
}

// TestEncoderFullAfterRowGroup: a page found full and closed by the row
// group's end instead of closeFull is found full again in the next row
// group (its mark goes with the page).
func TestEncoderFullAfterRowGroup(t *testing.T) {
	e, err := newEncoder(testFormat)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := e.start(&buf); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", pageSize)
	for range 2 {
		testFormat.Append(&e.Row, &row{Seq: 1, Name: long})
		if err := e.endRow(); err != nil {
			t.Fatal(err)
		}
		if len(e.full) != 1 || e.full[0] != 1 {
			t.Fatalf("full columns %v, want [1] (the name)", e.full)
		}
		if err := e.writeRowGroup(nil); err != nil {
			t.Fatal(err)
		}
	}
}
