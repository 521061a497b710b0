package nn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/nlpodyssey/safetensors"
)

// Weight files are safetensors files (https://github.com/huggingface/safetensors)
// holding float32 tensors; docs/format/checkpoint-weights.md is the spec.

// VersionKey is the __metadata__ key under which Encode records the weight
// format version, Version.
const VersionKey = "drover.weights.version"

// Version is the weight format version written by Encode and accepted by Decode.
const Version = "1"

// ErrCorrupt is wrapped by every error Decode returns for malformed input.
var ErrCorrupt = errors.New("nn: corrupt weight file")

// Tensor is a float32 tensor read from a weight file.
type Tensor struct {
	// Shape is the tensor shape; the product of its entries is len(Data).
	Shape []int
	// Data holds the values, row-major.
	Data []float32
}

// f32View adapts a parameter to safetensors.View.
type f32View struct {
	shape []uint64
	data  []byte
}

func (v f32View) DType() safetensors.DType { return safetensors.F32 }
func (v f32View) Shape() []uint64          { return v.shape }
func (v f32View) Data() []byte             { return v.data }
func (v f32View) DataLen() uint64          { return uint64(len(v.data)) }

// Encode appends to b the safetensors encoding of params (dtype F32, each
// under its Name and Shape) with meta as __metadata__, plus VersionKey. Tensors
// are stored in name order. It returns an error for an empty, duplicate or
// reserved name, a shape that does not match the values, a non-finite value,
// or a meta entry for VersionKey other than Version.
func Encode(params []*Param, meta map[string]string, b []byte) ([]byte, error) {
	views := make(map[string]f32View, len(params))
	for _, p := range params {
		switch {
		case p.Name == "":
			return nil, errors.New("nn: encode weights: parameter with empty name")
		case p.Name == "__metadata__":
			return nil, errors.New("nn: encode weights: parameter name __metadata__ is reserved")
		}
		if _, dup := views[p.Name]; dup {
			return nil, fmt.Errorf("nn: encode weights: duplicate parameter name %q", p.Name)
		}
		n := 1
		shape := make([]uint64, len(p.Shape))
		for i, d := range p.Shape {
			if d < 0 {
				return nil, fmt.Errorf("nn: encode weights: parameter %q has negative dimension %d", p.Name, d)
			}
			n *= d
			shape[i] = uint64(d)
		}
		if n != len(p.Value) {
			return nil, fmt.Errorf("nn: encode weights: parameter %q has shape %v (%d values) but %d values", p.Name, p.Shape, n, len(p.Value))
		}
		data := make([]byte, 4*len(p.Value))
		for i, v := range p.Value {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("nn: encode weights: parameter %q element %d is %v", p.Name, i, v)
			}
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		views[p.Name] = f32View{shape: shape, data: data}
	}
	md := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		md[k] = v
	}
	if v, ok := md[VersionKey]; ok && v != Version {
		return nil, fmt.Errorf("nn: encode weights: metadata %s=%q, want %q", VersionKey, v, Version)
	}
	md[VersionKey] = Version
	enc, err := safetensors.Serialize(views, md)
	if err != nil {
		return nil, fmt.Errorf("nn: encode weights: %w", err)
	}
	return append(b, enc...), nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Decode parses a safetensors weight file. It returns the tensors by name and
// the __metadata__ map (nil if absent). Every tensor must be F32 with finite
// values; a file without VersionKey (e.g. one exported from PyTorch) is
// accepted, one with a different version is not. Errors for malformed input
// wrap ErrCorrupt and say what is wrong: a truncated file, a header length
// out of range, a header that is not a JSON object, a dtype other than F32,
// data offsets that are out of range, overlapping or do not match the shape,
// or a NaN or infinite weight.
func Decode(data []byte) (map[string]Tensor, map[string]string, error) {
	if len(data) < 8 {
		return nil, nil, corrupt("file is %d bytes, shorter than the 8-byte header length", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return nil, nil, corrupt("header length %d exceeds the %d bytes that follow it", n, len(data)-8)
	}
	if n == 0 || data[8] != '{' {
		return nil, nil, corrupt("header does not start with '{'")
	}
	st, err := safetensors.Deserialize(data)
	if err != nil {
		return nil, nil, corrupt("%v", err)
	}
	_, md, err := safetensors.ReadMetadata(data)
	if err != nil { // unreachable: Deserialize succeeded on the same bytes
		return nil, nil, corrupt("%v", err)
	}
	meta := md.Metadata()
	if v, ok := meta[VersionKey]; ok && v != Version {
		return nil, nil, corrupt("format version %q, want %q", v, Version)
	}
	out := make(map[string]Tensor, st.Len())
	for _, nt := range st.Tensors() {
		tv := nt.TensorView
		if tv.DType() != safetensors.F32 {
			return nil, nil, corrupt("tensor %q has dtype %s, want F32", nt.Name, tv.DType())
		}
		shape := make([]int, len(tv.Shape()))
		for i, d := range tv.Shape() {
			// The library checked Π shape · 4 == byte length <= len(data),
			// except that a zero dimension allows others to be huge.
			if d > uint64(len(data)) {
				return nil, nil, corrupt("tensor %q dimension %d is %d", nt.Name, i, d)
			}
			shape[i] = int(d)
		}
		raw := tv.Data()
		vals := make([]float32, len(raw)/4)
		for i := range vals {
			v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, corrupt("tensor %q element %d is %v", nt.Name, i, v)
			}
			vals[i] = v
		}
		out[nt.Name] = Tensor{Shape: shape, Data: vals}
	}
	return out, meta, nil
}

// Save writes params and meta to w in the weight format (see Encode).
func Save(w io.Writer, params []*Param, meta map[string]string) error {
	b, err := Encode(params, meta, nil)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("nn: save weights: %w", err)
	}
	return nil
}

// Load reads a whole weight file from r and decodes it (see Decode).
func Load(r io.Reader) (map[string]Tensor, map[string]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: load weights: %w", err)
	}
	return Decode(b)
}

// Assign copies tensors into params by name. Every parameter must have a
// tensor of exactly its shape; tensors matching no parameter are ignored (a
// file may hold several networks under different prefixes, see WithPrefix).
// On error no parameter is modified.
func Assign(params []*Param, tensors map[string]Tensor) error {
	for _, p := range params {
		t, ok := tensors[p.Name]
		if !ok {
			return fmt.Errorf("nn: assign weights: no tensor %q", p.Name)
		}
		if !slices.Equal(t.Shape, p.Shape) || len(t.Data) != len(p.Value) {
			return fmt.Errorf("nn: assign weights: tensor %q has shape %v, parameter %v", p.Name, t.Shape, p.Shape)
		}
	}
	for _, p := range params {
		copy(p.Value, tensors[p.Name].Data)
	}
	return nil
}

// WithPrefix returns params renamed prefix+"."+Name, sharing their Value and
// Grad storage, so that several networks can be saved in one file (CleanRL's
// Agent state_dict has "actor.0.weight", "critic.0.weight", ...).
func WithPrefix(prefix string, params []*Param) []*Param {
	prefix = strings.TrimSuffix(prefix, ".")
	out := make([]*Param, len(params))
	for i, p := range params {
		q := *p
		q.Name = prefix + "." + p.Name
		out[i] = &q
	}
	return out
}
