package nn

import (
	"fmt"
	"math"
)

func checkSameShape(what string, a, b Mat) {
	if a.Rows != b.Rows || a.Cols != b.Cols || len(a.Data) != len(b.Data) {
		panic(fmt.Sprintf("nn: %s: shapes %dx%d and %dx%d differ", what, a.Rows, a.Cols, b.Rows, b.Cols))
	}
}

// MSE returns the mean squared error mean((pred - target)²) over all
// elements, as torch.nn.functional.mse_loss with reduction "mean", and its
// gradient with respect to pred, 2(pred - target)/N. The sum is accumulated
// in float64.
func MSE(pred, target Mat) (float32, Mat) {
	checkSameShape("MSE", pred, target)
	grad := NewMat(pred.Rows, pred.Cols)
	n := len(pred.Data)
	if n == 0 {
		return 0, grad
	}
	var s float64
	for i, p := range pred.Data {
		d := float64(p) - float64(target.Data[i])
		s += d * d
		grad.Data[i] = float32(2 * d / float64(n))
	}
	return float32(s / float64(n)), grad
}

// Huber returns the mean Huber loss over all elements, as
// torch.nn.functional.huber_loss with reduction "mean": for d = pred - target,
// 0.5d² if |d| < delta and delta(|d| - 0.5delta) otherwise. With delta 1 this
// is also torch's smooth_l1_loss (beta 1). The gradient with respect to pred
// is d/N inside the band and delta·sign(d)/N outside. delta must be positive.
func Huber(pred, target Mat, delta float32) (float32, Mat) {
	checkSameShape("Huber", pred, target)
	if !(delta > 0) {
		panic("nn: Huber delta must be positive")
	}
	grad := NewMat(pred.Rows, pred.Cols)
	n := len(pred.Data)
	if n == 0 {
		return 0, grad
	}
	dl := float64(delta)
	var s float64
	for i, p := range pred.Data {
		d := float64(p) - float64(target.Data[i])
		var g float64
		if math.Abs(d) < dl {
			s += 0.5 * d * d
			g = d
		} else {
			s += dl * (math.Abs(d) - 0.5*dl)
			g = math.Copysign(dl, d)
		}
		grad.Data[i] = float32(g / float64(n))
	}
	return float32(s / float64(n)), grad
}

// Gather returns column idx[i] of each row i of m as an n x 1 matrix, like
// torch.gather(m, 1, idx) (DQN's Q(s, a) for the taken actions).
func Gather(m Mat, idx []int) Mat {
	if len(idx) != m.Rows {
		panic(fmt.Sprintf("nn: Gather: %d indices for %d rows", len(idx), m.Rows))
	}
	out := NewMat(m.Rows, 1)
	for i, j := range idx {
		out.Data[i] = m.At(i, j)
	}
	return out
}

// GatherGrad is the backward of Gather: it returns an n x cols matrix that is
// zero except dOut[i] at (i, idx[i]).
func GatherGrad(dOut Mat, idx []int, cols int) Mat {
	if len(idx) != dOut.Rows || dOut.Cols != 1 {
		panic("nn: GatherGrad shape mismatch")
	}
	g := NewMat(dOut.Rows, cols)
	for i, j := range idx {
		g.Set(i, j, dOut.Data[i])
	}
	return g
}

// RowMax returns the maximum of each row of m (DQN's max_a Q(s', a)).
func RowMax(m Mat) []float32 {
	out := make([]float32, m.Rows)
	for i := range out {
		r := m.Row(i)
		mx := float32(math.Inf(-1))
		for _, v := range r {
			mx = max(mx, v)
		}
		out[i] = mx
	}
	return out
}
