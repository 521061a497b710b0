// Package pdrl holds the routers of disaggregated LLM inference that
// issue 34's learned router is built around: HACK's router (arXiv
// 2502.03589: prefill and decode instance with the fewest queued tokens,
// the KV cache in HACK's 2-bit format) and pd-rl, the learned router,
// whose action is prefill slot x KV format x decode slot over
// env/infergym's encoding (candidate slots per pool, so a checkpoint runs
// on any cluster size), masked by memory admission.
//
// Both are Deciders: they decide on an infergym.State, the instances as
// the simulator's View shows them or as a client reports them to the
// policy server's Route call, so a decision made remotely on the same
// state is the same decision. Router adapts a Decider to infer.Router.
// Speed, a speed-aware variant of HACK's rule (queued tokens over each
// instance's FP16 throughput for prefill, over its memory bandwidth for
// decode), is pd-rl's default teacher. Teacher records a Decider's
// decisions as behaviour-cloning samples (train/pdrl clones them, then
// runs PPO); Load reads a pd-rl checkpoint for serve and eval.
//
// HACK's router is written here because no package of HACK's heuristics
// existed when pd-rl was built; it reads only the queued tokens, as the
// HKVQ artifact's proxy does.
//
// # Usage
//
//	s, _ := infer.New(infergym.Deployment(perf), reqs)
//	sum, err := s.Run(pdrl.Router(pdrl.NewHACK(kv.Llama2_70B)))
//
//	_, newPolicy, err := pdrl.Load("checkpoints/pd-rl", infergym.Config{Arch: kv.Llama2_70B, LinkBytesPerSec: bw})
//	sum, err = s2.Run(pdrl.Router(newPolicy()))
package pdrl
