package pqlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"
)

// The write-ahead log of an unsealed file (docs/format/decision-log.md,
// "Write-ahead log"): a header, then one frame per record.
//
//	header: "DWAL" | container version (1 byte, WALVersion) |
//	        record version (1 byte, Format.FrameVersion) |
//	        name length (1 byte) | the log's name (Format.Log)
//	frame:  payload length (uint32 LE) | CRC-32C of the payload (uint32 LE) | payload
const (
	walMagic = "DWAL"
	// WALVersion is the version of the write-ahead log's container format.
	WALVersion = 1
	// maxFrame bounds a frame's payload; a longer length is corruption.
	maxFrame = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendHeader appends the write-ahead log header of f to b.
func (f *Format[T]) appendHeader(b []byte) []byte {
	b = append(b, walMagic...)
	b = append(b, WALVersion, f.FrameVersion, byte(len(f.Log)))
	return append(b, f.Log...)
}

// AppendFrame appends r as one write-ahead-log frame to b.
func AppendFrame[T any](f *Format[T], b []byte, r *T) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = f.AppendFrame(b, r)
	p := b[start+8:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(p)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(p, castagnoli))
	return b
}

// ErrWALHeader is wrapped by ReadFrames' error for a write-ahead log whose
// header is not this format's.
var ErrWALHeader = errors.New("not a write-ahead log of this format and version")

// ReadFrames decodes the records of one write-ahead log held in data. It
// stops at the first incomplete, corrupt or invalid frame (a process
// killed mid-write leaves a torn last frame) and returns the records
// before it and the bytes from it to the end, which are lost. A bad header
// is an error wrapping ErrWALHeader; it never panics.
func ReadFrames[T any](f *Format[T], data []byte) (recs []T, lost int, err error) {
	h := f.appendHeader(nil)
	if len(data) < len(h) && string(data) == string(h[:len(data)]) {
		return nil, len(data), nil // torn inside the header: no record yet
	}
	if len(data) < len(h) || string(data[:len(h)]) != string(h) {
		n := min(len(data), len(h))
		return nil, len(data), fmt.Errorf("%w: header %q, want %q", ErrWALHeader, data[:n], h)
	}
	off := len(h)
	for off < len(data) {
		rest := data[off:]
		if len(rest) < 8 {
			break
		}
		n := binary.LittleEndian.Uint32(rest)
		if n > maxFrame || uint64(n) > uint64(len(rest)-8) {
			break
		}
		p := rest[8 : 8+n]
		if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(rest[4:]) {
			break
		}
		d := Dec{b: p}
		r := f.DecodeFrame(&d)
		if d.err != nil || len(d.b) != 0 || f.Validate(&r) != nil {
			break
		}
		recs = append(recs, r)
		off += 8 + int(n)
	}
	return recs, len(data) - off, nil
}

// The encoding of a frame's fields, for Format.AppendFrame: integers are
// zig-zag varints, floats their IEEE 754 bits (uint64 LE), strings and
// lists a uvarint length then the bytes or elements, times their Unix
// nanoseconds (0 for the zero time).

// AppendInt appends a zig-zag varint.
func AppendInt(b []byte, x int64) []byte { return binary.AppendVarint(b, x) }

// AppendFloat appends x's IEEE 754 bits, so NaN survives.
func AppendFloat(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}

// AppendString appends a length-prefixed string.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendStrings appends a length-prefixed list of strings.
func AppendStrings(b []byte, xs []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(xs)))
	for _, s := range xs {
		b = AppendString(b, s)
	}
	return b
}

// AppendFloats appends a length-prefixed list of floats.
func AppendFloats(b []byte, xs []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = AppendFloat(b, x)
	}
	return b
}

// AppendTime appends t's Unix nanoseconds, 0 for the zero time.
func AppendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return AppendInt(b, 0)
	}
	return AppendInt(b, t.UnixNano())
}

// errShort is a frame that ends inside a field.
var errShort = errors.New("frame ends inside a field")

// Dec reads a frame's fields in order; after the first error every read
// returns a zero value and Err reports it.
type Dec struct {
	b   []byte
	err error
}

// Err returns the first error of the reads so far.
func (d *Dec) Err() error { return d.err }

// Int reads a zig-zag varint.
func (d *Dec) Int() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return x
}

// Float reads a float's bits.
func (d *Dec) Float() float64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = cmpErr(d.err, errShort)
		return 0
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return x
}

// length reads a list or string length that each element needs at least
// min bytes for.
func (d *Dec) length(min int) int {
	if d.err != nil {
		return 0
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k)/uint64(min) {
		d.err = errShort
		return 0
	}
	d.b = d.b[k:]
	return int(n)
}

// String reads a length-prefixed string.
func (d *Dec) String() string {
	n := d.length(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// Strings reads a length-prefixed list of strings; nil when empty.
func (d *Dec) Strings() []string {
	n := d.length(1)
	if d.err != nil || n == 0 {
		return nil
	}
	xs := make([]string, n)
	for i := range xs {
		xs[i] = d.String()
	}
	return xs
}

// Floats reads a length-prefixed list of floats; nil when empty.
func (d *Dec) Floats() []float64 {
	n := d.length(8)
	if d.err != nil || n == 0 {
		return nil
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.Float()
	}
	return xs
}

// Time reads Unix nanoseconds as a UTC time, the zero time for 0.
func (d *Dec) Time() time.Time {
	x := d.Int()
	if x == 0 {
		return time.Time{}
	}
	return time.Unix(0, x).UTC()
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Byte reads one byte.
func (d *Dec) Byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.err = cmpErr(d.err, errShort)
		return 0
	}
	x := d.b[0]
	d.b = d.b[1:]
	return x
}
