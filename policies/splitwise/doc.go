// Package splitwise implements the request routers of SplitwiseSim
// (github Mutinifni/splitwise-sim, scheduler.py), the simulator of
// Splitwise (Patel et al., ISCA 2024), for Drover's inference simulator
// (env/infer):
//
//   - token_jsq (TokenJSQ, TokenJSQScheduler): both phases of a request
//     on the instance with the fewest pending tokens: the colocated
//     baseline.
//   - mixed_pool (MixedPool, MixedPoolScheduler): prompts on the prompt
//     pool's instance with the fewest pending tokens unless its queue is
//     long, decodes on the token pool's instance with the least reserved
//     memory unless it is full; an overloaded pool borrows an instance of
//     the other, which returns when it falls idle; the KV cache crosses
//     the link between them.
//
// Both are faithful to SplitwiseSim's rules, tie-breaks included (the
// first instance of least load wins, as Python's min does), so that
// infer's SplitwiseSim-faithful presets reproduce its runs.
//
// # Usage
//
//	s, _ := infer.New(infer.SplitwiseHA(perf, 1, 1), reqs)
//	sum, err := s.Run(splitwise.NewMixedPool(splitwise.MixedPoolConfig{}))
//	fmt.Println(sum.TTFT.Mean, sum.E2E.P99)
package splitwise
