package background_test

import (
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/background"
)

// The simulator asks for every node's load at each step boundary and keeps
// it until the next one.
func Example() {
	const nodes = 3
	src, err := background.NewStochastic(background.Default(), nodes, 1)
	if err != nil {
		panic(err)
	}
	for t := 0.0; t < 3*src.Step(); t += src.Step() {
		fmt.Printf("t=%4.0fs", t)
		for n := range nodes {
			u := src.At(n, t)
			fmt.Printf("  node %d cpu %.2f", n, u.CPU)
		}
		fmt.Println()
	}
	// Output:
	// t=   0s  node 0 cpu 0.14  node 1 cpu 0.17  node 2 cpu 0.34
	// t= 300s  node 0 cpu 0.19  node 1 cpu 0.15  node 2 cpu 0.32
	// t= 600s  node 0 cpu 0.15  node 1 cpu 0.16  node 2 cpu 0.40
}

// A Replay of one tiny measured series on two nodes; the second node
// replays the same machine three steps further on.
func ExampleNewReplay() {
	nan := math.NaN()
	s := background.Series{
		Time:  []float64{0, 50, 120, 410},
		CPU:   []float64{0.2, 0.4, 0.6, 0.8},
		MemBW: []float64{0.1, nan, 0.5, 0.7}, // nan is filled from CPU
		Net:   []float64{0, 1, 0.5, 0.25},
	}
	r, err := background.NewReplay([]background.Series{s}, 2, 100)
	if err != nil {
		panic(err)
	}
	for t := 0.0; t < 500; t += r.Step() {
		fmt.Printf("t=%3.0f node 0 cpu %.2f | node 1 cpu %.2f\n", t, r.At(0, t).CPU, r.At(1, t).CPU)
	}
	// Output:
	// t=  0 node 0 cpu 0.30 | node 1 cpu 0.60
	// t=100 node 0 cpu 0.60 | node 1 cpu 0.80
	// t=200 node 0 cpu 0.60 | node 1 cpu 0.30
	// t=300 node 0 cpu 0.60 | node 1 cpu 0.60
	// t=400 node 0 cpu 0.80 | node 1 cpu 0.60
}

// Scaled doubles the background load for an experiment under load.
func ExampleScaled() {
	base := background.Constant{Usage: background.Usage{CPU: 0.3, MemBW: 0.05, Net: 0.6}}
	heavy := background.Scaled(base, 2)
	fmt.Printf("%+v\n", heavy.At(0, 0))
	// Output:
	// {CPU:0.6 MemBW:0.1 Net:1}
}
