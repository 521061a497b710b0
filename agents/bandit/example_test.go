package bandit_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/drover-sched/drover/agents/bandit"
)

// Two actions; action 1 pays more when the context's value is high.
func Example() {
	rng := rand.New(rand.NewPCG(1, 1))
	l := bandit.New(bandit.DefaultConfig(), 1, 2)
	for range 10 {
		var s []bandit.Sample
		for range 1000 {
			x := rng.Float64()
			a := rng.IntN(2)
			r := 0.5 // action 0 pays 0.5; action 1 pays x
			if a == 1 {
				r = x
			}
			s = append(s, bandit.Sample{Obs: []float32{float32(x)}, Action: a, Reward: float32(r)})
		}
		l.Add(s...)
		l.Fit()
	}
	fmt.Println(l.Act([]float64{0.1}, nil), l.Act([]float64{0.9}, nil))
	// Output: 0 1
}
