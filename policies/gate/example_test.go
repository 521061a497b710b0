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
