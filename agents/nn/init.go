package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Orthogonal fills p with a (semi-)orthogonal matrix scaled by gain, as
// torch.nn.init.orthogonal_: p is viewed as rows = Shape[0] by cols = the
// product of the other dimensions; a rows x cols matrix of standard normal
// draws from src (transposed first when rows < cols) is factored A = QR, Q's
// columns are multiplied by sign(diag(R)) so the factorisation is unique, and
// gain·Q (transposed back) is stored. With gain 1 the result satisfies
// W Wᵀ = I when rows <= cols and Wᵀ W = I otherwise. The draws are made in
// row-major order of the rows x cols matrix, so the same source state gives
// the same weights bit for bit.
func Orthogonal(p *Param, gain float64, src rand.Source) {
	if len(p.Shape) < 2 {
		panic(fmt.Sprintf("nn: Orthogonal needs a parameter with at least 2 dimensions, %q has %d", p.Name, len(p.Shape)))
	}
	rows := p.Shape[0]
	if rows == 0 || len(p.Value) == 0 {
		return
	}
	cols := len(p.Value) / rows
	rng := rand.New(src)
	g := make([]float64, rows*cols)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	// a is tall (m >= n): the Gaussian matrix, or its transpose.
	m, n := rows, cols
	var a *mat.Dense
	if rows < cols {
		m, n = cols, rows
		a = mat.NewDense(m, n, nil)
		a.CloneFrom(mat.NewDense(rows, cols, g).T())
	} else {
		a = mat.NewDense(m, n, g)
	}
	var qr mat.QR
	qr.Factorize(a)
	var q, r mat.Dense
	qr.QTo(&q) // m x m; the first n columns are the thin Q
	qr.RTo(&r)
	for j := 0; j < n; j++ {
		s := 1.0
		if r.At(j, j) < 0 {
			s = -1
		}
		for i := 0; i < m; i++ {
			v := gain * s * q.At(i, j)
			if rows < cols {
				p.Value[j*cols+i] = float32(v) // transpose back
			} else {
				p.Value[i*cols+j] = float32(v)
			}
		}
	}
}

// Constant sets every value of p to v, as torch.nn.init.constant_.
func Constant(p *Param, v float32) {
	for i := range p.Value {
		p.Value[i] = v
	}
}

// Uniform fills p with independent draws from U(lo, hi) taken from src.
func Uniform(p *Param, lo, hi float64, src rand.Source) {
	rng := rand.New(src)
	for i := range p.Value {
		p.Value[i] = float32(lo + (hi-lo)*rng.Float64())
	}
}

// TorchDefaultInit initialises l the way torch.nn.Linear's constructor does
// (kaiming_uniform_ with a = √5 for the weight, which is U(-1/√in, 1/√in),
// and the same bound for the bias), which is what CleanRL's DQN QNetwork uses.
// The draws come from src: weight first, then bias.
func TorchDefaultInit(l *Linear, src rand.Source) {
	bound := 1 / math.Sqrt(float64(l.In))
	Uniform(l.W, -bound, bound, src)
	Uniform(l.B, -bound, bound, src)
}
