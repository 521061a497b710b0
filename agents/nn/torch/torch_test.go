//go:build torch

package torch

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
)

// relErr is ‖a-b‖∞ / max(‖a‖∞, ‖b‖∞, tiny): the error relative to the
// tensor's scale, the measure a float32 sum in another order keeps small.
func relErr(a, b []float32) float64 {
	var d, s float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		s = math.Max(s, math.Max(math.Abs(float64(a[i])), math.Abs(float64(b[i]))))
	}
	if s < 1e-30 {
		return d
	}
	return d / s
}

const tol = 1e-5

func randomMat(rows, cols int, rng *rand.Rand) nn.Mat {
	m := nn.NewMat(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

// randomNet is an MLP of random depth and widths with random weights
// and biases (nonzero biases, so their gradients and transfer are tested).
func randomNet(rng *rand.Rand) (*nn.MLP, []int) {
	depth := 1 + rng.IntN(4)
	sizes := []int{1 + rng.IntN(40)}
	for range depth {
		sizes = append(sizes, 1+rng.IntN(70))
	}
	act := nn.NewTanh
	if rng.IntN(2) == 0 {
		act = nn.NewReLU
	}
	m := nn.NewOrthogonalMLP(sizes, act, math.Sqrt2, 1, rng)
	for _, l := range m.Linears() {
		for i := range l.B.Value {
			l.B.Value[i] = float32(rng.NormFloat64() * 0.1)
		}
	}
	return m, sizes
}

func clone(m *nn.MLP, sizes []int) *nn.MLP {
	act := nn.NewTanh
	for _, l := range m.Layers {
		if _, ok := l.(*nn.ReLU); ok {
			act = nn.NewReLU
		}
	}
	c := nn.NewStack(sizes, act)
	for i, p := range c.Params() {
		copy(p.Value, m.Params()[i].Value)
	}
	return c
}

func open(t testing.TB) nn.Backend {
	t.Helper()
	b, err := nn.OpenBackend(Name, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForwardAndGradientsMatchGo runs random networks forward and back on
// both backends and compares outputs and every parameter's gradient.
func TestForwardAndGradientsMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	be := open(t)
	worst := 0.0
	for trial := range 50 {
		goNet, sizes := randomNet(rng)
		tNet := clone(goNet, sizes)
		tr, err := be.NewTrainer([]*nn.MLP{tNet}, 1e-3, 1e-8)
		if err != nil {
			t.Fatal(err)
		}
		rows := 1 + rng.IntN(64)
		x := randomMat(rows, sizes[0], rng)
		want := goNet.Forward(x)
		got := tr.Module(0).Forward(x)
		if e := relErr(want.Data, got.Data); e > tol {
			t.Fatalf("trial %d sizes %v: forward relative error %.3g", trial, sizes, e)
		} else {
			worst = math.Max(worst, e)
		}
		dy := randomMat(rows, sizes[len(sizes)-1], rng)
		goNet.ZeroGrad()
		goNet.Accumulate(dy)
		// Twice through torch, accumulating, as Go's Accumulate does
		// without ZeroGrad.
		tr.ZeroGrad()
		tr.Module(0).Accumulate(dy)
		tr.Module(0).Forward(x)
		tr.Module(0).Accumulate(dy)
		if err := tr.(*Trainer).Grads(); err != nil {
			t.Fatal(err)
		}
		for i, p := range tNet.Params() {
			g := goNet.Params()[i].Grad
			twice := make([]float32, len(g))
			for k := range g {
				twice[k] = 2 * g[k]
			}
			if e := relErr(twice, p.Grad); e > tol {
				t.Fatalf("trial %d sizes %v: %s gradient relative error %.3g", trial, sizes, p.Name, e)
			} else {
				worst = math.Max(worst, e)
			}
		}
		tr.Close()
	}
	t.Logf("worst relative error over 50 random nets: %.3g", worst)
}

// TestClipAndAdamMatchGo takes several clipped Adam steps on two networks
// on both backends, with a changing learning rate, and compares the
// weights after each step.
func TestClipAndAdamMatchGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	be := open(t)
	a, sa := randomNet(rng)
	c, sc := randomNet(rng)
	sc[0] = sa[0]
	c = nn.NewOrthogonalMLP(sc, nn.NewTanh, math.Sqrt2, 1, rng)
	ta, tc := clone(a, sa), clone(c, sc)
	gt, _ := nn.OpenBackend(nn.GoBackend, "")
	g, err := gt.NewTrainer([]*nn.MLP{a, c}, 1e-2, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := be.NewTrainer([]*nn.MLP{ta, tc}, 1e-2, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	defer tt.Close()
	for step := range 20 {
		lr := 1e-2 * (1 - float64(step)/20)
		g.SetLR(lr)
		tt.SetLR(lr)
		x := randomMat(32, sa[0], rng)
		dya := randomMat(32, sa[len(sa)-1], rng)
		dyc := randomMat(32, sc[len(sc)-1], rng)
		var norms [2]float32
		for k, tr := range []nn.Trainer{g, tt} {
			tr.ZeroGrad()
			tr.Module(0).Forward(x)
			tr.Module(1).Forward(x)
			tr.Module(0).Accumulate(dya)
			if step%3 != 0 { // sometimes the second net gets no gradient (PPO's frozen actor)
				tr.Module(1).Accumulate(dyc)
			}
			norms[k] = tr.ClipGradNorm(0.5)
			if err := tr.Step(); err != nil {
				t.Fatal(err)
			}
		}
		if e := relErr(norms[:1], norms[1:]); e > tol {
			t.Fatalf("step %d: grad norm %v (go) vs %v (torch)", step, norms[0], norms[1])
		}
		if err := tt.Sync(); err != nil {
			t.Fatal(err)
		}
		gp := append(a.Params(), c.Params()...)
		for i, p := range append(ta.Params(), tc.Params()...) {
			if e := relErr(gp[i].Value, p.Value); e > tol {
				t.Fatalf("step %d: %s relative error %.3g after Adam", step, p.Name, e)
			}
		}
	}
}

// TestCheckpointIsTheSameFile trains on the torch backend, saves the Go
// networks (as every checkpoint is saved) and checks the file loads into
// a fresh Go network that computes what the device copy computes.
func TestCheckpointIsTheSameFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, sizes := randomNet(rng)
	tr, err := open(t).NewTrainer([]*nn.MLP{m}, 1e-2, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for range 5 {
		x := randomMat(16, sizes[0], rng)
		tr.ZeroGrad()
		tr.Module(0).Forward(x)
		tr.Module(0).Accumulate(randomMat(16, sizes[len(sizes)-1], rng))
		if err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Sync(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nn.Save(&buf, m.Params(), map[string]string{"backend": "torch"}); err != nil {
		t.Fatal(err)
	}
	tensors, _, err := nn.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	fresh := nn.NewStack(sizes, func() nn.Layer {
		if _, ok := m.Layers[1%len(m.Layers)].(*nn.ReLU); ok {
			return nn.NewReLU()
		}
		return nn.NewTanh()
	})
	if err := nn.Assign(fresh.Params(), tensors); err != nil {
		t.Fatal(err)
	}
	x := randomMat(8, sizes[0], rng)
	want := tr.Module(0).Forward(x).Clone()
	if e := relErr(want.Data, fresh.Forward(x).Data); e > tol {
		t.Fatalf("loaded checkpoint's forward differs from the device's by %.3g", e)
	}
}

// TestDevices: cpu opens; CUDA on a CPU-only libtorch (or a device index
// past the last) is an error naming the cause; nonsense is refused.
func TestDevices(t *testing.T) {
	for _, d := range []string{"", "cpu"} {
		if _, err := nn.OpenBackend(Name, d); err != nil {
			t.Errorf("device %q: %v", d, err)
		}
	}
	if CUDADevices() == 0 {
		_, err := nn.OpenBackend(Name, "cuda")
		if err == nil || !strings.Contains(err.Error(), "CUDA") {
			t.Errorf("cuda without CUDA: %v, want an error naming CUDA", err)
		}
	} else {
		_, err := nn.OpenBackend(Name, "cuda:999")
		if err == nil || !strings.Contains(err.Error(), "cuda:999") {
			t.Errorf("cuda:999: %v", err)
		}
	}
	for _, d := range []string{"tpu", "cuda:x", "gpu"} {
		if _, err := nn.OpenBackend(Name, d); err == nil {
			t.Errorf("device %q accepted", d)
		}
	}
	if _, err := nn.OpenBackend(nn.GoBackend, "cuda"); err == nil {
		t.Error("the go backend accepted cuda")
	}
	if !strings.HasPrefix(Version(), "1.") && !strings.HasPrefix(Version(), "2.") {
		t.Errorf("Version() = %q", Version())
	}
}

// TestFailureIsReported: a backward without a forward, and a gradient of
// the wrong size, are errors Step returns, not crashes.
func TestFailureIsReported(t *testing.T) {
	m := nn.NewStack([]int{3, 4, 2}, nn.NewTanh)
	tr, err := open(t).NewTrainer([]*nn.MLP{m}, 1e-3, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.Module(0).Accumulate(nn.NewMat(5, 2))
	if err := tr.Step(); err == nil || !strings.Contains(err.Error(), "backward") {
		t.Fatalf("backward without forward: %v", err)
	}
	tr2, _ := open(t).NewTrainer([]*nn.MLP{m}, 1e-3, 1e-8)
	defer tr2.Close()
	tr2.Module(0).Forward(nn.NewMat(5, 3))
	tr2.Module(0).Accumulate(nn.NewMat(4, 2))
	if err := tr2.Step(); err == nil {
		t.Fatal("a gradient of the wrong shape was accepted")
	}
	if err := tr2.Sync(); err == nil {
		t.Fatal("Sync after a failure returned nil")
	}
}

// TestRegistered: importing the package registers it, and CheckBackend
// knows it.
func TestRegistered(t *testing.T) {
	if err := nn.CheckBackend(Name); err != nil {
		t.Fatal(err)
	}
	if err := nn.CheckBackend("bogus"); !errors.Is(err, nn.ErrNoBackend) {
		t.Fatalf("bogus: %v", err)
	}
}

// TestErrorOnItsThread opens a device that fails from many goroutines at
// once, so goroutines move between OS threads between cgo calls: every
// error must still carry the shim's message, which lives in a
// thread_local (see lockThread).
func TestErrorOnItsThread(t *testing.T) {
	device, want := "cuda", "CUDA"
	if CUDADevices() > 0 {
		device, want = "cuda:999", "cuda:999"
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, err := nn.OpenBackend(Name, device)
				if err == nil || !strings.Contains(err.Error(), want) {
					errs <- fmt.Errorf("open %s: %v, want an error naming %s", device, err, want)
					return
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
