package cartpole_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/cartpole"
)

// Example plays one episode of CartPole-v1 pushing toward the side the
// pole falls to, until the time limit truncates it.
func Example() {
	env := cartpole.New()
	obs, _ := env.Reset(1)
	buf := make([]float64, 4)
	ret := 0.0
	for {
		action := 0
		if obs[2]+0.5*obs[3] > 0 { // angle plus half the angular velocity
			action = 1
		}
		var reward float64
		var terminated, truncated bool
		obs, reward, terminated, truncated, _ = env.StepInto(buf, action)
		ret += reward
		if terminated || truncated {
			fmt.Println("return:", ret, "terminated:", terminated, "truncated:", truncated)
			return
		}
	}
	// Output: return: 500 terminated: false truncated: true
}
