package gate_test

import (
	"fmt"

	"github.com/drover-sched/drover/policies/gate"
)

// The gate on three paired episodes where the learned policy is 25%
// better on each: every bootstrap resample's mean gain is 25%, above the
// default 2% margin.
func ExampleJudge() {
	learned := []float64{75, 150, 300}
	heuristic := []float64{100, 200, 400}
	fmt.Println(gate.Judge(learned, heuristic, gate.Config{Seed: 1}))
	// Output: converged: mean gain 25.0%, lower bound 25.0% over 3 paired episodes
}

// A learned policy 40% better than the heuristic on each of three paired
// episodes, and 5% worse than its teacher: the gate opens (on the
// heuristic's comparison alone), and the report says whose gain it is.
func ExampleEvaluate() {
	learned := []float64{105, 210, 105}
	heuristic := []float64{175, 350, 175}
	teacher := []float64{100, 200, 100}
	fmt.Println(gate.Evaluate(learned, heuristic, "sas", teacher, "sas+strn-sync", gate.Config{Seed: 1}))
	// Output: vs sas: converged: mean gain 40.0%, lower bound 40.0% over 3 paired episodes; vs its teacher sas+strn-sync: mean gain -5.0%, lower bound -5.0% (its gain over sas is its teacher's)
}
