package kv

// Claim is one number a paper or the HKVQ artifact reports, with where it
// was read. Drover's evaluations set their results beside these.
type Claim struct {
	// Paper names the work: "HACK", "KVQuant", "CacheGen".
	Paper string
	// What the number measures.
	What string
	// Value is the number as reported.
	Value string
	// Source is where it was read; Secondary marks a summary of the paper
	// rather than the paper or its artifact.
	Source    string
	Secondary bool
}

// Claims returns the papers' headline numbers that could be read here
// (through stored copies of public pages). The HACK paper's body was not
// reachable; its evaluation's figures (the issue's "KV transfer time -80 to
// -85%" and "dequantization share 17-30% of JCT, 1.5-3.2% with HACK"
// among them) are read from a secondary summary of it, a blog post in
// Chinese ("HACK 如何把 KV Cache 压缩推进到算子层", "How HACK pushes KV
// cache compression into the operator layer", 2026-05-08, citing
// arxiv.org/pdf/2502.03589v1; id 59879633495 in the stored code index),
// and marked Secondary.
func Claims() []Claim {
	const (
		hackAbs  = "arXiv 2502.03589v1 abstract (arxiv.org/html/2502.03589v1)"
		alphaxiv = "alphaxiv.org/overview/2502.03589v1 (summary of v1)"
		readme   = "Zeyu-ZEYU/HKVQ@fc16e215cb69:README.md"
		blog     = "blog \"HACK 如何把 KV Cache 压缩推进到算子层\" (2026-05-08, summary of arxiv.org/pdf/2502.03589v1; code index id 59879633495)"
	)
	return []Claim{
		{"HACK", "JCT reduction vs the disaggregated baseline, up to", "70.9%", hackAbs, false},
		{"HACK", "JCT reduction vs state-of-the-art KV quantization, up to", "52.3%", hackAbs, false},
		{"HACK", "KV transmission share of JCT for long prompts (10-50 Gbps), up to", "42.2%", alphaxiv, true},
		{"HACK", "dequantization share of JCT with CacheGen/KVQuant, up to", "37.9%", alphaxiv, true},
		{"HACK", "prefill and decode computation shares of JCT, up to", "45.6% and 83.3%", alphaxiv, true},
		{"HACK", "KV share of GPU memory, up to; memory access share of JCT, up to", "93.7%; 33.1%", alphaxiv, true},
		{"HACK", "evaluation setup: AWS instances, decode on A100, prefill on", "A10G, V100, T4, L4, A100", blog + ", section 5", true},
		{"HACK", "models of the evaluation", "Mistral-v0.3 7B, Phi-3 14B, Yi 34B, Llama-3.1 70B, Falcon 180B", blog + ", section 5", true},
		{"HACK", "mean JCT reduction, Llama-3.1-70B with A10G prefill, over the datasets: vs the disaggregated baseline; vs CacheGen; vs KVQuant", "38.6-61.6%; 19.2-41.5%; 21.2-45.1%", blog + ", section 5", true},
		{"HACK", "KV size with HACK, CacheGen and KVQuant, share of the baseline's", "about 15%", blog + ", section 5", true},
		{"HACK", "KV transfer time of the compressed formats vs the baseline's; their communication share of JCT", "-80.6% to -85.4%; 1.31-5.4%", blog + ", section 5", true},
		{"HACK", "dequantization share of JCT with CacheGen/KVQuant (evaluation); HACK's approximation overhead share", "17.2-30.4%; 1.53-3.18%", blog + ", section 5", true},
		{"HACK", "dequantization share of JCT with CacheGen/KVQuant (motivation, growing with the sequence)", "17.2-37.9%", blog + ", section 1", true},
		{"HACK", "HACK's prefill time below the others' (INT8 attention); its decode time below CacheGen's/KVQuant's", "14.6-41.9%; 11.5-33.7%", blog + ", section 5", true},
		{"HACK", "KV transfer share of JCT in the disaggregated baseline, up to", "42.2%", blog + ", section 1", true},
		{"HACK", "mean JCT reduction, Llama-3.1-70B on Cocktail: vs the baseline with V100 prefill, up to; vs KVQuant with A100 prefill, up to", "70.9%; 52.3%", blog + ", section 5", true},
		{"HACK", "accuracy loss vs the baseline: HACK (Pi 64); CacheGen; KVQuant", "0.76-1.56%; 1.44-2.08%; 1.46-2.33%", blog + ", section 5", true},
		{"HACK", "partition size: Pi 32 vs 128, accuracy gain and mean JCT increase, up to; Pi 64's JCT increase", "1.53% and 28%; 5.1-9.2%", blog + ", section 3", true},
		{"HACK", "GPU memory of the partition sums; of the FP16 last V block", "2.2-2.7%; 0.24-0.51%", blog + ", sections 3-4", true},
		{"HACK", "mean JCT without summation elimination, short and long (arXiv, Cocktail) datasets; without requantization elimination", "+13.8-15.3% and +22.1-25.9%; +17.8-21.7% and +0.09-1.2%", blog + ", section 4", true},
		{"HACK", "accuracy loss depending on the partition size", "about 0.5-2.7%", "app.argminai.com/arxiv-dashboard/papers/2502.03589v1 (summary)", true},
		{"HACK", "stored and sent KV of a 4,096-token Qwen3-8B prompt, share of BF16 (C1)", "17.5% to 20.9%", readme + ":201-202", false},
		{"HACK", "average JCT reduction, long prompts on RTX A6000, 0.15 and 0.3 req/s (C2)", "12% and 30%", readme + ":234", false},
		{"HACK", "average JCT reduction, short prompts on RTX 4000 Ada, 0.25/0.5/0.75 req/s", "7%, 25%, 60%", readme + ":263", false},
		{"HACK", "TPOT without requantization elimination (C3)", "above 300 ms, against 31-52 ms", readme + ":267-268", false},
		{"HACK", "decode attention vs BF16 on an RTX A6000 (C4)", "about 2x at 4K tokens, 3x from 32K", readme + ":148", false},
		{"HACK", "the paper's default long-context workload (E3): prompt and output tokens", "12K-16K and 256-512", readme + " (E3)", false},
		{"HACK", "accuracy runs, arXiv, 20 examples a row, RTX A6000 (E1): minutes per row, BF16 and HACK vs the comparison methods (their PyTorch dequantization)", "5 vs 16", readme + " (E1)", false},
		{"HACK", "datasets of the paper's evaluation", "IMDb, arXiv summarization, Cocktail, HumanEval", "Zeyu-ZEYU/HKVQ@9c85c518:README.md", false},
		{"CacheGen", "KV size reduction vs quantization baselines; context-loading delay", "3.5-4.3x; 3.2-3.7x, negligible quality impact", "CacheGen, SIGCOMM'24 abstract (approjects.co.za mirror of microsoft.com/en-us/research/publication/cachegen-...)", false},
		{"KVQuant", "perplexity degradation at 3 bits on Wikitext-2 and C4", "small (the bound is math in the stored abstract and did not survive)", "arXiv 2401.18079v5 abstract (arxiv.org/html/2401.18079v5)", false},
	}
}
