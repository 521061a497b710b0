package runlog

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crc32cBitwise is CRC-32C computed bit by bit from its definition
// (reflected polynomial 0x82F63B78, initial and final XOR 0xFFFFFFFF),
// independent of hash/crc32's tables.
func crc32cBitwise(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

func TestMaskedCRC32C(t *testing.T) {
	// The standard check value of CRC-32C is that of "123456789":
	// 0xE3069283 (RFC 3720, B.4). Masking it by hand:
	//   c>>15           = 0x0001C60D (its top 17 bits)
	//   c<<17 (32 bits) = 0x25060000 (its low 15 bits, 0x1283, moved up)
	//   rotated         = 0x2507C60D
	//   + 0xa282ead8    = 0xC78AB0E5 (mod 2^32)
	check := []byte("123456789")
	if got := crc32cBitwise(check); got != 0xE3069283 {
		t.Fatalf("bitwise CRC-32C(123456789) = %#08x, want 0xE3069283", got)
	}
	if got := MaskedCRC32C(check); got != 0xC78AB0E5 {
		t.Errorf("MaskedCRC32C(123456789) = %#08x, want 0xC78AB0E5", got)
	}
	r := rand.New(rand.NewSource(1))
	for n := range 100 {
		b := make([]byte, n)
		r.Read(b)
		c := crc32cBitwise(b)
		if got, want := MaskedCRC32C(b), (c>>15|c<<17)+0xa282ead8; got != want {
			t.Fatalf("len %d: MaskedCRC32C = %#08x, bitwise %#08x", n, got, want)
		}
	}
}

// goldenFile is a two-event file encoded by hand from
// docs/format/tfevents.md: the file-version event and one scalar, both at
// wall time 1.5 s. The CRCs were worked out with crc32cBitwise and agree
// with scripts/read_tfevents.py's pure-Python CRC-32C;
// TestGoldenCRCs recomputes them.
var goldenFile = [][]string{
	{ // Event{wall_time: 1.5, file_version: "brain.Event:2"}
		"1800000000000000", // length 24, uint64 little-endian
		"a37f4b22",         // masked CRC-32C of the length: 0x224b7fa3
		"09" + "000000000000f83f" + // field 1, fixed64: 1.5
			"1a" + "0d" + hex.EncodeToString([]byte("brain.Event:2")), // field 3, bytes, 13
		"2a28646c", // masked CRC-32C of the data: 0x6c64282a
	},
	{ // Event{wall_time: 1.5, step: 3, summary {value {tag: "a", simple_value: 0.5}}}
		"1700000000000000", // length 23
		"e7cef81e",         // 0x1ef8cee7
		"09" + "000000000000f83f" + // field 1, fixed64: 1.5
			"10" + "03" + // field 2, varint: 3
			"2a" + "0a" + // field 5 (Summary), 10 bytes
			"0a" + "08" + // Summary field 1 (Value), 8 bytes
			"0a" + "01" + "61" + // Value field 1 (tag): "a"
			"15" + "0000003f", // Value field 2, fixed32: 0.5
		"de5768cd", // 0xcd6857de
	},
}

var goldenEvents = []Event{
	{WallTime: 1.5, FileVersion: FileVersion},
	{WallTime: 1.5, Step: 3, Values: []Value{{Tag: "a", SimpleValue: 0.5}}},
}

func golden(t *testing.T) []byte {
	t.Helper()
	var b []byte
	for _, rec := range goldenFile {
		for _, part := range rec {
			x, err := hex.DecodeString(part)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, x...)
		}
	}
	return b
}

func TestGoldenCRCs(t *testing.T) {
	for i, rec := range goldenFile {
		var parts [4][]byte
		for j, p := range rec {
			parts[j], _ = hex.DecodeString(p)
		}
		for _, c := range []struct{ data, crc []byte }{{parts[0], parts[1]}, {parts[2], parts[3]}} {
			x := crc32cBitwise(c.data)
			want := (x>>15 | x<<17) + 0xa282ead8
			if got := uint32(c.crc[0]) | uint32(c.crc[1])<<8 | uint32(c.crc[2])<<16 | uint32(c.crc[3])<<24; got != want {
				t.Errorf("record %d: golden CRC %#08x, bitwise %#08x", i, got, want)
			}
		}
	}
}

func TestEncodeGolden(t *testing.T) {
	var got []byte
	for _, e := range goldenEvents {
		got = AppendEventRecord(got, e)
	}
	if want := golden(t); !bytes.Equal(got, want) {
		t.Errorf("encoded\n%x\nwant\n%x", got, want)
	}
}

func TestDecodeGolden(t *testing.T) {
	got, err := DecodeEvents(golden(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(goldenEvents, got); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
}

func TestRoundTrip(t *testing.T) {
	events := []Event{
		{WallTime: 1700000000.25, FileVersion: FileVersion},
		{WallTime: 1700000001, Step: 512, Values: []Value{{Tag: TagEpisodicReturn, SimpleValue: 21}}},
		{WallTime: 1700000002, Step: 1 << 40, Values: []Value{{Tag: TagLearningRate, SimpleValue: 2.5e-4}, {Tag: TagSPS, SimpleValue: 3000}}},
		{WallTime: 1700000003, Step: -7, Values: []Value{{Tag: TagClipFrac, SimpleValue: 0}}},
		{WallTime: 1700000004, Step: 9, Values: []Value{{Tag: "", SimpleValue: -1.5}}},
		{},
	}
	var b []byte
	for _, e := range events {
		b = AppendEventRecord(b, e)
	}
	got, err := DecodeEvents(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(events, got, cmp.Comparer(func(a, b []Value) bool { return cmp.Equal(norm(a), norm(b)) })); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
	// NaN survives bit for bit.
	nan := AppendEventRecord(nil, Event{Step: 1, Values: []Value{{Tag: TagExplainedVariance, SimpleValue: float32(math.NaN())}}})
	got, err = DecodeEvents(nan)
	if err != nil || len(got) != 1 || !math.IsNaN(float64(got[0].Values[0].SimpleValue)) {
		t.Errorf("NaN round trip: %v, %v", got, err)
	}
}

// norm treats a nil and an empty value list alike.
func norm(v []Value) []Value {
	if len(v) == 0 {
		return nil
	}
	return v
}

func TestDecodeErrors(t *testing.T) {
	g := golden(t)
	first := len(g) - (12 + 23 + 4) // where the second record starts
	flip := func(i int) []byte {
		b := bytes.Clone(g)
		b[i] ^= 1
		return b
	}
	tests := []struct {
		name   string
		data   []byte
		events int // complete events decoded before the error
		want   error
	}{
		{"empty", nil, 0, nil},
		{"cut in header", g[:first+5], 1, ErrTruncated},
		{"cut in data", g[:first+20], 1, ErrTruncated},
		{"cut in data CRC", g[:len(g)-1], 1, ErrTruncated},
		{"length flipped", flip(first), 1, ErrCorrupt},
		{"length CRC flipped", flip(first + 9), 1, ErrCorrupt},
		{"data flipped", flip(first + 14), 1, ErrCorrupt},
		{"data CRC flipped", flip(len(g) - 2), 1, ErrCorrupt},
		{"first record flipped", flip(20), 0, ErrCorrupt},
		{"bad protobuf", AppendRecord(nil, []byte{0xff}), 0, ErrCorrupt},
		{"wall_time as varint", AppendRecord(nil, []byte{0x08, 0x01}), 0, ErrCorrupt},
		{"step as bytes", AppendRecord(nil, []byte{0x12, 0x00}), 0, ErrCorrupt},
		{"simple_value as varint", AppendRecord(nil, []byte{0x2a, 0x04, 0x0a, 0x02, 0x10, 0x01}), 0, ErrCorrupt},
		{"unknown field skipped", AppendRecord(nil, []byte{0x30, 0x05, 0x10, 0x02}), 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeEvents(tt.data)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if len(got) != tt.events {
				t.Errorf("%d events before the error, want %d", len(got), tt.events)
			}
		})
	}
}

// FuzzReadEvents checks that no input makes the decoder panic, and that
// whatever it decodes re-encodes to records it decodes alike.
func FuzzReadEvents(f *testing.F) {
	var g []byte
	for _, e := range goldenEvents {
		g = AppendEventRecord(g, e)
	}
	f.Add(g)
	f.Add(g[:len(g)-3])
	f.Add([]byte{})
	f.Add(AppendRecord(nil, []byte{0x2a, 0x04, 0x0a, 0x02, 0x10, 0x01}))
	f.Add(AppendRecord(nil, []byte{0x0b, 0x0c})) // a group
	f.Add(append(AppendRecord(nil, nil), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		events, err := ReadEvents(bytes.NewReader(b))
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v wraps neither ErrTruncated nor ErrCorrupt", err)
		}
		var re []byte
		for _, e := range events {
			re = AppendEventRecord(re, e)
		}
		again, err := DecodeEvents(re)
		if err != nil {
			t.Fatalf("re-encoded events do not decode: %v", err)
		}
		if len(again) != len(events) {
			t.Fatalf("%d events re-decoded, want %d", len(again), len(events))
		}
	})
}
