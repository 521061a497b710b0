package train_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/drover-sched/drover/train"
)

// Train DQN on CartPole for a few steps into a run directory and read what
// the checkpoint holds. Set r.Out to os.Stdout to see the report (the
// effective config, the mean return against the 475 target and where the
// files went).
func ExampleRun() {
	dir, err := os.MkdirTemp("", "train-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	r := train.NewRun(train.Config{Env: "cartpole", Algo: "dqn", Steps: 500, Seed: 1})
	r.Dir = filepath.Join(dir, "run")
	res, err := r.Execute()
	if err != nil {
		fmt.Println(err)
		return
	}
	m := res.Meta
	fmt.Printf("%s/%s: networks %v, %d observations, %d actions\n", m.Env, m.Algo, m.Networks, m.ObsDim, m.Actions)
	// Output: cartpole/dqn: networks [q], 4 observations, 2 actions
}

// The gate on three paired episodes where the learned policy is 25%
// better on each: every bootstrap resample's mean gain is 25%, above the
// default 2% margin.
func ExampleGate() {
	learned := []float64{75, 150, 300}
	heuristic := []float64{100, 200, 400}
	fmt.Println(train.Gate(learned, heuristic, train.GateConfig{Seed: 1}))
	// Output: converged: mean gain 25.0%, lower bound 25.0% over 3 paired episodes
}
