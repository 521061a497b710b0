// Package gym is Drover's Go take on the Gymnasium environment API: the
// contract between reinforcement-learning environments (the scheduling
// env, env/cartpole) and the learners in agents/ and train/.
//
// An Env is a seeded, deterministic, single-goroutine state machine:
// Reset(seed) starts an episode, Step(action) returns the observation,
// the reward, and two distinct flags, terminated (a terminal state of
// the MDP: do not bootstrap) and truncated (cut short, e.g. by a time
// limit: bootstrap from the observation). The two stay distinct all the
// way into GAE and TD targets. Observations are float64 vectors in a Box,
// actions are integers of a Discrete space, and an env whose valid
// actions vary implements Masker (true = valid, as in MaskablePPO).
//
// Vector runs n envs in lockstep, optionally on a fixed pool of
// goroutines (the only goroutines in the package; the envs themselves
// have none), and restarts finished episodes in one of Gymnasium's two
// autoreset modes, NextStep (Gymnasium's default) or SameStep. Check tests
// any env against the contract, above all that one seed and one action
// sequence give one trajectory, bit for bit.
//
// # Usage
//
// One env, with the learner's view of the two flags:
//
//	env := cartpole.New()
//	obs, _ := env.Reset(seed)
//	for step := 0; step < total; step++ {
//		a := policy(obs)
//		next, r, terminated, truncated, _ := env.Step(a)
//		// Target: r if terminated, else r + gamma*V(next) (also when truncated).
//		if terminated || truncated {
//			next, _ = env.Reset(seed + uint64(step) + 1)
//		}
//		obs = next
//	}
//
// A vector of envs in NextStep mode, the layout of CleanRL's ppo.py:
//
//	envs, err := gym.NewVector(func(i int) gym.Env { return cartpole.New() }, 8, gym.NextStep, true)
//	if err != nil { ... }
//	defer envs.Close()
//	obs, _ := envs.Reset(seed) // env i is seeded with seed+i
//	for step := 0; step < total; step++ {
//		actions := policy(obs)
//		r := envs.Step(actions)
//		// Row i is a reset step, not a transition, if env i's previous
//		// step ended its episode: its reward is 0 and its action was
//		// ignored, so mask it out of the loss.
//		store(obs, actions, r.Rewards, r.Terminated, r.Truncated)
//		obs = r.Obs
//	}
//
// In SameStep mode every row is a real transition; when env i's episode
// ends, r.Obs[i] already starts the next episode and the value target of
// a truncated episode bootstraps from r.FinalObs[i].
//
// Test a new env with Check, for example in its package's tests:
//
//	if err := gym.Check(func() gym.Env { return New() }, 1, 1000, nil); err != nil {
//		t.Fatal(err)
//	}
package gym
