package pqlog

import "encoding/binary"

// Thrift compact-protocol type codes: the ones Parquet's page headers and
// footer use.
const (
	ctTrue   = 1
	ctFalse  = 2
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

// thrift appends Thrift compact-protocol encodings to b: the fields of a
// struct, with their ids delta-encoded against the previous field of the
// same struct (stack holds the enclosing structs' last ids).
type thrift struct {
	b     []byte
	id    int16
	stack []int16
}

// reset empties t for a new encoding, keeping its buffers.
func (t *thrift) reset() { t.b, t.id, t.stack = t.b[:0], 0, t.stack[:0] }

func (t *thrift) field(id int16, typ byte) {
	if d := id - t.id; d > 0 && d <= 15 {
		t.b = append(t.b, byte(d)<<4|typ)
	} else {
		t.b = append(t.b, typ)
		t.b = binary.AppendUvarint(t.b, zigzag(int64(id)))
	}
	t.id = id
}

// zigzag maps signed to unsigned integers, small magnitudes to small
// numbers (for int16 and int32 values it gives the bytes of their own
// zigzag encodings).
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func (t *thrift) i32(id int16, v int32) {
	t.field(id, ctI32)
	t.b = binary.AppendUvarint(t.b, zigzag(int64(v)))
}

func (t *thrift) i64(id int16, v int64) {
	t.field(id, ctI64)
	t.b = binary.AppendUvarint(t.b, zigzag(v))
}

func (t *thrift) bool(id int16, v bool) {
	if v {
		t.field(id, ctTrue)
	} else {
		t.field(id, ctFalse)
	}
}

func (t *thrift) binary(id int16, s []byte) {
	t.field(id, ctBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(s)))
	t.b = append(t.b, s...)
}

func (t *thrift) string(id int16, s string) {
	t.field(id, ctBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(s)))
	t.b = append(t.b, s...)
}

// list starts a list field of n elements of type elem; the elements
// follow (struct elements each between begin and end).
func (t *thrift) list(id int16, elem byte, n int) {
	t.field(id, ctList)
	t.listHeader(elem, n)
}

func (t *thrift) listHeader(elem byte, n int) {
	if n < 15 {
		t.b = append(t.b, byte(n)<<4|elem)
		return
	}
	t.b = append(t.b, 0xf0|elem)
	t.b = binary.AppendUvarint(t.b, uint64(n))
}

// listString appends a string element of a list.
func (t *thrift) listString(s string) {
	t.b = binary.AppendUvarint(t.b, uint64(len(s)))
	t.b = append(t.b, s...)
}

// listI32 appends an i32 element of a list.
func (t *thrift) listI32(v int32) { t.b = binary.AppendUvarint(t.b, zigzag(int64(v))) }

// structField starts a struct-valued field; end closes it.
func (t *thrift) structField(id int16) {
	t.field(id, ctStruct)
	t.begin()
}

// begin starts a struct: a list's struct element, or (after structField)
// a field's.
func (t *thrift) begin() {
	t.stack = append(t.stack, t.id)
	t.id = 0
}

// end closes the struct begun last.
func (t *thrift) end() {
	t.b = append(t.b, 0)
	t.id = t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
}

// empty appends an empty struct field (Parquet's unions of empty structs:
// the string and list logical types, a timestamp's unit, a column order).
func (t *thrift) empty(id int16) {
	t.structField(id)
	t.end()
}
