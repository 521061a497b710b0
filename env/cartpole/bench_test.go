package cartpole

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkStep measures one CartPole step under a random policy,
// resetting at each episode end (reset's observation is amortized over
// the episode). StepInto writes into a reused buffer and does not
// allocate; Step allocates its observation.
//
//	go test ./env/cartpole -run '^$' -bench Step -count 10 > new.txt && benchstat old.txt new.txt
func BenchmarkStep(b *testing.B) {
	actions := make([]int, 4096) // pre-generated from a fixed seed
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range actions {
		actions[i] = rng.IntN(2)
	}
	bench := func(b *testing.B, step func(c *CartPole, buf []float64, a int) bool) {
		c := New()
		c.Reset(0)
		buf := make([]float64, 4)
		b.ReportAllocs()
		i, episodes := 0, uint64(0)
		for b.Loop() {
			if step(c, buf, actions[i%len(actions)]) {
				episodes++
				c.Reset(episodes)
			}
			i++
		}
		b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "steps/s")
	}
	b.Run("StepInto", func(b *testing.B) {
		bench(b, func(c *CartPole, buf []float64, a int) bool {
			_, _, term, trunc, _ := c.StepInto(buf, a)
			return term || trunc
		})
	})
	b.Run("Step", func(b *testing.B) {
		bench(b, func(c *CartPole, _ []float64, a int) bool {
			_, _, term, trunc, _ := c.Step(a)
			return term || trunc
		})
	})
}
