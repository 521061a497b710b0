package jitter_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/drover-sched/drover/env/jitter"
)

// Draw the slowdowns of a 4-worker job for a few iterations and count the
// iterations with a straggler.
func Example() {
	q, err := jitter.New(jitter.Default(), 4, rand.NewPCG(1, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	s := make([]float64, 4)
	strag := 0
	for range 1000 {
		q.Next(s)
		if jitter.HasStraggler(s, jitter.DefaultThreshold) {
			strag++
		}
	}
	fmt.Println(strag <= 1000, s[0] > 0)
	fmt.Printf("CoV of [1 1 1 3]: %.4f\n", jitter.CoV([]float64{1, 1, 1, 3}))
	// Output:
	// true true
	// CoV of [1 1 1 3]: 0.5774
}
