// Package hack is HACK's router for Drover's inference simulator
// (env/infer; arXiv 2502.03589, artifact github Zeyu-ZEYU/HKVQ): prefill
// and decode instance with the fewest pending tokens, every KV cache in
// one format of package kv. The same router with the dense, KVQuant-like
// or CacheGen-like format is the disaggregated baseline the paper compares
// with, so the formats are compared under one routing rule.
//
// # Usage
//
//	s, _ := infer.New(cfg, reqs) // prefill and decode instances
//	sum, err := s.Run(hack.New(kv.HACKPi(64)))
//	fmt.Println(sum.E2E.Mean, sum.FormatShare)
//
// The paper's direction (HACK faster than the 2-bit baselines, and they
// faster than FP16, with A10G or V100 prefill instances and a 70B model
// on 10-50 Gbps links, the paper's 12K-16K-token prompts) is
// TestPaperDirection; numbers in docs/results/inference.md, section HACK.
package hack
