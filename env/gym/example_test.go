package gym_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/env/cartpole"
	"github.com/drover-sched/drover/env/gym"
)

// Example runs four CartPoles in NextStep mode with a policy that pushes
// toward the side the pole leans to, and counts finished episodes.
func Example() {
	envs, err := gym.NewVector(func(int) gym.Env { return cartpole.New() }, 4, gym.NextStep, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer envs.Close()
	obs, _ := envs.Reset(1)
	actions := make([]int, envs.NumEnvs())
	var terminated, truncated int
	for range 1200 {
		for i, o := range obs {
			actions[i] = 0
			if o[2]+0.5*o[3] > 0 { // lean plus angular velocity
				actions[i] = 1
			}
		}
		r := envs.Step(actions)
		for i := range r.Obs {
			if r.Terminated[i] {
				terminated++
			}
			if r.Truncated[i] {
				truncated++
			}
		}
		obs = r.Obs
	}
	fmt.Println("terminated:", terminated, "truncated:", truncated)
	// Output: terminated: 0 truncated: 8
}

// ExampleCheck checks CartPole with a random policy.
func ExampleCheck() {
	err := gym.Check(func() gym.Env { return cartpole.New() }, 1, 2000, nil)
	fmt.Println(err)
	// Output: <nil>
}

// TestVectorParallelMatchesSequential runs the same CartPole vector
// sequentially and on the worker pool, in both autoreset modes, and
// requires identical results at every step.
func TestVectorParallelMatchesSequential(t *testing.T) {
	const n, steps = 7, 700
	for _, mode := range []gym.AutoresetMode{gym.NextStep, gym.SameStep} {
		t.Run(mode.String(), func(t *testing.T) {
			var vs [2]*gym.Vector
			for k, parallel := range []bool{false, true} {
				v, err := gym.NewVector(func(int) gym.Env { return cartpole.New() }, n, mode, parallel)
				if err != nil {
					t.Fatal(err)
				}
				defer v.Close()
				vs[k] = v
			}
			o0, _ := vs[0].Reset(99)
			o1, _ := vs[1].Reset(99)
			if !reflect.DeepEqual(o0, o1) {
				t.Fatalf("Reset: sequential %v, parallel %v", o0, o1)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			actions := make([]int, n)
			ends := 0
			for step := range steps {
				for i := range actions {
					actions[i] = rng.IntN(2)
				}
				r0, r1 := vs[0].Step(actions), vs[1].Step(actions)
				if !reflect.DeepEqual(r0, r1) {
					t.Fatalf("step %d: sequential %+v, parallel %+v", step, r0, r1)
				}
				for i := range n {
					if r0.Terminated[i] || r0.Truncated[i] {
						ends++
					}
				}
			}
			if ends < n*steps/50 { // random episodes last about 20 steps
				t.Errorf("only %d episode ends in %d steps of %d envs", ends, steps, n)
			}
		})
	}
}
