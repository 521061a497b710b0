package pqlog

import "fmt"

// Type is the type of a log column: what the encoder writes (see
// encode.go) and what Decode reads into a Value.
type Type uint8

// The column types. Every column is required (no nulls); lists are
// required lists of required values.
const (
	// String is a UTF-8 string (BYTE_ARRAY, STRING), Value.Str.
	String Type = iota + 1
	// Int64 is a 64-bit integer (INT64), Value.Int.
	Int64
	// Float64 is a double (DOUBLE), Value.Float.
	Float64
	// Timestamp is a time in nanoseconds since the Unix epoch, UTC (INT64,
	// TIMESTAMP(NANOS, UTC)), Value.Int.
	Timestamp
	// Strings is a list of strings, Value.Strs.
	Strings
	// Int64s is a list of 64-bit integers, Value.Ints.
	Int64s
	// Float64s is a list of doubles, Value.Floats.
	Float64s
)

// String returns the type's name.
func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Int64:
		return "int64"
	case Float64:
		return "double"
	case Timestamp:
		return "timestamp"
	case Strings:
		return "list<string>"
	case Int64s:
		return "list<int64>"
	case Float64s:
		return "list<double>"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// list reports whether t is a list type, and the type of its elements.
func (t Type) list() (bool, Type) {
	switch t {
	case Strings:
		return true, String
	case Int64s:
		return true, Int64
	case Float64s:
		return true, Float64
	}
	return false, t
}

// Field is one column of a log's schema.
type Field struct {
	// Name is the column's name.
	Name string
	// Type is the column's type.
	Type Type
}

// Value is one row's value of a column, as Decode read it: the field
// that the column's Type names is set (Str for String, Int for Int64 and
// Timestamp, ...), the others are zero. An empty list is nil.
type Value struct {
	// Str is a String column's value.
	Str string
	// Int is an Int64 column's value, or a Timestamp column's in
	// nanoseconds since the Unix epoch.
	Int int64
	// Float is a Float64 column's value.
	Float float64
	// Strs is a Strings column's value.
	Strs []string
	// Ints is an Int64s column's value.
	Ints []int64
	// Floats is a Float64s column's value.
	Floats []float64
}
