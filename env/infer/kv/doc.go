// Package kv models the KV cache of LLM inference for Drover's inference
// simulator (env/infer, issue 34): model architectures, the KV-cache
// formats a request's cache can travel and live in, their sizes in bytes,
// the work each format adds, and the HACK artifact's measurements to
// calibrate and check against. It is pure: no I/O (its tables are
// embedded), no clock, no randomness.
//
// An Arch is a model's shape (layers, query and KV heads under grouped-query
// attention, head dim, parameters), copied from public config files;
// Lookup finds the catalogued ones (Qwen3-8B, Llama-2-70B, BLOOM-176B,
// Llama-3.1-8B and 70B, Falcon-180B). The dense cache of one token is 2 x
// layers x KV heads x head dim x 2 bytes (Arch.KVBytesPerToken): 327,680
// bytes for Llama-2-70B, 4,014,080 for BLOOM-176B, 147,456 for Qwen3-8B.
//
// A Format is one KV format as a comparable value: the dense 16-bit cache
// (FP16, BF16), 8-bit with dequantization (Int8), the KVQuant-style and the
// CacheGen-style 2-bit baselines, and HACK with partition size Pi (HACKPi),
// its summation and requantization elimination and its two memory layouts.
// StoredBytes and TransferBytes follow the byte layouts of the HKVQ
// artifact's code (github Zeyu-ZEYU/HKVQ at fc16e215: hack/cache.py,
// hack/vllm_plugin/layout.py, hack/baselines) and reproduce its reported
// sizes: Qwen3-8B at 4,096 tokens is 576 MiB in BF16 and 120.6 / 102.0 /
// 100.8 MiB in HACK with Pi = 32 / 64 / 128 (artifact: 121 / 102 / 101).
// Work counts the operations a format adds (quantizing at the prefill,
// CacheGen's entropy decoding on arrival, dequantization or HACK's
// approximation at every decode step, counted from the artifact's Triton
// kernels, and for HACK with QuantizedPrefill its prefill attention on the
// codes) for the simulator to turn into time.
// The 2-bit baselines dequantize at every decode step either as one fused
// kernel that writes a 16-bit copy (KVQuant2, CacheGenCodec) or as the
// artifact's PyTorch code does it, a chain of unfused elementwise kernels
// over the whole cache (KVQuantTorch, CacheGenTorch: "kvquant-torch",
// "cachegen-torch"; TorchPasses counts their kernels and bytes).
//
// The artifact's measurements are embedded CSV tables, each row naming its
// README line: HKVQMeasured (the serving runs: JCT, TTFT, TPOT, KV transfer
// per rate, baseline and HACK), HKVQWorkload (the requests of each replay,
// worked out again from the artifact's seeds), HKVQExperiments (their vLLM
// settings), HKVQMicrobench (attention-kernel timings) and HKVQAccuracy
// (accuracy per task and format, Format.AccuracyLoss). Claims lists the
// papers' headline numbers that could be read.
//
// # Usage
//
// The simulator asks, per request, how many bytes cross the link, how many
// stay on the decode instance and what work the format adds:
//
//	a, _ := kv.Lookup("qwen3-8b")
//	f, err := kv.Parse("hack-pi64") // or kv.HACKPi(64)
//	if err != nil { ... }
//	if err := f.Check(a); err != nil { ... }
//	wire := f.TransferBytes(a, req.Prompt)   // bytes on the prefill -> decode link
//	held := f.StoredBytes(a, req.Prompt+gen) // bytes of decode memory
//	w := f.Work(a, req.Prompt+gen)           // per-step bytes read and added operations
//	loss, ok := f.AccuracyLoss(a.Name)       // reported with the run
//
// and, pricing one format on one architecture at every iteration, binds
// them once (Bound, below):
//
//	b, err := f.Bind(a) // Check's error
//	if err != nil { ... }
//	st := b.Step(ctx)   // a decode step's fields of f.Work(a, ctx), unchecked
//
// and calibrates on the artifact's lowest rate:
//
//	for _, run := range kv.HKVQMeasured() {
//		reqs := kv.HKVQWorkload(run.Experiment, run.Rate)
//		// replay reqs in run.Format, compare with run.JCT ...
//	}
//
// # Bound: checked once
//
// The Format methods (StoredBytes, TransferBytes, Work, TorchPasses) check
// the format and the architecture at every call and panic on a pair Check
// refuses, as an API taking any values must. Format.Bind checks the pair
// once and returns a Bound, whose methods of the same names do not check
// it again, and find what depends on the pair alone (CacheGen's layers by
// code width and its bytes a token, the PyTorch passes per element,
// HACK's channel partition, sum widths, page size and the work of one
// block in its kernels) worked out at Bind; its Step returns a decode
// step's part of Work as a StepCost of four fields. The Format methods
// work the same constants out after their check and run the same code,
// so both give the same numbers bit for bit (TestBoundMatchesFormat).
//
// Bound is a hand-written fast path, and its reason is measured: the
// simulator (env/infer) prices every request's cache at every decode
// iteration it runs in. Through Format.Work, checking the pair at every
// call was 16% of TestPaperDirection's CPU and Work 60% (pprof); with a
// Bound per format and run and Step, the test's CPU samples fell from
// 1.66-1.71 s to 0.47-0.53 s (three runs each, alternating). env/infer's
// BenchmarkFormats (120 requests of the HACK paper's workload under its
// router), before and after alternating 10 times on a shared 2-core
// machine (load 3.5 to 4.9): HACK Pi = 64 8.8 to 2.4 ms, its quantized
// prefill 10.6 to 2.4 ms, KVQuant 8.0 to 2.6 ms, CacheGen 10.0 to 2.0 ms,
// their PyTorch dequantization 9.1 to 2.5 ms and 22.2 to 3.0 ms (CacheGen's
// allocated at every step: 90,688 to 362 allocations a run), the dense
// cache unchanged (1.35-1.48 ms). Step returns values, not a Work: building,
// zeroing and copying Work's nine fields was most of a step's time
// (BenchmarkStep, a Step returning a Work against the StepCost, same
// machine: HACK Pi = 64 49 to 18 ns, INT8 53 to 10 ns, KVQuant 74 to 22 ns).
// The checked Format.Work costs what it did before Bound (BenchmarkStep's
// checked half: within the noise for four formats, 12-14% slower for the
// torch and paged ones, p 0.01-0.04).
package kv
