// Package calib fits Drover's inference simulator (env/infer) to the HACK
// artifact's measured serving runs (github Zeyu-ZEYU/HKVQ, tables in
// env/infer/kv) and replays the artifact's workloads with the fitted
// parameters, for issue 34's acceptance: calibrated on the lowest request
// rate only, the simulator must predict the other rows' mean JCT within
// 15% and HACK's JCT reduction against the BF16 baseline within 10
// points.
//
// The artifact serves Qwen3-8B on one prefill and one decode vLLM instance
// (RTX A6000 for 12K-16K-token prompts, RTX 4000 Ada for 2K-6K), the KV
// cache crossing a 10 Gbps link. Fit solves, per experiment and from its
// lowest rate's baseline and HACK rows: the link's overhead and bandwidth
// (the two rows' KV transfer times), the decode step's fixed time (the
// baseline's TPOT), the prefill's throughput (HACK's TTFT), the KV
// handling outside the measured transfer (the baseline's TTFT beyond
// HACK's) and HACK's fixed time per decode step (HACK's TPOT). The
// deployment has the structure of the artifact's serving path (Artifact,
// read from its code): transfers that split the link's bandwidth, the KV
// staged for its transfer within the prefill step, and HACK's per-step
// overhead fixed rather than growing with the context. The memory
// bandwidth comes from the artifact's attention-kernel microbenchmark and
// the KV capacity from vLLM's memory budget. The GPUs' other figures are
// their datasheets' (RTXA6000, RTX4000Ada): spec-sheet values, marked as
// such.
//
// # Usage
//
//	rows, params, err := calib.Compare() // fit each experiment, replay every row
//	for _, r := range rows {
//		fmt.Println(r.Experiment, r.Rate, r.Method, r.Measured.JCT, r.Drover.JCT, r.JCTError())
//	}
//	// or step by step:
//	e, _ := calib.Experiment("short")
//	p, err := calib.Fit(e)
//	o, err := p.Replay(e, 0.75, kv.HACKPi(64))
//	cfg, err := p.Config(e) // the deployment, to run with any router
//
// Results and what the fit cannot explain: docs/results/inference.md,
// section HACK.
package calib
