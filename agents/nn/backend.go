package nn

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// A Backend runs the learning half of training: the forward passes that
// keep what backpropagation needs, the backward passes, gradient clipping
// and Adam. The Go MLPs stay the networks' canonical form: they are built
// and initialised in Go (so one seed gives the same initial weights on
// every backend), they act during rollouts, and they are what checkpoints
// save. A Trainer takes a copy of them to its device and writes the
// trained weights back with Sync.
//
// The Go backend ("go", the default) trains the MLPs themselves, in
// place, exactly as calling their methods and an Adam directly does. The
// torch backend (package agents/nn/torch, built with the torch build tag
// and linked against libtorch) registers itself as "torch" when imported.
type Backend interface {
	// Name is the backend's registered name.
	Name() string
	// Device is the device the backend trains on ("cpu", "cuda:0", ...).
	Device() string
	// NewTrainer returns a trainer over nets, in order, with Adam (betas
	// 0.9 and 0.999, the given learning rate and eps) over all their
	// parameters in order.
	NewTrainer(nets []*MLP, lr, eps float64) (Trainer, error)
}

// Module is one network as a Trainer exposes it: Forward keeps what
// Accumulate needs (the result is valid until the next Forward of the
// module); Accumulate adds the parameter gradients of dL/d(output) dy, as
// MLP.Accumulate does.
type Module interface {
	Forward(x Mat) Mat
	Accumulate(dy Mat)
}

// Trainer is one training run's networks and optimiser on a backend.
// Forward and Accumulate of a backend that can fail (a device out of
// memory) record the first failure; Step and Sync return it.
type Trainer interface {
	// Module returns the i-th network given to NewTrainer.
	Module(i int) Module
	// ZeroGrad zeroes every parameter's gradient.
	ZeroGrad()
	// ClipGradNorm scales the gradients to a global 2-norm of at most
	// maxNorm and returns the norm before clipping (ClipGradNorm).
	ClipGradNorm(maxNorm float64) float32
	// SetLR sets the learning rate of later steps.
	SetLR(lr float64)
	// Step takes one Adam step from the accumulated gradients.
	Step() error
	// Sync writes the trained weights into the Go MLPs' parameter values
	// (a no-op for the Go backend, whose MLPs are the trained ones).
	Sync() error
	// Close releases the device's memory; the trainer is unusable after.
	Close() error
}

// Opener opens a registered backend on a device.
type Opener func(device string) (Backend, error)

var (
	backendsMu sync.Mutex
	backends   = map[string]Opener{}
)

// ErrNoBackend wraps OpenBackend's error for a backend this binary was
// built without.
var ErrNoBackend = errors.New("nn: backend not built in")

// RegisterBackend makes a backend available to OpenBackend under name. It
// panics if name is taken (a programmer error: two packages registering
// the same backend).
func RegisterBackend(name string, open Opener) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if _, dup := backends[name]; dup || name == GoBackend {
		panic("nn: backend " + name + " registered twice")
	}
	backends[name] = open
}

// GoBackend is the name of the built-in pure-Go backend.
const GoBackend = "go"

// Backends returns the names of the backends this binary has, sorted.
func Backends() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	names := []string{GoBackend}
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CheckBackend reports whether name ("" meaning the Go backend) is a
// backend of this binary, without opening it: a config's early check.
func CheckBackend(name string) error {
	if name == "" || name == GoBackend {
		return nil
	}
	if slices.Contains(Backends(), name) {
		return nil
	}
	if name == "torch" {
		return fmt.Errorf("%w: torch (this drover was built without it: build with -tags torch, which needs libtorch, e.g. Debian's libtorch-dev; make test-torch)", ErrNoBackend)
	}
	return fmt.Errorf("%w: %q, want one of %v", ErrNoBackend, name, Backends())
}

// OpenBackend opens the backend called name ("" is the Go backend) on
// device ("" is the backend's default, "cpu"). The Go backend runs only on
// the CPU.
func OpenBackend(name, device string) (Backend, error) {
	if name == "" || name == GoBackend {
		if device != "" && device != "cpu" {
			return nil, fmt.Errorf("nn: device %q: the go backend runs on the cpu only (use --backend torch for cuda)", device)
		}
		return goBackend{}, nil
	}
	if err := CheckBackend(name); err != nil {
		return nil, err
	}
	backendsMu.Lock()
	open := backends[name]
	backendsMu.Unlock()
	return open(device)
}

// goBackend trains the Go MLPs in place.
type goBackend struct{}

func (goBackend) Name() string   { return GoBackend }
func (goBackend) Device() string { return "cpu" }

func (goBackend) NewTrainer(nets []*MLP, lr, eps float64) (Trainer, error) {
	var params []*Param
	for _, m := range nets {
		params = append(params, m.Params()...)
	}
	return &goTrainer{nets: nets, params: params, opt: NewAdam(params, lr, eps)}, nil
}

// goTrainer is the Go backend's Trainer: the MLPs' own methods, ClipGradNorm
// and an Adam, so training through it is bit for bit training without it.
type goTrainer struct {
	nets   []*MLP
	params []*Param
	opt    *Adam
}

func (t *goTrainer) Module(i int) Module { return t.nets[i] }

func (t *goTrainer) ZeroGrad() {
	for _, m := range t.nets {
		m.ZeroGrad()
	}
}

func (t *goTrainer) ClipGradNorm(maxNorm float64) float32 { return ClipGradNorm(t.params, maxNorm) }
func (t *goTrainer) SetLR(lr float64)                     { t.opt.SetLR(lr) }
func (t *goTrainer) Step() error                          { t.opt.Step(); return nil }
func (t *goTrainer) Sync() error                          { return nil }
func (t *goTrainer) Close() error                         { return nil }
