package background

import (
	"math"
	"testing"
)

func TestCoarsened(t *testing.T) {
	p := Default()
	c, err := p.Coarsened(6 * p.Step)
	if err != nil {
		t.Fatal(err)
	}
	// Hand-worked: the AR(1) coefficient over 6 steps is Phi^6; spreads
	// stay; an innovation correlation with equal coefficients phi stays
	// as it is (S_ab = S_aa = S_bb).
	if got, want := c.CPU.Phi, math.Pow(p.CPU.Phi, 6); math.Abs(got-want) > 1e-15 {
		t.Errorf("CPU phi %v, want %v", got, want)
	}
	if c.CPU.Std != p.CPU.Std || c.Step != 6*p.Step {
		t.Errorf("std %v step %v", c.CPU.Std, c.Step)
	}
	q := p
	q.MemBW.Phi = q.CPU.Phi
	qc, _ := q.Coarsened(3 * q.Step)
	if math.Abs(qc.CorrCPUMemBW-q.CorrCPUMemBW) > 1e-12 {
		t.Errorf("equal-phi correlation changed: %v -> %v", q.CorrCPUMemBW, qc.CorrCPUMemBW)
	}
	// The coarse process's lag-1 autocorrelation matches the fine one's
	// lag-6, measured on samples.
	s, _ := NewStochastic(c, 200, 3)
	var xs, ys []float64
	for n := range 200 {
		for i := 0; i < 300; i++ {
			xs = append(xs, logit(s.At(n, float64(i)*c.Step).CPU))
			ys = append(ys, logit(s.At(n, float64(i+1)*c.Step).CPU))
		}
	}
	// Within-node correlation, pooled: subtract each node's level via the
	// sample covariance of consecutive values around the pooled mean is
	// biased by level spread, so compare differences instead: for AR(1),
	// var(x_{t+1}-x_t) = 2 std^2 (1-phi).
	d := 0.0
	for i := range xs {
		d += (ys[i] - xs[i]) * (ys[i] - xs[i])
	}
	d /= float64(len(xs))
	want := 2 * c.CPU.Std * c.CPU.Std * (1 - c.CPU.Phi)
	if math.Abs(d-want)/want > 0.05 {
		t.Errorf("var of one-step change %v, want %v (2 std^2 (1-phi))", d, want)
	}
	if _, err := p.Coarsened(p.Step * 1.5); err == nil {
		t.Error("a step of 1.5 x the fitted step was accepted")
	}
}
