package nn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestEncodeBytes checks the exact bytes of a one-tensor file against the
// safetensors layout: u64 little-endian header length, JSON header padded
// with spaces to a multiple of 8, then the raw little-endian float32 data.
func TestEncodeBytes(t *testing.T) {
	p := &Param{Name: "w", Value: []float32{1, -2}, Grad: make([]float32, 2), Shape: []int{2}}
	got, err := Encode([]*Param{p}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	header := `{"__metadata__":{"drover.weights.version":"1"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}` + "    "
	var want []byte
	want = binary.LittleEndian.AppendUint64(want, 104) // 100 bytes of JSON + 4 spaces
	want = append(want, header...)
	want = append(want, 0x00, 0x00, 0x80, 0x3f) // 1.0 = 0x3f800000
	want = append(want, 0x00, 0x00, 0x00, 0xc0) // -2.0 = 0xc0000000
	if !bytes.Equal(got, want) {
		t.Errorf("Encode =\n%q\nwant\n%q", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	actor := NewOrthogonalMLP([]int{8, 64, 64, 5}, NewTanh, math.Sqrt2, 0.01, rand.NewPCG(1, 0))
	critic := NewOrthogonalMLP([]int{8, 64, 64, 1}, NewTanh, math.Sqrt2, 1, rand.NewPCG(2, 0))
	params := append(WithPrefix("actor", actor.Params()), WithPrefix("critic", critic.Params())...)
	var buf bytes.Buffer
	if err := Save(&buf, params, map[string]string{"algo": "ppo"}); err != nil {
		t.Fatal(err)
	}
	ts, meta, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if meta["algo"] != "ppo" || meta[VersionKey] != Version {
		t.Errorf("metadata %v", meta)
	}
	if len(ts) != len(params) {
		t.Errorf("%d tensors, want %d", len(ts), len(params))
	}
	fresh := NewOrthogonalMLP([]int{8, 64, 64, 5}, NewTanh, math.Sqrt2, 0.01, rand.NewPCG(9, 0))
	if err := Assign(WithPrefix("actor", fresh.Params()), ts); err != nil {
		t.Fatal(err)
	}
	for i, p := range actor.Params() {
		for j, v := range p.Value {
			if math.Float32bits(v) != math.Float32bits(fresh.Params()[i].Value[j]) {
				t.Fatalf("%s[%d] = %v after round trip, want %v", p.Name, j, fresh.Params()[i].Value[j], v)
			}
		}
	}
	small := NewOrthogonalMLP([]int{8, 32, 5}, NewTanh, 1, 1, rand.NewPCG(9, 0))
	if err := Assign(WithPrefix("actor", small.Params()), ts); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("Assign with wrong shape: %v", err)
	}
	if err := Assign(small.Params(), ts); err == nil || !strings.Contains(err.Error(), `no tensor "0.weight"`) {
		t.Errorf("Assign with missing name: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	ok := func(name string) *Param {
		return &Param{Name: name, Value: []float32{1}, Grad: []float32{0}, Shape: []int{1}}
	}
	tests := []struct {
		name   string
		params []*Param
		meta   map[string]string
		want   string
	}{
		{"empty name", []*Param{ok("")}, nil, "empty name"},
		{"duplicate", []*Param{ok("a"), ok("a")}, nil, `duplicate parameter name "a"`},
		{"reserved", []*Param{ok("__metadata__")}, nil, "reserved"},
		{"shape", []*Param{{Name: "a", Value: []float32{1}, Shape: []int{2}}}, nil, "shape [2]"},
		{"nan", []*Param{{Name: "a", Value: []float32{float32(math.NaN())}, Shape: []int{1}}}, nil, `"a" element 0 is NaN`},
		{"version", []*Param{ok("a")}, map[string]string{VersionKey: "7"}, VersionKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode(tt.params, tt.meta, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// file builds a safetensors file from a raw header and data.
func file(header string, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func TestDecodeCorrupt(t *testing.T) {
	one := []byte{0, 0, 0x80, 0x3f}
	nan := []byte{0, 0, 0xc0, 0x7f}
	good := file(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, one...)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than the 8-byte header length"},
		{"header length", append(binary.LittleEndian.AppendUint64(nil, 1000), '{', '}'), "header length 1000 exceeds the 2 bytes"},
		{"huge header length", append(binary.LittleEndian.AppendUint64(nil, math.MaxUint64), '{'), "header length"},
		{"not json", file(`{"w":`), "invalid header"},
		{"not object", file(`[1,2,3]`), "header does not start with '{'"},
		{"dtype", file(`{"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f), `"w" has dtype F64, want F32`},
		{"unknown dtype", file(`{"w":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}}`, 0), "invalid DType"},
		{"offsets out of range", file(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}}`, one...), "metadata validation error: info data offsets mismatch"},
		{"offsets past end", file(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, one...), "incomplete buffer"},
		{"shape mismatch", file(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,4]}}`, one...), "offsets mismatch"},
		{"gap", file(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, append(one, one...)...), `invalid metadata offset for tensor "w"`},
		{"trailing bytes", append(good, 0), "incomplete buffer"},
		{"negative shape", file(`{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, one...), "shape"},
		{"nan weight", file(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, nan...), `tensor "w" element 0 is NaN`},
		{"version", file(`{"__metadata__":{"drover.weights.version":"2"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, one...), `format version "2"`},
		{"metadata value", file(`{"__metadata__":{"k":1}}`), "__metadata__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrCorrupt) {
				t.Errorf("err = %v, want ErrCorrupt containing %q", err, tt.want)
			}
		})
	}
	// A foreign file without the version key decodes.
	ts, meta, err := Decode(good)
	if err != nil || meta != nil || len(ts) != 1 || ts["w"].Data[0] != 1 || ts["w"].Shape[0] != 1 {
		t.Errorf("Decode(foreign) = %v, %v, %v", ts, meta, err)
	}
}

// FuzzDecode checks that Decode never panics, and that whatever it accepts
// re-encodes to a file that decodes to the same tensors. The second argument
// seeds a generator of random valid files so the fuzzer also mutates near
// well-formed input.
func FuzzDecode(f *testing.F) {
	p := &Param{Name: "w", Value: []float32{1, -2}, Grad: make([]float32, 2), Shape: []int{2}}
	valid, _ := Encode([]*Param{p}, map[string]string{"a": "b"}, nil)
	f.Add(valid, uint64(0))
	f.Add(valid[:len(valid)-1], uint64(1))
	f.Add(file(`{"w":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}}`), uint64(2))
	f.Add([]byte{}, uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		if seed%4 == 0 { // mutate a random valid file
			rng := rand.New(rand.NewPCG(seed, 0))
			m := NewOrthogonalMLP([]int{1 + rng.IntN(3), 1 + rng.IntN(3)}, NewTanh, 1, 1, rand.NewPCG(seed, 1))
			b, err := Encode(m.Params(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range data {
				b[int(c)%len(b)] ^= byte(rng.Uint32())
			}
			data = b
		}
		ts, meta, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		var params []*Param
		for name, tt := range ts {
			params = append(params, &Param{Name: name, Value: tt.Data, Grad: make([]float32, len(tt.Data)), Shape: tt.Shape})
		}
		delete(meta, VersionKey)
		b, err := Encode(params, meta, nil)
		if err != nil {
			if strings.Contains(err.Error(), "empty name") {
				return // a foreign file may use a name Encode refuses
			}
			t.Fatalf("re-encode: %v", err)
		}
		ts2, _, err := Decode(b)
		if err != nil {
			t.Fatalf("decode re-encoded: %v", err)
		}
		for name, tt := range ts {
			if len(ts2[name].Data) != len(tt.Data) {
				t.Fatalf("tensor %q changed length", name)
			}
		}
	})
}
