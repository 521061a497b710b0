package forecast

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/drover-sched/drover/env"
)

// Resource indexes the three node resources a Model forecasts, in the
// order of env.Usage's fields.
type Resource int

// The resources.
const (
	CPU Resource = iota
	MemBW
	Net
	// NumResources is the number of resources.
	NumResources
)

// resourceKeys are the resources' keys in the model file.
var resourceKeys = [NumResources]string{"cpu", "membw", "net"}

// String returns the resource's name as the model file and the command
// line spell it.
func (r Resource) String() string {
	if r >= 0 && r < NumResources {
		return resourceKeys[r]
	}
	return fmt.Sprintf("Resource(%d)", int(r))
}

// Version is the model file format version this package reads and writes.
const Version = 1

// The features of a forecast, in the order of a coefficient row. Each is
// computed from the node's last Window samples of one resource (fewer
// while the history is shorter), for the quantile level being predicted.
var featureNames = []string{
	"bias",    // 1
	"last",    // the latest sample
	"mean3",   // mean of the last 3 samples (15 min at 300 s)
	"mean12",  // mean of the last 12 samples (1 h)
	"mean",    // mean of the window
	"wq",      // the window's type-7 quantile at the level predicted
	"wspread", // the window's P90 - P10
}

// numFeatures is the length of a coefficient row.
var numFeatures = len(featureNames)

// Model is a fitted quantile forecaster: for each resource and each of
// Levels, a linear quantile regression of a future sample of the node's
// utilisation (any sample in the Horizon steps after the latest) on
// features of the node's own recent history. Predictions are sorted
// across levels (so quantiles never cross) and clamped to [0, 1]. A Model
// is immutable after Decode or Fit and safe for concurrent use.
type Model struct {
	// Step is the seconds between the samples the model was fitted on
	// and expects.
	Step float64
	// Horizon is the number of future steps a forecast covers.
	Horizon int
	// Window is the most recent samples the features read.
	Window int
	// MinHistory is the fewest samples a forecast needs; with fewer the
	// caller falls back to something else (SAS: the window's quantiles).
	MinHistory int
	// Levels are the quantile levels, ascending, in (0, 1).
	Levels []float64
	// Coef[r][l] is the coefficient row of resource r at Levels[l], one
	// coefficient per feature (see the package documentation).
	Coef [NumResources][][]float64
}

// file is the model file's JSON layout (docs/format/forecast-model.md).
type file struct {
	Version    int                    `json:"version"`
	Step       float64                `json:"step"`
	Horizon    int                    `json:"horizon"`
	Window     int                    `json:"window"`
	MinHistory int                    `json:"min_history"`
	Levels     []float64              `json:"levels"`
	Features   []string               `json:"features"`
	Coef       map[string][][]float64 `json:"coef"`
}

// MaxSteps bounds a model's Window and Horizon: 4096 steps, 14 days of
// 300 s, far beyond any useful forecast, so a corrupt file cannot ask for
// huge buffers.
const MaxSteps = 4096

// ErrBadModel is wrapped by the errors Decode and Validate return.
var ErrBadModel = errors.New("forecast: bad model")

// Validate reports whether m can forecast: a positive finite Step, a
// Horizon in [1, MaxSteps], 1 <= MinHistory <= Window <= MaxSteps, at
// least two strictly
// ascending Levels in (0, 1), and for every resource one finite
// coefficient row of the features' length per level.
func (m *Model) Validate() error {
	switch {
	case !(m.Step > 0) || math.IsInf(m.Step, 0):
		return fmt.Errorf("%w: step %v", ErrBadModel, m.Step)
	case m.Horizon < 1 || m.Horizon > MaxSteps:
		return fmt.Errorf("%w: horizon %d", ErrBadModel, m.Horizon)
	case m.MinHistory < 1 || m.MinHistory > m.Window || m.Window > MaxSteps:
		return fmt.Errorf("%w: min_history %d, window %d", ErrBadModel, m.MinHistory, m.Window)
	case len(m.Levels) < 2:
		return fmt.Errorf("%w: %d levels, need at least 2", ErrBadModel, len(m.Levels))
	}
	for i, l := range m.Levels {
		if !(l > 0 && l < 1) || i > 0 && !(l > m.Levels[i-1]) {
			return fmt.Errorf("%w: levels %v not ascending in (0, 1)", ErrBadModel, m.Levels)
		}
	}
	for r, rows := range m.Coef {
		if len(rows) != len(m.Levels) {
			return fmt.Errorf("%w: %s: %d coefficient rows for %d levels", ErrBadModel, Resource(r), len(rows), len(m.Levels))
		}
		for l, row := range rows {
			if len(row) != numFeatures {
				return fmt.Errorf("%w: %s: level %v: %d coefficients for %d features", ErrBadModel, Resource(r), m.Levels[l], len(row), numFeatures)
			}
			for _, c := range row {
				if math.IsNaN(c) || math.IsInf(c, 0) {
					return fmt.Errorf("%w: %s: level %v: coefficient %v", ErrBadModel, Resource(r), m.Levels[l], c)
				}
			}
		}
	}
	return nil
}

// Decode parses a model file (docs/format/forecast-model.md): strict JSON
// (no unknown fields, no trailing data) of this Version, whose feature
// names are this package's, in order, and which passes Validate. Errors
// wrap ErrBadModel or the JSON decoder's error and name the field.
func Decode(data []byte) (*Model, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("forecast: decode model: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data", ErrBadModel)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadModel, f.Version, Version)
	}
	if !slices.Equal(f.Features, featureNames) {
		return nil, fmt.Errorf("%w: features %q, want %q", ErrBadModel, f.Features, featureNames)
	}
	if len(f.Coef) != int(NumResources) {
		return nil, fmt.Errorf("%w: coef has %d resources, want %q", ErrBadModel, len(f.Coef), resourceKeys)
	}
	m := &Model{Step: f.Step, Horizon: f.Horizon, Window: f.Window, MinHistory: f.MinHistory, Levels: f.Levels}
	for r, k := range resourceKeys {
		rows, ok := f.Coef[k]
		if !ok {
			return nil, fmt.Errorf("%w: coef lacks %q", ErrBadModel, k)
		}
		m.Coef[r] = rows
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// Encode returns m as an indented model file, ending in a newline. It
// returns an error wrapping ErrBadModel when m does not pass Validate.
func Encode(m *Model) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	f := file{
		Version: Version, Step: m.Step, Horizon: m.Horizon, Window: m.Window,
		MinHistory: m.MinHistory, Levels: m.Levels, Features: featureNames,
		Coef: map[string][][]float64{},
	}
	for r, k := range resourceKeys {
		f.Coef[k] = m.Coef[r]
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("forecast: encode model: %w", err)
	}
	return append(b, '\n'), nil
}

//go:embed model.json
var modelJSON []byte

// Default returns the model fitted by Fit with DefaultConfig on the first
// 70% of each machine's time in the Alibaba cluster-trace-v2018
// machine_usage head, embedded from model.json; the package documentation
// gives its held-out scores. drover forecast fit regenerates the file.
// The file is decoded on the first call (not at package initialisation,
// which every drover command pays); every call returns the same *Model,
// which callers must not change.
var Default = sync.OnceValue(func() *Model { return mustDecode("forecast: model.json", modelJSON) })

// mustDecode decodes an embedded model file, panicking with its name: a
// file that does not load is a build defect, not a run-time condition.
func mustDecode(name string, data []byte) *Model {
	m, err := Decode(data)
	if err != nil {
		panic(name + ": " + err.Error())
	}
	return m
}

// Predict writes into dst (grown as needed and returned) the predicted
// quantiles of resource r at m.Levels for a node whose samples, oldest
// first, are hist; only the last Window are read. sorted, if not nil, is
// the same samples as hist (all of them, at most Window) in ascending
// order, which saves Predict a sort; pass nil otherwise. The quantiles
// ascend and lie in [0, 1]. Predict panics when hist holds fewer than
// MinHistory samples or sorted does not match hist's length.
func (m *Model) Predict(r Resource, hist, sorted, dst []float64) []float64 {
	if len(hist) < m.MinHistory {
		panic(fmt.Sprintf("forecast: %d samples, model needs %d", len(hist), m.MinHistory))
	}
	if len(hist) > m.Window {
		hist, sorted = hist[len(hist)-m.Window:], nil
	}
	if sorted == nil {
		sorted = slices.Clone(hist)
		sort.Float64s(sorted)
	} else if len(sorted) != len(hist) {
		panic(fmt.Sprintf("forecast: %d sorted samples for %d", len(sorted), len(hist)))
	}
	var f [7]float64
	base := baseFeatures(hist, sorted, &f)
	dst = slices.Grow(dst[:0], len(m.Levels))[:len(m.Levels)]
	for l, tau := range m.Levels {
		levelFeature(base, sorted, tau)
		dst[l] = dot(m.Coef[r][l], base)
	}
	return finish(dst)
}

// finish makes predicted quantiles monotone and bounded: sorted (the
// rearrangement of Chernozhukov, Fernández-Val and Galichon, 2010, which
// never increases the pinball loss) and clamped to [0, 1]. A NaN (from a
// NaN sample) stays NaN and sorts first. Quantiles already ascending, as
// CPU's and memory bandwidth's nearly always are, are left as they are.
func finish(q []float64) []float64 {
	ascending := true
	for i, v := range q {
		v = min(max(v, 0), 1)
		q[i] = v
		if i > 0 && !(v >= q[i-1]) {
			ascending = false
		}
	}
	if !ascending { // crossing quantiles, or a NaN
		sort.Float64s(q)
	}
	return q
}

// baseFeatures fills f with the level-independent features of the window
// hist (oldest first, not empty) and its ascending copy sorted, and
// returns f[:numFeatures].
func baseFeatures(hist, sorted []float64, f *[7]float64) []float64 {
	n := len(hist)
	f[0] = 1
	f[1] = hist[n-1]
	f[2] = mean(hist[max(0, n-3):])
	f[3] = mean(hist[max(0, n-12):])
	f[4] = mean(hist)
	f[5] = 0 // set per level
	f[6] = env.Quantile(sorted, 0.9) - env.Quantile(sorted, 0.1)
	return f[:numFeatures]
}

// levelFeature sets the level-dependent feature of f for level tau.
func levelFeature(f, sorted []float64, tau float64) { f[5] = env.Quantile(sorted, tau) }

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
