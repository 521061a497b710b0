package ppo

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*(1+math.Abs(b)) }

func TestClippedPolicyLossHandWorked(t *testing.T) {
	// clip 0.2. Sample 0: A = 1, ratio 1.5: -1.5 vs -1.2 (clamped to
	// 1.2); the max is -1.2, clipped, no gradient. Sample 1: A = -1, ratio
	// 0.5: 0.5 vs 0.8 (clamped to 0.8): 0.8, no gradient. Sample 2: A = 2,
	// ratio 1.1 (inside): both -2.2, gradient -A r / n = -2.2/3.
	// Loss (-1.2 + 0.8 - 2.2) / 3 = -2.6/3. Two of three ratios clipped.
	// KL terms (r-1-log r): 0.5-ln1.5, -0.5-ln0.5, 0.1-ln1.1.
	newLogp := []float32{float32(math.Log(1.5)), float32(math.Log(0.5)), float32(math.Log(1.1))}
	oldLogp := []float32{0, 0, 0}
	adv := []float32{1, -1, 2}
	grad := make([]float32, 3)
	loss, kl, frac := ClippedPolicyLoss(newLogp, oldLogp, adv, 0.2, grad)
	wantKL := ((0.5 - math.Log(1.5)) + (-0.5 - math.Log(0.5)) + (0.1 - math.Log(1.1))) / 3
	if !near(float64(loss), -2.6/3) || !near(float64(kl), wantKL) || !near(float64(frac), 2.0/3) {
		t.Errorf("loss %v kl %v clipfrac %v, want %v %v %v", loss, kl, frac, -2.6/3, wantKL, 2.0/3)
	}
	want := []float64{0, 0, -2.2 / 3}
	for i := range grad {
		if !near(float64(grad[i]), want[i]) {
			t.Errorf("grad %v, want %v", grad, want)
			break
		}
	}
}

func TestClippedLossGradientsMatchFiniteDifferences(t *testing.T) {
	// Away from the kinks, the analytic gradients equal central
	// differences of the loss (float64 arithmetic through float32 inputs).
	newLogp := []float32{0.3, -0.1, 0.05, -0.4}
	oldLogp := []float32{0.1, 0.0, 0.0, 0.0}
	adv := []float32{1.5, -0.7, 0.2, 2}
	newV := []float32{1.0, 0.2, -0.3, 2.5}
	oldV := []float32{0.9, 0.5, -0.1, 1.0}
	ret := []float32{1.5, 0.0, 0.4, 1.2}
	g := make([]float32, 4)
	ClippedPolicyLoss(newLogp, oldLogp, adv, 0.2, g)
	gv := make([]float32, 4)
	ClippedValueLoss(newV, oldV, ret, 0.2, gv)
	const h = 1e-3
	scratch := make([]float32, 4)
	for i := range 4 {
		up, down := append([]float32(nil), newLogp...), append([]float32(nil), newLogp...)
		up[i] += h
		down[i] -= h
		lu, _, _ := ClippedPolicyLoss(up, oldLogp, adv, 0.2, scratch)
		ld, _, _ := ClippedPolicyLoss(down, oldLogp, adv, 0.2, scratch)
		if fd := float64(lu-ld) / (2 * h); math.Abs(fd-float64(g[i])) > 1e-3 {
			t.Errorf("policy grad %d: analytic %v, finite difference %v", i, g[i], fd)
		}
		vu, vd := append([]float32(nil), newV...), append([]float32(nil), newV...)
		vu[i] += h
		vd[i] -= h
		fd := float64(ClippedValueLoss(vu, oldV, ret, 0.2, scratch)-ClippedValueLoss(vd, oldV, ret, 0.2, scratch)) / (2 * h)
		if math.Abs(fd-float64(gv[i])) > 1e-3 {
			t.Errorf("value grad %d: analytic %v, finite difference %v", i, gv[i], fd)
		}
	}
}

func TestClippedValueLossHandWorked(t *testing.T) {
	// clip 0.2. Sample 0: v 1.0, old 0.9, R 1.5: unclipped (−0.5)^2 = 0.25,
	// clipped v stays 1.0 (d = 0.1 inside): 0.25; grad (v-R)/n = -0.25.
	// Sample 1: v 2.5, old 1.0, R 1.2: unclipped 1.69; clipped v = 1.2:
	// 0; max 1.69, grad (2.5-1.2)/2 = 0.65. Loss 0.5 (0.25+1.69)/2 = 0.485.
	g := make([]float32, 2)
	loss := ClippedValueLoss([]float32{1.0, 2.5}, []float32{0.9, 1.0}, []float32{1.5, 1.2}, 0.2, g)
	if !near(float64(loss), 0.485) || !near(float64(g[0]), -0.25) || !near(float64(g[1]), 0.65) {
		t.Errorf("loss %v grad %v, want 0.485 [-0.25 0.65]", loss, g)
	}
}

func TestNormalizeAdvantages(t *testing.T) {
	// [1, 2, 3]: mean 2, unbiased std 1: [-1, 0, 1] (up to the 1e-8).
	a := []float32{1, 2, 3}
	NormalizeAdvantages(a)
	for i, want := range []float64{-1, 0, 1} {
		if !near(float64(a[i]), want) {
			t.Fatalf("got %v, want [-1 0 1]", a)
		}
	}
}

func TestExplainedVariance(t *testing.T) {
	// y = 1,2,3,4 (variance 1.25); y - pred = 0,0,0,1 (mean 0.25,
	// variance (3 x 0.0625 + 0.5625)/4 = 0.1875): 1 - 0.1875/1.25 = 0.85.
	if got := ExplainedVariance([]float32{1, 2, 3, 3}, []float32{1, 2, 3, 4}); math.Abs(got-0.85) > 1e-12 {
		t.Errorf("explained variance %v, want 0.85", got)
	}
	if got := ExplainedVariance([]float32{1, 2}, []float32{3, 3}); !math.IsNaN(got) {
		t.Errorf("constant returns: %v, want NaN", got)
	}
}
