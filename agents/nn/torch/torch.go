//go:build torch

package torch

/*
#cgo CXXFLAGS: -std=c++17 -O2 -I/usr/include/torch/csrc/api/include -Wno-deprecated-declarations
#cgo LDFLAGS: -ltorch -ltorch_cpu -lc10 -lstdc++
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/drover-sched/drover/agents/nn"
)

// Name is the backend's registered name.
const Name = "torch"

func init() { nn.RegisterBackend(Name, Open) }

// Version returns the libtorch version the binary is linked against.
func Version() string { return C.GoString(C.drv_version()) }

// CUDADevices returns the number of CUDA devices libtorch can use (0 with
// a CPU-only libtorch such as Debian's).
func CUDADevices() int { return int(C.drv_cuda_device_count()) }

var (
	threadsOnce sync.Once
	threadsErr  error // a bad DROVER_TORCH_THREADS, reported by every Open
)

// SetThreads sets libtorch's intra-op threads (the CPU's parallelism
// within one operation) for the whole process.
func SetThreads(n int) {
	threadsOnce.Do(func() {})
	if n > 0 {
		C.drv_set_num_threads(C.int(n))
	}
}

// Open opens the torch backend on device: "" or "cpu", "cuda" (the
// current CUDA device) or "cuda:N". The error names the cause when the
// device cannot be used (no CUDA in this libtorch, no such device). The
// first Open sets libtorch's intra-op threads (and OpenBLAS's, when
// libtorch multiplies through it) to DROVER_TORCH_THREADS, or to 1 when
// that is unset (unless SetThreads came first): more threads only pay off
// for large layers and batches, and cost the small ones dearly.
func Open(device string) (nn.Backend, error) {
	lockThread()
	defer runtime.UnlockOSThread()
	if device == "" {
		device = "cpu"
	}
	threadsOnce.Do(func() {
		n := 1
		if v := os.Getenv("DROVER_TORCH_THREADS"); v != "" {
			k, err := strconv.Atoi(v)
			if err != nil || k < 1 || k > 1024 {
				threadsErr = fmt.Errorf("nn/torch: DROVER_TORCH_THREADS=%q, want 1 to 1024", v)
				return
			}
			n = k
		}
		C.drv_set_num_threads(C.int(n))
	})
	if threadsErr != nil {
		return nil, threadsErr
	}
	cs := C.CString(device)
	defer C.free(unsafe.Pointer(cs))
	if C.drv_check_device(cs) != 0 {
		return nil, fmt.Errorf("nn/torch: %s", lastError())
	}
	return backend{device: device}, nil
}

// lockThread keeps the goroutine on its OS thread until the matching
// runtime.UnlockOSThread: the shim keeps its last error in a thread_local
// string, so a failed call and the lastError that reads its message must
// run on one thread. Unlocked, the goroutine could move between the two
// cgo calls and read another thread's (empty) message: TestDevices saw
// "nn/torch: " with no cause once in a make test run on a loaded machine.
// Every method that calls the shim and may read its error locks; the
// cost is two stores, against microseconds of libtorch per call.
func lockThread() { runtime.LockOSThread() }

// lastError is the shim's message for the failed call just made on this
// OS thread (see lockThread).
func lastError() string {
	return strings.TrimSpace(C.GoString(C.drv_last_error()))
}

type backend struct{ device string }

func (b backend) Name() string   { return Name }
func (b backend) Device() string { return b.device }

// NewTrainer copies nets to the device (their layers must be Linear, Tanh
// or ReLU) with their current weights, and makes an Adam over all their
// parameters in order.
func (b backend) NewTrainer(nets []*nn.MLP, lr, eps float64) (nn.Trainer, error) {
	lockThread()
	defer runtime.UnlockOSThread()
	t := &Trainer{}
	cs := C.CString(b.device)
	defer C.free(unsafe.Pointer(cs))
	for i, m := range nets {
		var kinds []C.int
		var dims []C.int64_t
		for j, l := range m.Layers {
			switch l := l.(type) {
			case *nn.Linear:
				kinds = append(kinds, C.DRV_LINEAR)
				dims = append(dims, C.int64_t(l.In), C.int64_t(l.Out))
			case *nn.Tanh:
				kinds = append(kinds, C.DRV_TANH)
			case *nn.ReLU:
				kinds = append(kinds, C.DRV_RELU)
			default:
				t.Close()
				return nil, fmt.Errorf("nn/torch: network %d layer %d is a %T; the torch backend has Linear, Tanh and ReLU", i, j, l)
			}
		}
		if len(kinds) == 0 {
			t.Close()
			return nil, fmt.Errorf("nn/torch: network %d has no layers", i)
		}
		if len(dims) == 0 {
			dims = append(dims, 0) // a valid pointer for C
		}
		h := C.drv_net_new(C.int(len(kinds)), &kinds[0], &dims[0], cs)
		if h == nil {
			t.Close()
			return nil, fmt.Errorf("nn/torch: network %d: %s", i, lastError())
		}
		mod := &module{t: t, h: h, mlp: m, params: m.Params()}
		t.mods = append(t.mods, mod)
		if int(C.drv_net_nparams(h)) != len(mod.params) {
			t.Close()
			return nil, fmt.Errorf("nn/torch: network %d: %d parameters on the device, %d in Go", i, int(C.drv_net_nparams(h)), len(mod.params))
		}
		for k, p := range mod.params {
			if C.drv_net_set_param(h, C.int(k), (*C.float)(unsafe.Pointer(&p.Value[0])), C.int64_t(len(p.Value))) != 0 {
				t.Close()
				return nil, fmt.Errorf("nn/torch: network %d %s: %s", i, p.Name, lastError())
			}
		}
	}
	hs := make([]*C.drv_net, len(t.mods))
	for i, m := range t.mods {
		hs[i] = m.h
	}
	var first **C.drv_net
	if len(hs) > 0 {
		first = &hs[0] // Go memory holding C pointers only: cgo allows it
	}
	t.opt = C.drv_adam_new(first, C.int(len(hs)), C.double(lr), C.double(eps))
	if t.opt == nil {
		t.Close()
		return nil, fmt.Errorf("nn/torch: adam: %s", lastError())
	}
	return t, nil
}

// Trainer is the torch backend's nn.Trainer. Its Grads method, beyond the
// interface, copies the device's gradients into the Go parameters' Grad
// (for tests and diagnostics).
type Trainer struct {
	mods []*module
	opt  *C.drv_opt
	err  error
}

type module struct {
	t      *Trainer
	h      *C.drv_net
	mlp    *nn.MLP
	params []*nn.Param
	out    nn.Mat
}

func (t *Trainer) fail(what string) {
	if t.err == nil {
		t.err = fmt.Errorf("nn/torch: %s: %s", what, lastError())
	}
}

// Module returns the i-th network's device copy.
func (t *Trainer) Module(i int) nn.Module { return t.mods[i] }

// Forward runs x through the device copy, keeping the graph for
// Accumulate; the result is valid until the module's next Forward. After
// a failure it returns zeros, and Step reports the failure.
func (m *module) Forward(x nn.Mat) nn.Mat {
	lockThread()
	defer runtime.UnlockOSThread()
	outs := m.mlp.Linears()
	cols := outs[len(outs)-1].Out
	if m.out.Rows != x.Rows || m.out.Cols != cols {
		m.out = nn.NewMat(x.Rows, cols)
	}
	if len(x.Data) == 0 || m.t.err != nil {
		clear(m.out.Data)
		return m.out
	}
	if C.drv_net_forward(m.h, (*C.float)(unsafe.Pointer(&x.Data[0])), C.int64_t(x.Rows), C.int64_t(x.Cols),
		(*C.float)(unsafe.Pointer(&m.out.Data[0])), C.int64_t(len(m.out.Data))) != 0 {
		m.t.fail("forward")
		clear(m.out.Data)
	}
	return m.out
}

// Accumulate backpropagates dy through the last Forward's graph.
func (m *module) Accumulate(dy nn.Mat) {
	lockThread()
	defer runtime.UnlockOSThread()
	if m.t.err != nil {
		return
	}
	if len(dy.Data) == 0 {
		return
	}
	if C.drv_net_backward(m.h, (*C.float)(unsafe.Pointer(&dy.Data[0])), C.int64_t(len(dy.Data))) != 0 {
		m.t.fail("backward")
	}
}

// ZeroGrad zeroes the device's gradients.
func (t *Trainer) ZeroGrad() {
	lockThread()
	defer runtime.UnlockOSThread()
	for _, m := range t.mods {
		if C.drv_net_zero_grad(m.h) != 0 {
			t.fail("zero_grad")
		}
	}
}

// ClipGradNorm is torch.nn.utils.clip_grad_norm_ over every parameter.
func (t *Trainer) ClipGradNorm(maxNorm float64) float32 {
	lockThread()
	defer runtime.UnlockOSThread()
	var total C.double
	if t.err != nil {
		return 0
	}
	if C.drv_opt_clip_grad_norm(t.opt, C.double(maxNorm), &total) != 0 {
		t.fail("clip_grad_norm")
	}
	return float32(total)
}

// SetLR sets Adam's learning rate.
func (t *Trainer) SetLR(lr float64) {
	lockThread()
	defer runtime.UnlockOSThread()
	if t.err == nil && C.drv_opt_set_lr(t.opt, C.double(lr)) != 0 {
		t.fail("set_lr")
	}
}

// Step takes one torch.optim.Adam step; it returns the first failure of
// this trainer so far.
func (t *Trainer) Step() error {
	lockThread()
	defer runtime.UnlockOSThread()
	if t.err != nil {
		return t.err
	}
	if C.drv_opt_step(t.opt) != 0 {
		t.fail("adam step")
	}
	return t.err
}

// Sync copies the device's weights into the Go MLPs.
func (t *Trainer) Sync() error {
	lockThread()
	defer runtime.UnlockOSThread()
	if t.err != nil {
		return t.err
	}
	for _, m := range t.mods {
		for k, p := range m.params {
			if C.drv_net_get_param(m.h, C.int(k), (*C.float)(unsafe.Pointer(&p.Value[0])), C.int64_t(len(p.Value))) != 0 {
				t.fail("sync " + p.Name)
				return t.err
			}
		}
	}
	return nil
}

// Grads copies the device's gradients into the Go parameters' Grad.
func (t *Trainer) Grads() error {
	lockThread()
	defer runtime.UnlockOSThread()
	if t.err != nil {
		return t.err
	}
	for _, m := range t.mods {
		for k, p := range m.params {
			if C.drv_net_get_grad(m.h, C.int(k), (*C.float)(unsafe.Pointer(&p.Grad[0])), C.int64_t(len(p.Grad))) != 0 {
				t.fail("grad " + p.Name)
				return t.err
			}
		}
	}
	return nil
}

// Close frees the device copies and the optimiser.
func (t *Trainer) Close() error {
	if t.opt != nil {
		C.drv_opt_free(t.opt)
		t.opt = nil
	}
	for _, m := range t.mods {
		if m.h != nil {
			C.drv_net_free(m.h)
			m.h = nil
		}
	}
	t.mods = nil
	return nil
}
