// Package modserve is ModServe's static routing and scheduling (SoCC'25,
// arXiv 2502.00937, sections 4.2-4.3) for Drover's multimodal serving
// simulator (env/infer/mm), with the rungs of the paper's ablation ladder
// (section 5.2, Fig. 14): Monolith (vLLM, least-loaded, FCFS), Decoup
// (image and text pools, FCFS, request-level least-loaded routing), Sched
// (+ SLO-aware scheduling: earliest deadline first, a deadline scaled
// from the request's isolated TTFT, so short requests go first) and
// ModServe (+ modality-aware routing: each image to the image instance
// with the fewest pending image tokens, the text to the text instance
// with the fewest pending prefill tokens). Autoscaling is policies/mmscale's.
//
// ModServe picks a request's text instance once its images are encoded;
// Name picks it at arrival, counting the pending tokens of requests still
// encoding, and Late as the paper does (mm.Deferred, then RouteText).
//
// The routers scan the view's live instances (mm.View.Live), ties to the
// lowest index. Decoup's and Sched's round robin over image instances
// counts instances by number, gone ones too (mm.View.Number, Deployed):
// on a view of only the live instances, numbered (a policy server's), it
// picks what it picks on the simulation's view of every instance.
//
// # Usage
//
//	r, _ := modserve.New(modserve.Name)
//	s, _ := mm.New(mm.Decoupled(mm.InternVL25_26B, 48, 20), reqs)
//	sum, err := s.Run(r)
//
// The static acceptance of issue 35 (P99 TTFT ordered monolith > Decoup >
// Sched > ModServe for both models, and each rung's gain against the
// paper's) is TestStaticLadder; numbers in docs/results/multimodal.md.
package modserve
