package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/nn"
)

// Example fits y = x₀ - 2x₁ with a small tanh MLP, Adam and gradient clipping.
func Example() {
	src := rand.NewPCG(1, 2)
	net := nn.NewOrthogonalMLP([]int{2, 16, 1}, nn.NewTanh, math.Sqrt2, 1, src)
	opt := nn.NewAdam(net.Params(), 0.01, 1e-8)

	rng := rand.New(src)
	x, y := nn.NewMat(64, 2), nn.NewMat(64, 1)
	for i := 0; i < 64; i++ {
		a, b := rng.Float32()-0.5, rng.Float32()-0.5
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y.Set(i, 0, a-2*b)
	}

	var first, last float32
	for step := 0; step < 300; step++ {
		net.ZeroGrad()
		loss, grad := nn.MSE(net.Forward(x), y)
		net.Accumulate(grad)
		nn.ClipGradNorm(net.Params(), 0.5)
		opt.Step()
		if step == 0 {
			first = loss
		}
		last = loss
	}
	fmt.Println("loss fell at least 10x:", last < first/10)
	// Output: loss fell at least 10x: true
}
