package infergym

import (
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// Deployment is pd-rl's default deployment, after the HACK paper's
// setting (compute-focused prefill GPUs, memory-rich decode GPUs, a 70B
// model, a 10-50 Gbps link) on a cluster grown over GPU generations:
// Llama-2-70B with its grouped-query KV cache (kv.Llama2_70B); prefill on
// two A10G x 8 instances (extrapolated from the A100's measurements,
// marked so in every summary) and one A100 x 8; decode on one A100 x 8 and
// one V100 x 8 (extrapolated); a shared, queued 25 Gbps link with 1 ms per
// transfer; decode iterations read their KV caches (DecodeReadsKV); SLOs
// TTFT 5 s and TPOT 0.2 s. The prefill GPUs differ in FP16 throughput by
// 2.5x and the decode GPUs in memory bandwidth by 2.3x, which HACK's
// router (fewest queued tokens) does not see: on the conv trace's last
// 1,080 s a rule that divides the queued tokens by the GPUs' speed gives
// a 14% lower mean JCT than HACK's.
func Deployment(perf *infer.PerfTable) infer.Config {
	inst := func(gpu string, role infer.Role) infer.InstanceConfig {
		return infer.InstanceConfig{GPU: gpu, TP: 8, Role: role, MaxBatchSize: infer.SplitwiseMaxBatchSize,
			MaxBatchTokens: infer.SplitwiseMaxBatchTokens, MaxPreemptions: infer.SplitwiseMaxPreemptions}
	}
	return infer.Config{
		Model: infer.ModelOf(kv.Llama2_70B),
		Perf:  perf,
		Instances: []infer.InstanceConfig{
			inst("a10g", infer.Prefill), inst("a10g", infer.Prefill), inst("a100-80gb", infer.Prefill),
			inst("a100-80gb", infer.Decode), inst("v100-32gb", infer.Decode),
		},
		Link:          infer.LinkConfig{BytesPerSec: 25e9 / 8, Overhead: 1e-3, Shared: true},
		DecodeReadsKV: true,
		SLO:           infer.SLO{TTFT: 5, TPOT: 0.2},
	}
}
