package checkpoints

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/internal/atomicfile"
	"github.com/drover-sched/drover/internal/inputfile"
)

// Version is the checkpoint format version written into meta.json.
const Version = 1

// File names inside a checkpoint directory.
const (
	WeightsFile = "weights.safetensors"
	MetaFile    = "meta.json"
)

// ErrCorrupt wraps every problem Load finds in a checkpoint's contents.
var ErrCorrupt = errors.New("checkpoints: corrupt checkpoint")

// Meta describes a checkpoint.
type Meta struct {
	// Version is the format version (Version).
	Version int `json:"version"`
	// Env and Algo name the environment and the training algorithm.
	Env  string `json:"env"`
	Algo string `json:"algo"`
	// ObsDim and Actions are the observation size and the action count.
	ObsDim  int `json:"obs_dim"`
	Actions int `json:"actions"`
	// Hidden are the hidden layer widths of each network and Activation
	// their activation ("tanh" or "relu").
	Hidden     []int  `json:"hidden"`
	Activation string `json:"activation"`
	// Networks names the networks stored, in order (e.g. actor, critic);
	// each network's parameters are "<name>.<layer>.weight|bias".
	Networks []string `json:"networks"`
	// Seed and Steps are the training seed and environment steps.
	Seed  uint64 `json:"seed"`
	Steps int    `json:"steps"`
	// Hyperparams records the training configuration.
	Hyperparams map[string]float64 `json:"hyperparams,omitempty"`
	// Eval holds evaluation scores by name (e.g. mean_return_last20).
	Eval map[string]float64 `json:"eval,omitempty"`
	// Support, when present, is the box of training contexts a learned
	// variant's decisions are restricted to (Support.Gate: outside
	// it the heuristic's choice stands).
	Support *Support `json:"support,omitempty"`
	// MM is a learned multimodal autoscaler's setting (env mm-rl only):
	// its observation and action layout, profile, rule, training and the
	// gate's verdict.
	MM *MMScale `json:"mm,omitempty"`
	// Converged is the convergence gate's verdict (false until it has one).
	Converged bool `json:"converged"`
	// Probe holds inputs (rows of ObsDim) and, per network, the outputs the
	// saved weights give on them.
	Probe Probe `json:"probe"`
}

// Probe is a forward-pass check carried by a checkpoint.
type Probe struct {
	// Inputs are probe observations, one per row.
	Inputs [][]float32 `json:"inputs"`
	// Outputs maps a network name to its outputs, one row per input.
	Outputs map[string][][]float32 `json:"outputs"`
}

// EncodeMeta returns m as indented JSON.
func EncodeMeta(m Meta) ([]byte, error) {
	return json.MarshalIndent(m, "", "  ")
}

// DecodeMeta parses and validates meta.json. A leading UTF-8 byte-order
// mark is skipped. The networks' shape is held to the rule train's
// configs are (nn.CheckHidden: each hidden width in [1, nn.MaxWidth]; and
// nn.CheckSizes: at most nn.MaxParams parameters with obs_dim and
// actions), so that a meta.json naming huge layers is refused before
// anything is allocated for them.
func DecodeMeta(data []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(inputfile.TrimBOM(data), &m); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, MetaFile, err)
	}
	switch {
	case m.Version != Version:
		return Meta{}, fmt.Errorf("%w: %s: version %d, want %d", ErrCorrupt, MetaFile, m.Version, Version)
	case m.ObsDim <= 0 || m.Actions <= 0:
		return Meta{}, fmt.Errorf("%w: %s: obs_dim %d, actions %d: want positive", ErrCorrupt, MetaFile, m.ObsDim, m.Actions)
	case m.Activation != "tanh" && m.Activation != "relu":
		return Meta{}, fmt.Errorf("%w: %s: activation %q, want tanh or relu", ErrCorrupt, MetaFile, m.Activation)
	case len(m.Networks) == 0:
		return Meta{}, fmt.Errorf("%w: %s: no networks", ErrCorrupt, MetaFile)
	}
	if err := nn.CheckHidden(m.Hidden); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, MetaFile, err)
	}
	if err := nn.CheckSizes(append(append([]int{m.ObsDim}, m.Hidden...), m.Actions)); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: obs_dim %d, hidden %v, actions %d: %w", ErrCorrupt, MetaFile, m.ObsDim, m.Hidden, m.Actions, err)
	}
	if m.Support != nil {
		if err := m.Support.Validate(m.ObsDim); err != nil {
			return Meta{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, MetaFile, err)
		}
	}
	if err := validateMM(m); err != nil {
		return Meta{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, MetaFile, err)
	}
	for i, in := range m.Probe.Inputs {
		if len(in) != m.ObsDim {
			return Meta{}, fmt.Errorf("%w: %s: probe input %d has %d values, want %d", ErrCorrupt, MetaFile, i, len(in), m.ObsDim)
		}
	}
	return m, nil
}

// validateMM checks that an mm-rl checkpoint carries a valid MMScale and
// that no other carries one.
func validateMM(m Meta) error {
	switch {
	case m.MM != nil:
		return m.MM.validate(m)
	case m.Env == MMRLEnv:
		return errors.New("mm: missing in an mm-rl checkpoint")
	}
	return nil
}

// probeInputs returns fixed, deterministic probe observations.
func probeInputs(dim int) [][]float32 {
	in := make([][]float32, 4)
	for i := range in {
		in[i] = make([]float32, dim)
		for j := range in[i] {
			in[i][j] = float32(math.Sin(float64(1+i*dim+j))) * 0.5
		}
	}
	return in
}

// Save writes a checkpoint of the named networks (in Networks order) to
// dir, creating it, with the probe computed from the networks themselves.
func Save(dir string, m Meta, nets map[string]*nn.MLP) error {
	m.Version = Version
	if len(m.Networks) == 0 {
		return errors.New("checkpoints: Meta.Networks is empty")
	}
	if err := validateMM(m); err != nil {
		return fmt.Errorf("checkpoints: %v", err)
	}
	var params []*nn.Param
	m.Probe = Probe{Inputs: probeInputs(m.ObsDim), Outputs: map[string][][]float32{}}
	x := nn.NewMat(len(m.Probe.Inputs), m.ObsDim)
	for i, in := range m.Probe.Inputs {
		copy(x.Data[i*m.ObsDim:], in)
	}
	for _, name := range m.Networks {
		net, ok := nets[name]
		if !ok {
			return fmt.Errorf("checkpoints: no network %q", name)
		}
		params = append(params, nn.WithPrefix(name, net.Params())...)
		y := net.Forward(x)
		rows := make([][]float32, y.Rows)
		for i := range rows {
			rows[i] = append([]float32(nil), y.Row(i)...)
		}
		m.Probe.Outputs[name] = rows
	}
	weights, err := nn.Encode(params, map[string]string{"drover.checkpoint.version": fmt.Sprint(Version)}, nil)
	if err != nil {
		return fmt.Errorf("checkpoints: encode weights: %w", err)
	}
	meta, err := EncodeMeta(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Weights first: a reader keys on meta.json, which appears last.
	if err := writeAtomic(filepath.Join(dir, WeightsFile), weights); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, MetaFile), meta)
}

// writeAtomic writes data to a temporary file beside path, syncs it and
// renames it over path.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.WriteBytes(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Load reads and validates the checkpoint in dir: the metadata, the
// weights, that every network's tensors are present with the shapes the
// metadata implies, and that the weights reproduce the probe to 1e-5
// (relative for outputs above 1 in magnitude).
func Load(dir string) (Meta, map[string]*nn.MLP, error) {
	mb, wb, err := ReadFiles(dir)
	if err != nil {
		return Meta{}, nil, err
	}
	return Decode(mb, wb)
}

// ReadFiles reads the two files of the checkpoint in dir, meta.json and
// the weights, for Decode: each must be a regular file within its limit
// (inputfile.Document, inputfile.Weights). A missing file is an error
// naming it.
func ReadFiles(dir string) (meta, weights []byte, err error) {
	meta, err = inputfile.ReadFile(filepath.Join(dir, MetaFile), inputfile.Document)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoints: %w", err)
	}
	weights, err = inputfile.ReadFile(filepath.Join(dir, WeightsFile), inputfile.Weights)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoints: %w", err)
	}
	return meta, weights, nil
}

// Decode is Load on the two files' contents.
func Decode(metaJSON, weights []byte) (Meta, map[string]*nn.MLP, error) {
	m, err := DecodeMeta(metaJSON)
	if err != nil {
		return Meta{}, nil, err
	}
	tensors, _, err := nn.Decode(weights)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, WeightsFile, err)
	}
	nets := map[string]*nn.MLP{}
	for _, name := range m.Networks {
		out := m.Actions
		if name == "critic" || name == "value" {
			out = 1
		}
		net := Build(m.ObsDim, m.Hidden, out, m.Activation)
		if err := nn.Assign(nn.WithPrefix(name, net.Params()), tensors); err != nil {
			return Meta{}, nil, fmt.Errorf("%w: network %s: %w", ErrCorrupt, name, err)
		}
		nets[name] = net
		want := m.Probe.Outputs[name]
		if len(m.Probe.Inputs) > 0 {
			x := nn.NewMat(len(m.Probe.Inputs), m.ObsDim)
			for i, in := range m.Probe.Inputs {
				copy(x.Data[i*m.ObsDim:], in)
			}
			y := net.Forward(x)
			if len(want) != y.Rows {
				return Meta{}, nil, fmt.Errorf("%w: network %s: probe has %d output rows, want %d", ErrCorrupt, name, len(want), y.Rows)
			}
			for i := range want {
				if len(want[i]) != y.Cols {
					return Meta{}, nil, fmt.Errorf("%w: network %s: probe row %d has %d outputs, want %d", ErrCorrupt, name, i, len(want[i]), y.Cols)
				}
				for j, v := range want[i] {
					if !probeClose(v, y.At(i, j)) {
						return Meta{}, nil, fmt.Errorf("%w: network %s: probe output (%d,%d) is %v, the weights give %v", ErrCorrupt, name, i, j, v, y.At(i, j))
					}
				}
			}
		}
	}
	return m, nets, nil
}

// probeClose reports whether a recorded probe output want and the one the
// loaded weights give agree to 1e-5: absolutely for outputs up to 1 in
// magnitude, relatively above. float32 resolves a value v only to about
// 6e-8 |v| (one unit in the last place of 200 is 1.5e-5), so weights saved
// by a build that sums in another order (the netlib tag's OpenBLAS) must
// not read as corrupt because a value estimate is large.
func probeClose(want, got float32) bool {
	w, g := float64(want), float64(got)
	return math.Abs(w-g) <= 1e-5*math.Max(1, math.Abs(w))
}

// Build returns an untrained network of the checkpoint's shape: obsDim ->
// hidden... -> out with the activation after every hidden layer.
func Build(obsDim int, hidden []int, out int, activation string) *nn.MLP {
	act := nn.NewTanh
	if activation == "relu" {
		act = nn.NewReLU
	}
	return nn.NewStack(append(append([]int{obsDim}, hidden...), out), act)
}
