// Package cartpole is Gymnasium's CartPole-v1, the known-answer test env
// for Drover's learners: a pole hinged on a cart that a policy pushes left
// or right to keep the pole upright, for at most 500 steps.
//
// The dynamics, constants, thresholds, rewards and time limit are
// Gymnasium's (gravity 9.8, cart mass 1.0, pole mass 0.1, half-length
// 0.5, force 10, tau 0.02 s with explicit Euler, termination past
// |x| = 2.4 or |theta| = 12 degrees, truncation at step 500, reward 1 per
// step); see CartPole for how closely the numbers match and for how the
// initial state is drawn. A PPO that solves CartPole-v1 in Gymnasium
// should solve this one with the same hyperparameters.
//
// # Usage
//
//	env := cartpole.New()
//	obs, _ := env.Reset(seed)
//	buf := make([]float64, 4)
//	for {
//		obs, reward, terminated, truncated, _ := env.StepInto(buf, policy(obs))
//		...
//		if terminated || truncated {
//			break
//		}
//	}
//
// Step returns a fresh observation; StepInto reuses the caller's buffer
// and allocates nothing. CartPole implements gym.Env and is usually run
// through gym.Vector.
package cartpole
