package ppo

// GAE computes generalized advantage estimates (Schulman et al., 2016) and
// the value targets (returns) of one environment's rollout of T steps, in
// place into adv and ret, keeping termination and truncation distinct:
//
//	delta_t = r_t + gamma * V(s'_t) * (1 - terminated_t) - V(s_t)
//	A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1},  done = terminated or truncated
//	ret_t   = A_t + V(s_t)
//
// values[t] is V(s_t); nextValues[t] is V(s'_t), the value of the state
// step t led to: values[t+1] inside an episode, the value of the final
// observation when step t was truncated (a time limit is not a terminal
// state, so the tail is bootstrapped), and the value of the state after the
// rollout for t = T-1. CleanRL's ppo.py folds truncation into done and so
// does not bootstrap a truncated episode's tail; with no truncations the two
// agree. It panics if the slices' lengths differ.
func GAE(rewards, values, nextValues []float32, terminated, truncated []bool, gamma, lambda float32, adv, ret []float32) {
	T := len(rewards)
	if len(values) != T || len(nextValues) != T || len(terminated) != T || len(truncated) != T || len(adv) != T || len(ret) != T {
		panic("ppo: GAE length mismatch")
	}
	var last float32
	for t := T - 1; t >= 0; t-- {
		next := nextValues[t]
		if terminated[t] {
			next = 0
		}
		delta := rewards[t] + gamma*next - values[t]
		if terminated[t] || truncated[t] {
			last = 0
		}
		last = delta + gamma*lambda*last
		adv[t] = last
		ret[t] = last + values[t]
	}
}
