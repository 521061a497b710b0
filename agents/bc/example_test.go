package bc_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/bc"
	"github.com/drover-sched/drover/agents/nn"
)

// ExampleClone clones a teacher that always takes the valid action with
// the largest score in the observation.
func ExampleClone() {
	rng := rand.New(rand.NewPCG(1, 1))
	var samples []bc.Sample
	for range 2000 {
		s := bc.Sample{Obs: []float64{rng.Float64(), rng.Float64(), rng.Float64()}, Mask: []bool{true, true, rng.IntN(2) == 0}}
		for a, ok := range s.Mask {
			if ok && s.Obs[a] > s.Obs[s.Action] {
				s.Action = a
			}
		}
		samples = append(samples, s)
	}
	actor := nn.NewOrthogonalMLP([]int{3, 32, 3}, nn.NewTanh, math.Sqrt2, 0.01, rng)
	greedy := func(net *nn.MLP) bc.Actor {
		f, _ := nn.NewInfer(net)
		return func(obs []float64, mask []bool) int { return nn.MaskedArgmax(f.Forward(obs), mask) }
	}
	agree := bc.Clone(actor, samples, bc.Config{Epochs: 30, Batch: 64, LR: 3e-3}, rng, greedy)
	fmt.Println("agreement above 95%:", agree > 0.95)
	// Output: agreement above 95%: true
}
