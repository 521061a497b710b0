// Package kv models the KV cache of LLM inference for Drover's inference
// simulator (env/infer, issue 34): model architectures, the KV-cache
// formats a request's cache can travel and live in, their sizes in bytes,
// and the work each format adds. It is pure: no I/O, no clock, no
// randomness.
//
// An Arch is a model's shape (layers, query and KV heads under grouped-query
// attention, head dim), copied from public config files; Lookup finds the
// catalogued ones (Qwen3-8B, Llama-2-70B, BLOOM-176B, Llama-3.1-8B and
// 70B). The dense cache of one token is 2 x layers x KV heads x head dim x
// 2 bytes (Arch.KVBytesPerToken).
//
// A Format is one KV format as a value: the dense 16-bit cache (FP16,
// BF16), 8-bit with dequantization (Int8), the KVQuant-style and the
// CacheGen-style 2-bit baselines, and HACK with partition size Pi
// (HACKPi). Its StoredBytes and TransferBytes follow the exact byte layouts
// of the HKVQ artifact (github Zeyu-ZEYU/HKVQ at fc16e215: hack/cache.py,
// hack/vllm_plugin/layout.py, hack/baselines), and reproduce its reported
// sizes: Qwen3-8B at 4,096 tokens is 576 MiB in BF16 and 120.6 / 102.0 /
// 100.8 MiB in HACK with Pi = 32 / 64 / 128 (artifact: 121 / 102 / 101).
//
// # Usage
//
// The simulator asks, per request, how many bytes cross the link and how
// many stay on the decode instance:
//
//	a, _ := kv.Lookup("qwen3-8b")
//	f, err := kv.Parse("hack-pi64") // or kv.HACKPi(64)
//	if err != nil { ... }
//	if err := f.Check(a); err != nil { ... }
//	wire := f.TransferBytes(a, req.Prompt)     // bytes on the prefill -> decode link
//	held := f.StoredBytes(a, req.Prompt+gen)   // bytes of decode memory
package kv
