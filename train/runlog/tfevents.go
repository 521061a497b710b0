package runlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// FileVersion is the file_version of the first event of every event file
// (docs/format/tfevents.md); TensorBoard reads files that declare it.
const FileVersion = "brain.Event:2"

// Sentinel errors of the decoders. Every decoding error wraps one of them.
var (
	// ErrTruncated means the data ends inside a record (or a CSV row): a
	// writer stopped mid-write. What came before it is intact.
	ErrTruncated = errors.New("runlog: truncated")
	// ErrCorrupt means a checksum does not match or a protobuf is malformed.
	ErrCorrupt = errors.New("runlog: corrupt")
)

// Event is the subset of TensorFlow's Event proto that Drover writes and
// reads: a file-version event or a summary of scalar values.
type Event struct {
	// WallTime is the event's wall-clock time in seconds since the Unix
	// epoch (field 1, double).
	WallTime float64
	// Step is the training step (field 2, int64).
	Step int64
	// FileVersion is set only on a file's first event (field 3, string).
	FileVersion string
	// Values is the event's summary (field 5, Summary; its repeated field
	// 1, Summary.Value), nil when the event has none.
	Values []Value
}

// Value is one Summary.Value: a tagged scalar.
type Value struct {
	// Tag names the series, e.g. TagEpisodicReturn (field 1, string).
	Tag string
	// SimpleValue is the scalar (field 2, float).
	SimpleValue float32
}

// Protobuf field numbers of the messages above (tensorflow/core/util/event.proto
// and tensorflow/core/framework/summary.proto).
const (
	fieldWallTime    protowire.Number = 1
	fieldStep        protowire.Number = 2
	fieldFileVersion protowire.Number = 3
	fieldSummary     protowire.Number = 5
	fieldValue       protowire.Number = 1 // Summary.value
	fieldTag         protowire.Number = 1 // Summary.Value.tag
	fieldSimpleValue protowire.Number = 2 // Summary.Value.simple_value
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaskedCRC32C is TFRecord's checksum: the CRC-32C (Castagnoli) of b,
// rotated right by 15 bits and offset by 0xa282ead8, so that the CRC of
// data that itself holds CRCs does not degenerate.
func MaskedCRC32C(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// AppendRecord appends data framed as one TFRecord to dst: the length as
// a little-endian uint64, the masked CRC-32C of those 8 bytes, data, and
// the masked CRC-32C of data.
func AppendRecord(dst, data []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(data)))
	dst = binary.LittleEndian.AppendUint32(dst, MaskedCRC32C(dst[len(dst)-8:]))
	dst = append(dst, data...)
	return binary.LittleEndian.AppendUint32(dst, MaskedCRC32C(data))
}

// NextRecord splits the first TFRecord off b, verifying both checksums.
// It returns the record's data (aliasing b) and the bytes after it. An
// error wraps ErrTruncated when b ends inside the record and ErrCorrupt
// when a checksum does not match.
func NextRecord(b []byte) (data, rest []byte, err error) {
	if len(b) < 12 {
		return nil, b, fmt.Errorf("%w: record header needs 12 bytes, have %d", ErrTruncated, len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if got, want := binary.LittleEndian.Uint32(b[8:]), MaskedCRC32C(b[:8]); got != want {
		return nil, b, fmt.Errorf("%w: length checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	if n > uint64(len(b)-12) || uint64(len(b)-12)-n < 4 {
		return nil, b, fmt.Errorf("%w: record of %d bytes, have %d", ErrTruncated, n, len(b)-12)
	}
	data = b[12 : 12+n]
	if got, want := binary.LittleEndian.Uint32(b[12+n:]), MaskedCRC32C(data); got != want {
		return nil, b, fmt.Errorf("%w: data checksum %#08x, want %#08x", ErrCorrupt, got, want)
	}
	return data, b[16+n:], nil
}

// AppendEvent appends e encoded as an Event protobuf to dst, fields in
// field-number order. Fields at their zero value are left out, as proto3
// serializers do.
func AppendEvent(dst []byte, e Event) []byte {
	if math.Float64bits(e.WallTime) != 0 {
		dst = protowire.AppendTag(dst, fieldWallTime, protowire.Fixed64Type)
		dst = protowire.AppendFixed64(dst, math.Float64bits(e.WallTime))
	}
	if e.Step != 0 {
		dst = protowire.AppendTag(dst, fieldStep, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(e.Step))
	}
	if e.FileVersion != "" {
		dst = protowire.AppendTag(dst, fieldFileVersion, protowire.BytesType)
		dst = protowire.AppendString(dst, e.FileVersion)
	}
	if len(e.Values) > 0 {
		var summary []byte
		for _, v := range e.Values {
			var val []byte
			if v.Tag != "" {
				val = protowire.AppendTag(val, fieldTag, protowire.BytesType)
				val = protowire.AppendString(val, v.Tag)
			}
			// simple_value is a member of a oneof: written even when 0.
			val = protowire.AppendTag(val, fieldSimpleValue, protowire.Fixed32Type)
			val = protowire.AppendFixed32(val, math.Float32bits(v.SimpleValue))
			summary = protowire.AppendTag(summary, fieldValue, protowire.BytesType)
			summary = protowire.AppendBytes(summary, val)
		}
		dst = protowire.AppendTag(dst, fieldSummary, protowire.BytesType)
		dst = protowire.AppendBytes(dst, summary)
	}
	return dst
}

// DecodeEvent decodes an Event protobuf. Fields other than those of Event
// are skipped, as protobuf parsers do; a known field with the wrong wire
// type, or bytes that are not a protobuf, give an error wrapping
// ErrCorrupt. Only Summary.Value's tag and simple_value are read: a value
// of another kind (image, histogram, tensor) decodes with SimpleValue 0.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case fieldWallTime:
			if typ != protowire.Fixed64Type {
				return errWireType("Event.wall_time", typ)
			}
			e.WallTime = math.Float64frombits(x)
		case fieldStep:
			if typ != protowire.VarintType {
				return errWireType("Event.step", typ)
			}
			e.Step = int64(x)
		case fieldFileVersion:
			if typ != protowire.BytesType {
				return errWireType("Event.file_version", typ)
			}
			e.FileVersion = string(v)
		case fieldSummary:
			if typ != protowire.BytesType {
				return errWireType("Event.summary", typ)
			}
			vals, err := decodeSummary(v)
			if err != nil {
				return err
			}
			e.Values = append(e.Values, vals...)
		}
		return nil
	})
	return e, err
}

func decodeSummary(b []byte) ([]Value, error) {
	var vals []Value
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != fieldValue {
			return nil
		}
		if typ != protowire.BytesType {
			return errWireType("Summary.value", typ)
		}
		var val Value
		err := walk(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
			switch num {
			case fieldTag:
				if typ != protowire.BytesType {
					return errWireType("Summary.Value.tag", typ)
				}
				val.Tag = string(v)
			case fieldSimpleValue:
				if typ != protowire.Fixed32Type {
					return errWireType("Summary.Value.simple_value", typ)
				}
				val.SimpleValue = math.Float32frombits(uint32(x))
			}
			return nil
		})
		if err != nil {
			return err
		}
		vals = append(vals, val)
		return nil
	})
	return vals, err
}

// walk calls f for every field of the protobuf message b: with the
// field's bytes for BytesType, its value in x for the fixed and varint
// types. Groups are skipped.
func walk(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: protobuf tag: %v", ErrCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: protobuf field %d: %v", ErrCorrupt, num, protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.StartGroupType {
			continue
		}
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func errWireType(field string, typ protowire.Type) error {
	return fmt.Errorf("%w: %s has wire type %d", ErrCorrupt, field, typ)
}

// AppendEventRecord appends e as one TFRecord-framed Event to dst: what
// an event file holds, one after another.
func AppendEventRecord(dst []byte, e Event) []byte {
	return AppendRecord(dst, AppendEvent(nil, e))
}

// ReadEvents reads an event file from r and decodes it as DecodeEvents
// does.
func ReadEvents(r io.Reader) ([]Event, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return DecodeEvents(b)
}

// DecodeEvents decodes an event file's bytes. It returns the events
// before the first problem together with an error (wrapping ErrTruncated
// or ErrCorrupt) describing it, so that a file cut short by a crash
// still yields its complete records.
func DecodeEvents(b []byte) ([]Event, error) {
	var events []Event
	for off := 0; len(b) > 0; {
		data, rest, err := NextRecord(b)
		if err != nil {
			return events, fmt.Errorf("record at byte %d: %w", off, err)
		}
		e, err := DecodeEvent(data)
		if err != nil {
			return events, fmt.Errorf("record at byte %d: %w", off, err)
		}
		events = append(events, e)
		off += len(b) - len(rest)
		b = rest
	}
	return events, nil
}
