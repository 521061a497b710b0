package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Gradient checks compare each analytic gradient with the central difference
// (L(θ+h) - L(θ-h)) / 2h of the float32 forward pass, with h = fdStep and the
// scalar loss accumulated in float64. The truncation error is O(h²·L”') ≈
// 1e-5 for these smooth functions and the float32 rounding error is about
// 1e-7·|L|/h ≈ 1e-5, so fdTol = 2e-3 (absolute plus relative) is loose enough
// never to flake and tight enough to catch a wrong sign, factor or index
// (those give O(1) errors).
const (
	fdStep = 1e-2
	fdTol  = 2e-3
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

func randMat(rng *rand.Rand, rows, cols int, scale float64) Mat {
	m := NewMat(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(scale * rng.NormFloat64())
	}
	return m
}

// weightedSum returns Σ w⊙y in float64: a scalar loss whose gradient with
// respect to y is w.
func weightedSum(w, y Mat) float64 {
	var s float64
	for i, v := range y.Data {
		s += float64(w.Data[i]) * float64(v)
	}
	return s
}

// checkGrad perturbs each element of x and compares the central difference
// of loss with analytic[i].
func checkGrad(t *testing.T, what string, x, analytic []float32, loss func() float64) {
	t.Helper()
	checkGradKink(t, what, x, analytic, loss, nil)
}

// checkGradKink is checkGrad that skips an element when kinked reports that
// the last evaluation of loss crossed a non-differentiable point (a ReLU
// input changing sign), where the central difference is meaningless.
func checkGradKink(t *testing.T, what string, x, analytic []float32, loss func() float64, kinked func() bool) {
	t.Helper()
	if len(x) != len(analytic) {
		t.Fatalf("%s: %d values, %d gradients", what, len(x), len(analytic))
	}
	for i := range x {
		orig := x[i]
		x[i] = orig + fdStep
		up := loss()
		skip := kinked != nil && kinked()
		x[i] = orig - fdStep
		down := loss()
		skip = skip || kinked != nil && kinked()
		x[i] = orig
		if skip {
			continue
		}
		num := (up - down) / (2 * fdStep)
		got := float64(analytic[i])
		if math.Abs(num-got) > fdTol*(1+math.Max(math.Abs(num), math.Abs(got))) {
			t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g", what, i, got, num)
		}
	}
}

func TestLinearGrad(t *testing.T) {
	rng := newRNG(1)
	l := NewLinear(4, 3)
	TorchDefaultInit(l, rand.NewPCG(2, 2))
	x := randMat(rng, 5, 4, 1)
	w := randMat(rng, 5, 3, 1)
	loss := func() float64 { return weightedSum(w, l.Forward(x)) }
	loss()
	dx := l.Backward(w).Clone()
	checkGrad(t, "dx", x.Data, dx.Data, loss)
	checkGrad(t, "dW", l.W.Value, l.W.Grad, loss)
	checkGrad(t, "db", l.B.Value, l.B.Grad, loss)
}

// TestLinearNaive checks Forward and Backward against the defining sums.
func TestLinearNaive(t *testing.T) {
	rng := newRNG(3)
	l := NewLinear(7, 5)
	TorchDefaultInit(l, rand.NewPCG(4, 4))
	x := randMat(rng, 6, 7, 1)
	dy := randMat(rng, 6, 5, 1)
	y := l.Forward(x).Clone()
	dx := l.Backward(dy).Clone()
	for i := 0; i < 6; i++ {
		for o := 0; o < 5; o++ {
			want := float64(l.B.Value[o])
			for k := 0; k < 7; k++ {
				want += float64(x.At(i, k)) * float64(l.W.Value[o*7+k])
			}
			if d := math.Abs(want - float64(y.At(i, o))); d > 1e-5 {
				t.Errorf("y[%d,%d] = %v, want %v", i, o, y.At(i, o), want)
			}
		}
		for k := 0; k < 7; k++ {
			var want float64
			for o := 0; o < 5; o++ {
				want += float64(dy.At(i, o)) * float64(l.W.Value[o*7+k])
			}
			if d := math.Abs(want - float64(dx.At(i, k))); d > 1e-5 {
				t.Errorf("dx[%d,%d] = %v, want %v", i, k, dx.At(i, k), want)
			}
		}
	}
	// Gradients accumulate: a second Backward doubles them.
	g := append([]float32(nil), l.W.Grad...)
	l.Backward(dy)
	for i := range g {
		if d := math.Abs(float64(2*g[i] - l.W.Grad[i])); d > 1e-5 {
			t.Fatalf("W.Grad[%d] after two Backward calls = %v, want %v", i, l.W.Grad[i], 2*g[i])
		}
	}
}

func TestActivationGrad(t *testing.T) {
	rng := newRNG(5)
	tests := []struct {
		name  string
		layer Layer
	}{
		{"tanh", &Tanh{}},
		{"relu", &ReLU{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := randMat(rng, 4, 6, 1.5)
			for i, v := range x.Data { // keep ReLU inputs away from its kink
				if math.Abs(float64(v)) < 0.1 {
					x.Data[i] = 0.1 + float32(i%3)*0.2
				}
			}
			w := randMat(rng, 4, 6, 1)
			loss := func() float64 { return weightedSum(w, tt.layer.Forward(x)) }
			loss()
			dx := tt.layer.Backward(w).Clone()
			checkGrad(t, "dx", x.Data, dx.Data, loss)
		})
	}
}

func TestMLPGrad(t *testing.T) {
	rng := newRNG(6)
	src := rand.NewPCG(7, 7)
	m := NewMLP(NewLinear(3, 5), NewTanh(), NewLinear(5, 4), NewReLU(), NewLinear(4, 2))
	for _, l := range m.Layers {
		if lin, ok := l.(*Linear); ok {
			TorchDefaultInit(lin, src)
		}
	}
	x := randMat(rng, 8, 3, 1)
	w := randMat(rng, 8, 2, 1)
	loss := func() float64 { return weightedSum(w, m.Forward(x)) }
	loss()
	relu := m.Layers[3].(*ReLU)
	active := make([]bool, len(relu.y.Data))
	for i, v := range relu.y.Data {
		active[i] = v > 0
	}
	kinked := func() bool {
		for i, v := range relu.y.Data {
			if (v > 0) != active[i] {
				return true
			}
		}
		return false
	}
	dx := m.Backward(w).Clone()
	checkGradKink(t, "dx", x.Data, dx.Data, loss, kinked)
	want := map[string][]float32{}
	for _, p := range m.Params() {
		checkGradKink(t, p.Name, p.Value, p.Grad, loss, kinked)
		want[p.Name] = append([]float32(nil), p.Grad...)
	}
	// Accumulate gives the same parameter gradients.
	m.ZeroGrad()
	loss()
	m.Accumulate(w)
	for _, p := range m.Params() {
		for i, g := range p.Grad {
			if g != want[p.Name][i] {
				t.Fatalf("Accumulate %s[%d] = %v, Backward gave %v", p.Name, i, g, want[p.Name][i])
			}
		}
	}
	names := ""
	for _, p := range m.Params() {
		names += p.Name + " "
	}
	if names != "0.weight 0.bias 2.weight 2.bias 4.weight 4.bias " {
		t.Errorf("parameter names %q", names)
	}
}

func TestLossGrad(t *testing.T) {
	rng := newRNG(8)
	pred := randMat(rng, 4, 3, 2)
	target := randMat(rng, 4, 3, 2)
	for i := range pred.Data { // keep |pred-target| away from the Huber kink at 1
		if d := math.Abs(float64(pred.Data[i] - target.Data[i])); math.Abs(d-1) < 0.1 {
			pred.Data[i] += 0.3
		}
	}
	tests := []struct {
		name string
		f    func(p, t Mat) (float32, Mat)
	}{
		{"mse", MSE},
		{"huber", func(p, t Mat) (float32, Mat) { return Huber(p, t, 1) }},
		{"huber-delta2", func(p, t Mat) (float32, Mat) { return Huber(p, t, 2.5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, g := tt.f(pred, target)
			loss := func() float64 { l, _ := tt.f(pred, target); return float64(l) }
			checkGrad(t, "dpred", pred.Data, g.Data, loss)
		})
	}
}

// TestLossValues checks hand-worked values: d = pred - target = (0.5, -3).
func TestLossValues(t *testing.T) {
	pred := MatFrom(1, 2, []float32{1.5, -1})
	target := MatFrom(1, 2, []float32{1, 2})
	tests := []struct {
		name     string
		f        func(p, t Mat) (float32, Mat)
		loss     float64
		gradient [2]float64
	}{
		// (0.25 + 9) / 2; grad 2d/2 = d.
		{"mse", MSE, 4.625, [2]float64{0.5, -3}},
		// (0.5·0.25 + (3 - 0.5)) / 2; grad (d, -1)/2.
		{"huber", func(p, t Mat) (float32, Mat) { return Huber(p, t, 1) }, 1.3125, [2]float64{0.25, -0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, g := tt.f(pred, target)
			if math.Abs(float64(l)-tt.loss) > 1e-6 {
				t.Errorf("loss = %v, want %v", l, tt.loss)
			}
			for i := range tt.gradient {
				if math.Abs(float64(g.Data[i])-tt.gradient[i]) > 1e-6 {
					t.Errorf("grad[%d] = %v, want %v", i, g.Data[i], tt.gradient[i])
				}
			}
		})
	}
}

func TestCategoricalGrad(t *testing.T) {
	rng := newRNG(9)
	const n, k = 5, 4
	mask := make([]bool, n*k)
	for i := range mask {
		mask[i] = i%3 != 1 // every row keeps at least two valid actions
	}
	for _, tc := range []struct {
		name string
		mask []bool
	}{{"unmasked", nil}, {"masked", mask}} {
		t.Run(tc.name, func(t *testing.T) {
			logits := randMat(rng, n, k, 1.5)
			actions := make([]int, n)
			for i := range actions {
				for {
					actions[i] = rng.IntN(k)
					if tc.mask == nil || tc.mask[i*k+actions[i]] {
						break
					}
				}
			}
			dOut := make([]float32, n)
			for i := range dOut {
				dOut[i] = float32(rng.NormFloat64())
			}
			sum := func(v []float32) float64 {
				var s float64
				for i, x := range v {
					s += float64(dOut[i]) * float64(x)
				}
				return s
			}
			c := NewCategorical(logits, tc.mask)
			checkGrad(t, "dlogp", logits.Data, c.LogProbGrad(actions, dOut).Data,
				func() float64 { return sum(NewCategorical(logits, tc.mask).LogProb(actions)) })
			eg := c.EntropyGrad(dOut)
			checkGrad(t, "dentropy", logits.Data, eg.Data,
				func() float64 { return sum(NewCategorical(logits, tc.mask).Entropy()) })
			for i, ok := range tc.mask {
				if !ok && eg.Data[i] != 0 {
					t.Errorf("entropy gradient of masked logit %d = %v", i, eg.Data[i])
				}
			}
		})
	}
}

// TestCategoricalValues uses logits (0, ln 2, ln 3): p = (1/6, 2/6, 3/6).
func TestCategoricalValues(t *testing.T) {
	logits := MatFrom(2, 3, []float32{0, float32(math.Ln2), float32(math.Log(3)), 0, float32(math.Ln2), float32(math.Log(3))})
	mask := []bool{true, true, true, false, true, true}
	c := NewCategorical(logits, mask)
	tests := []struct {
		name string
		got  float32
		want float64
	}{
		{"logp row 0 action 2", c.LogProb([]int{2, 2})[0], math.Log(0.5)},
		// Row 1 masks action 0: p = (0, 2/5, 3/5).
		{"logp row 1 action 2", c.LogProb([]int{2, 2})[1], math.Log(0.6)},
		{"entropy row 0", c.Entropy()[0], -(math.Log(1.0/6)/6 + math.Log(1.0/3)/3 + math.Log(0.5)/2)},
		{"entropy row 1", c.Entropy()[1], -(0.4*math.Log(0.4) + 0.6*math.Log(0.6))},
		{"p masked", c.Probs.At(1, 0), 0},
	}
	for _, tt := range tests {
		if math.Abs(float64(tt.got)-tt.want) > 1e-6 {
			t.Errorf("%s = %.8g, want %.8g", tt.name, tt.got, tt.want)
		}
	}
	if got := c.Mode(); got[0] != 2 || got[1] != 2 {
		t.Errorf("Mode = %v, want [2 2]", got)
	}
	// Logit 5 on a masked action must not win the mode.
	c = NewCategorical(MatFrom(1, 2, []float32{5, 0}), []bool{false, true})
	if got := c.Mode(); got[0] != 1 {
		t.Errorf("Mode with masked max = %v, want [1]", got)
	}
}

func TestCategoricalSample(t *testing.T) {
	const draws = 20000
	logits := MatFrom(1, 4, []float32{0, float32(math.Ln2), float32(math.Log(3)), 3})
	mask := []bool{true, true, true, false}
	want := []float64{1.0 / 6, 2.0 / 6, 3.0 / 6, 0}
	c := NewCategorical(logits, mask)
	src := rand.NewPCG(10, 10)
	counts := make([]int, 4)
	for range draws {
		counts[c.Sample(src)[0]]++
	}
	for j, w := range want {
		// 4 standard deviations of a binomial proportion, at most 0.0142.
		if f := float64(counts[j]) / draws; math.Abs(f-w) > 0.015 {
			t.Errorf("action %d frequency %.4f, want %.4f", j, f, w)
		}
	}
	if counts[3] != 0 {
		t.Errorf("masked action drawn %d times", counts[3])
	}
	a := NewCategorical(logits, mask).Sample(rand.NewPCG(3, 3))
	b := NewCategorical(logits, mask).Sample(rand.NewPCG(3, 3))
	if a[0] != b[0] {
		t.Errorf("same seed gave actions %v and %v", a, b)
	}
}

func TestCategoricalPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"all masked", func() { NewCategorical(MatFrom(1, 2, []float32{1, 2}), []bool{false, false}) }},
		{"mask length", func() { NewCategorical(MatFrom(1, 2, []float32{1, 2}), []bool{true}) }},
		{"action range", func() { NewCategorical(MatFrom(1, 2, []float32{1, 2}), nil).LogProb([]int{2}) }},
		{"masked action grad", func() {
			NewCategorical(MatFrom(1, 2, []float32{1, 2}), []bool{true, false}).LogProbGrad([]int{1}, []float32{1})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || len(s) < 4 || s[:4] != "nn: " {
					t.Errorf("panic %v, want an nn: message", r)
				}
			}()
			tt.f()
		})
	}
}

func ExampleCategorical() {
	logits := MatFrom(1, 3, []float32{0, float32(math.Ln2), float32(math.Log(3))})
	c := NewCategorical(logits, []bool{false, true, true}) // action 0 invalid
	fmt.Printf("p = %.2f\n", c.Probs.Row(0))
	fmt.Printf("entropy = %.4f\n", c.Entropy()[0])
	// Output:
	// p = [0.00 0.40 0.60]
	// entropy = 0.6730
}
