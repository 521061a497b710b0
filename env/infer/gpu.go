package infer

import (
	"fmt"
	"slices"
)

// GPU describes one GPU type: what an instance's memory capacity, its cost
// and, for types without measured latencies, its extrapolated speed are
// computed from.
type GPU struct {
	// Name is the type's name as the performance table spells it
	// ("a100-80gb", "h100-80gb"): the key that finds its measured rows.
	Name string
	// MemoryBytes is one GPU's memory.
	MemoryBytes int64
	// HBMBytesPerSec is one GPU's memory bandwidth (bytes/s): decode
	// iterations, which read the weights and the KV cache, scale with it.
	HBMBytesPerSec float64
	// FP16FLOPS is one GPU's dense FP16/BF16 tensor throughput (FLOP/s):
	// prefill, which is compute-bound, scales with it.
	FP16FLOPS float64
	// VectorOPS is one GPU's non-tensor (CUDA-core FP32) throughput in
	// operations per second: what KV formats' quantization, entropy coding
	// and dequantization (kv.Work, counted in elementary operations) run
	// at.
	VectorOPS float64
	// DollarsPerHour is an on-demand cloud price of one GPU, for the cost
	// metric (an assumption: list prices change; see GPUs).
	DollarsPerHour float64
}

// GPUs are the GPU types Drover knows. A100 and H100 are measured (rows of
// SplitwiseSim's performance table); the others have no measured rows and
// their latencies are extrapolated from the A100's (PerfModel), which every
// output marks (Summary.Extrapolated).
//
// Sources: the memory sizes of the 80 GB parts are SplitwiseSim's own
// (configs/hardware_repo/processors/{a100,h100}-80gb.yaml: 85899345920
// bytes, 80 GiB); bandwidths and dense FP16 tensor throughputs are NVIDIA's
// datasheets (A100 80GB SXM 2,039 GB/s, 312 TFLOPS; H100 SXM 3,350 GB/s,
// 989 TFLOPS; A10 600 GB/s, 125 TFLOPS, taken for AWS's A10G; V100 SXM2
// 32GB 900 GB/s, 125 TFLOPS; T4 320 GB/s, 65 TFLOPS; L4 300 GB/s, 121
// TFLOPS); VectorOPS are the same datasheets' FP32 (non-tensor) figures
// (A100 19.5, H100 SXM 67, A10 31.2, V100 15.7, T4 8.1, L4 30.3 TFLOPS).
// Prices are AWS us-east-1 on-demand list prices per GPU (the
// instance price divided by its GPUs: p4de, p5, g5, p3dn, g4dn, g6), an
// assumption for comparing deployments, not a quote.
var GPUs = []GPU{
	{Name: "a100-80gb", MemoryBytes: 80 << 30, HBMBytesPerSec: 2.039e12, FP16FLOPS: 312e12, VectorOPS: 19.5e12, DollarsPerHour: 5.12},
	{Name: "h100-80gb", MemoryBytes: 80 << 30, HBMBytesPerSec: 3.35e12, FP16FLOPS: 989e12, VectorOPS: 67e12, DollarsPerHour: 12.29},
	{Name: "a10g", MemoryBytes: 24 << 30, HBMBytesPerSec: 600e9, FP16FLOPS: 125e12, VectorOPS: 31.2e12, DollarsPerHour: 1.006},
	{Name: "v100-32gb", MemoryBytes: 32 << 30, HBMBytesPerSec: 900e9, FP16FLOPS: 125e12, VectorOPS: 15.7e12, DollarsPerHour: 3.90},
	{Name: "t4", MemoryBytes: 16 << 30, HBMBytesPerSec: 320e9, FP16FLOPS: 65e12, VectorOPS: 8.1e12, DollarsPerHour: 0.526},
	{Name: "l4", MemoryBytes: 24 << 30, HBMBytesPerSec: 300e9, FP16FLOPS: 121e12, VectorOPS: 30.3e12, DollarsPerHour: 0.805},
}

// LookupGPU returns the GPU type named name.
func LookupGPU(name string) (GPU, error) {
	i := slices.IndexFunc(GPUs, func(g GPU) bool { return g.Name == name })
	if i < 0 {
		return GPU{}, fmt.Errorf("%w: unknown GPU type %q", ErrBadConfig, name)
	}
	return GPUs[i], nil
}
