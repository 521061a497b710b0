// Package infergym is the gym environment of learned LLM request routing
// (issue 34's pd-rl): every request arriving at a simulated disaggregated
// deployment (package infer) is one decision, whose action picks the
// prefill instance, the KV cache's format (package kv) and the decode
// instance.
//
// The Encoder keeps the observation independent of the cluster's size: it
// shows a fixed number of candidate slots per pool (Config.Slots: the
// instances of the pool with the fewest pending tokens, fewest first),
// each with its load, memory and GPU speed, plus the request's prompt and
// output tokens and, per format, its transfer time on the link and its
// size. The joint action is prefill slot x format x decode slot, masked by
// memory admission (the prompt's cache must fit what the prefill
// instance's routed requests leave, the whole cache the decode
// instance's). A State is all a decision reads, so the same decision can
// be made in the simulator (StateOf a View) or in the policy server (from
// a client's report of its instances).
//
// The reward is minus the requests' JCT, spread over the steps exactly:
// a step is charged the time every request in the system spends there
// until the next arrival, so an episode's return is minus the sum of its
// requests' JCTs (plus EnvConfig.SLOPenalty for each request missing the
// deployment's TTFT or TPOT objective), divided by RewardScale.
// Deployment is pd-rl's default setting.
//
// # Usage
//
//	e, err := infergym.NewEnv(infergym.EnvConfig{Deploy: infergym.Deployment(perf),
//		Requests: func(seed uint64) []infer.Request { return window(seed) }, SLOPenalty: 5})
//	obs, _ := e.Reset(seed)
//	mask := e.ActionMask(nil)
//	for {
//		obs, r, terminated, _, info := e.Step(policy(obs, mask))
//		if terminated {
//			fmt.Println(info["mean_jct"])
//			if err := e.Err(); err != nil { // infer.ErrRejected, infer.ErrStalled
//				fmt.Println(info["rejected"], info["unfinished"], err)
//			}
//			break
//		}
//		mask = e.ActionMask(mask)
//	}
package infergym
