package nn

import (
	"fmt"
	"math"
)

// Adam is the Adam optimiser exactly as torch.optim.Adam with its defaults
// (no weight decay, no AMSGrad): for each parameter, at step t,
//
//	m = β1·m + (1-β1)·g
//	v = β2·v + (1-β2)·g²
//	p = p - (lr / (1-β1ᵗ)) · m / (√v / √(1-β2ᵗ) + eps)
//
// so eps is added outside the square root, after bias correction. The bias
// corrections are computed in float64, the element updates in float32.
type Adam struct {
	// LR is the learning rate; change it with SetLR (e.g. for annealing).
	LR float64
	// Beta1 and Beta2 are the moment decay rates (torch: 0.9, 0.999).
	Beta1, Beta2 float64
	// Eps is added to the denominator (torch default 1e-8; CleanRL PPO 1e-5).
	Eps float64

	params []*Param
	m, v   [][]float32
	t      int
}

// NewAdam returns an Adam optimiser over params with learning rate lr,
// betas 0.9 and 0.999 and the given eps.
func NewAdam(params []*Param, lr, eps float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: eps, params: params}
	for _, p := range params {
		if len(p.Grad) != len(p.Value) {
			panic(fmt.Sprintf("nn: parameter %q has %d values and %d gradients", p.Name, len(p.Value), len(p.Grad)))
		}
		a.m = append(a.m, make([]float32, len(p.Value)))
		a.v = append(a.v, make([]float32, len(p.Value)))
	}
	return a
}

// SetLR sets the learning rate used by later steps.
func (a *Adam) SetLR(lr float64) { a.LR = lr }

// Steps returns how many steps have been taken.
func (a *Adam) Steps() int { return a.t }

// Step updates every parameter from its accumulated gradient. It does not
// zero the gradients.
func (a *Adam) Step() {
	a.t++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.t))
	stepSize := float32(a.LR / bc1)
	bc2Sqrt := float32(math.Sqrt(bc2))
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	eps := float32(a.Eps)
	kc := [8]float32{b1, 1 - b1, b2, 1 - b2, bc2Sqrt, eps, stepSize}
	for k, p := range a.params {
		m, v := a.m[k], a.v[k]
		val := p.Value
		n := 0
		if haveKernels && len(p.Grad) >= 8 {
			n = len(p.Grad) &^ 7
			adamKernel(&val[0], &p.Grad[0], &m[0], &v[0], n, &kc)
		}
		for i := n; i < len(p.Grad); i++ {
			g := p.Grad[i]
			mi := b1*m[i] + (1-b1)*g
			vi := b2*v[i] + (1-b2)*g*g
			m[i], v[i] = mi, vi
			denom := float32(math.Sqrt(float64(vi)))/bc2Sqrt + eps
			val[i] -= stepSize * mi / denom
		}
	}
}

// ClipGradNorm rescales the gradients of params in place so that their
// global 2-norm is at most maxNorm, as torch.nn.utils.clip_grad_norm_: with
// total = ‖(all gradients)‖₂, every gradient is multiplied by
// maxNorm/(total+1e-6) when that factor is below 1. It returns total (the
// norm before clipping), accumulated in float64.
func ClipGradNorm(params []*Param, maxNorm float64) float32 {
	var s float64
	for _, p := range params {
		for _, g := range p.Grad {
			s += float64(g) * float64(g)
		}
	}
	total := math.Sqrt(s)
	coef := maxNorm / (total + 1e-6)
	if coef < 1 {
		c := float32(coef)
		for _, p := range params {
			for i := range p.Grad {
				p.Grad[i] *= c
			}
		}
	}
	return float32(total)
}
