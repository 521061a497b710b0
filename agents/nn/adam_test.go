package nn

import (
	"fmt"
	"math"
	"testing"
)

// TestAdamHandWorked follows torch.optim.Adam (lr 0.1, betas 0.9/0.999,
// eps 1e-8) on one parameter p0 = 1 by hand:
//
//	step 1, g = 0.5:  m = 0.1·0.5 = 0.05, v = 0.001·0.25 = 0.00025,
//	  bias corrections 1-0.9 = 0.1 and 1-0.999 = 0.001, so m̂ = 0.5, √v̂ = 0.5,
//	  p1 = 1 - 0.1·0.5/(0.5+1e-8) = 0.900000002 (a step of exactly lr up to eps).
//	step 2, g = -1:   m = 0.9·0.05 - 0.1 = -0.055, v = 0.999·0.00025 + 0.001 = 0.00124975,
//	  corrections 1-0.81 = 0.19 and 1-0.998001 = 0.001999,
//	  p2 = p1 - (0.1/0.19)·(-0.055)/(√0.00124975/√0.001999 + 1e-8) = 0.93661035.
func TestAdamHandWorked(t *testing.T) {
	p := NewParam("p", 1)
	p.Value[0] = 1
	opt := NewAdam([]*Param{p}, 0.1, 1e-8)
	steps := []struct {
		grad float32
		want float64
	}{
		{0.5, 1 - 0.1*0.5/(0.5+1e-8)},
		{-1, 1 - 0.1*0.5/(0.5+1e-8) - (0.1/0.19)*(-0.055)/(math.Sqrt(0.00124975)/math.Sqrt(0.001999)+1e-8)},
	}
	for i, s := range steps {
		p.Grad[0] = s.grad
		opt.Step()
		if math.Abs(float64(p.Value[0])-s.want) > 1e-6 {
			t.Errorf("step %d: p = %.9f, want %.9f", i+1, p.Value[0], s.want)
		}
	}
	if math.Abs(steps[1].want-0.93661035) > 1e-8 {
		t.Errorf("hand-worked p2 = %.9f", steps[1].want)
	}
	// SetLR takes effect on the next step: with lr 0 nothing moves.
	opt.SetLR(0)
	before := p.Value[0]
	opt.Step()
	if p.Value[0] != before || opt.Steps() != 3 {
		t.Errorf("after SetLR(0): p %v -> %v, steps %d", before, p.Value[0], opt.Steps())
	}
}

// TestAdamNaive compares a few steps on a vector with a float64 transcription
// of torch's update rule.
func TestAdamNaive(t *testing.T) {
	rng := newRNG(11)
	p := NewParam("p", 6)
	ref := make([]float64, 6)
	for i := range p.Value {
		p.Value[i] = float32(rng.NormFloat64())
		ref[i] = float64(p.Value[i])
	}
	const lr, eps, b1, b2 = 2.5e-4, 1e-5, 0.9, 0.999
	m, v := make([]float64, 6), make([]float64, 6)
	opt := NewAdam([]*Param{p}, lr, eps)
	for step := 1; step <= 5; step++ {
		for i := range p.Grad {
			p.Grad[i] = float32(rng.NormFloat64())
			g := float64(p.Grad[i])
			m[i] = b1*m[i] + (1-b1)*g
			v[i] = b2*v[i] + (1-b2)*g*g
			mh := m[i] / (1 - math.Pow(b1, float64(step)))
			vh := v[i] / (1 - math.Pow(b2, float64(step)))
			ref[i] -= lr * mh / (math.Sqrt(vh) + eps)
		}
		opt.Step()
	}
	for i := range ref {
		if math.Abs(float64(p.Value[i])-ref[i]) > 1e-6 {
			t.Errorf("p[%d] = %v, reference %v", i, p.Value[i], ref[i])
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	tests := []struct {
		name      string
		grads     [][]float32
		maxNorm   float64
		wantTotal float64
		want      [][]float32
	}{
		// ‖(3, 4)‖ = 5 > 1: scale by 1/(5+1e-6).
		{"clip", [][]float32{{3}, {4}}, 1, 5, [][]float32{{3 / (5 + 1e-6)}, {4 / (5 + 1e-6)}}},
		{"no clip", [][]float32{{3}, {4}}, 10, 5, [][]float32{{3}, {4}}},
		// ‖(1, 2, 2)‖ = 3, max 0.5.
		{"one param", [][]float32{{1, 2, 2}}, 0.5, 3, [][]float32{{0.5 / (3 + 1e-6), 1 / (3 + 1e-6), 1 / (3 + 1e-6)}}},
		{"zero", [][]float32{{0, 0}}, 0.5, 0, [][]float32{{0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps []*Param
			for _, g := range tt.grads {
				ps = append(ps, &Param{Value: make([]float32, len(g)), Grad: append([]float32(nil), g...)})
			}
			if total := ClipGradNorm(ps, tt.maxNorm); math.Abs(float64(total)-tt.wantTotal) > 1e-6 {
				t.Errorf("total = %v, want %v", total, tt.wantTotal)
			}
			for i, p := range ps {
				for j, g := range p.Grad {
					if math.Abs(float64(g-tt.want[i][j])) > 1e-7 {
						t.Errorf("grad[%d][%d] = %.9f, want %.9f", i, j, g, tt.want[i][j])
					}
				}
			}
		})
	}
}

// TestAdamStepExact checks Adam.Step (the vector kernel where there is
// one) against its loop written out in float32, bit for bit, over several
// steps on parameters whose lengths leave a scalar tail, with gradients
// that include zeros, huge and tiny values.
func TestAdamStepExact(t *testing.T) {
	r := newRNG(41)
	sizes := []int{1, 7, 8, 9, 31, 64, 77}
	var ps, ref []*Param
	for i, n := range sizes {
		p, q := NewParam(fmt.Sprint("p", i), n), NewParam(fmt.Sprint("p", i), n)
		for j := range n {
			p.Value[j] = float32(r.NormFloat64())
		}
		copy(q.Value, p.Value)
		ps, ref = append(ps, p), append(ref, q)
	}
	opt := NewAdam(ps, 3e-4, 1e-5)
	m, v := make([][]float32, len(ref)), make([][]float32, len(ref))
	for i, q := range ref {
		m[i], v[i] = make([]float32, len(q.Value)), make([]float32, len(q.Value))
	}
	for step := 1; step <= 5; step++ {
		for i, p := range ps {
			for j := range p.Grad {
				g := []float32{float32(r.NormFloat64()), 0, 1e30, 1e-30, float32(r.NormFloat64() * 1e-3)}[(i+j+step)%5]
				p.Grad[j], ref[i].Grad[j] = g, g
			}
		}
		opt.Step()
		// The reference: Adam.Step's loop in float32.
		bc1 := 1 - math.Pow(opt.Beta1, float64(step))
		bc2 := 1 - math.Pow(opt.Beta2, float64(step))
		stepSize, bc2Sqrt := float32(opt.LR/bc1), float32(math.Sqrt(bc2))
		b1, b2, eps := float32(opt.Beta1), float32(opt.Beta2), float32(opt.Eps)
		for i, q := range ref {
			for j, g := range q.Grad {
				mi := b1*m[i][j] + (1-b1)*g
				vi := b2*v[i][j] + (1-b2)*g*g
				m[i][j], v[i][j] = mi, vi
				denom := float32(math.Sqrt(float64(vi)))/bc2Sqrt + eps
				q.Value[j] -= stepSize * mi / denom
			}
		}
		for i, p := range ps {
			for j := range p.Value {
				if math.Float32bits(p.Value[j]) != math.Float32bits(ref[i].Value[j]) {
					t.Fatalf("step %d, param %d[%d]: %v, reference %v", step, i, j, p.Value[j], ref[i].Value[j])
				}
			}
		}
	}
}
