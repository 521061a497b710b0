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
	// INT8OPS is one GPU's dense INT8 tensor throughput in operations per
	// second (a multiply-add is 2): what HACK's products on its codes
	// (kv.Work's ApproxINT8, PrefillINT8) run at. A GPU without INT8
	// tensor cores (V100) gives its CUDA cores' DP4A rate. Zero is taken
	// as 4 x VectorOPS, the DP4A rate of a GPU whose every FP32 lane does
	// a 4-way INT8 dot product per cycle.
	INT8OPS float64
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
// (A100 19.5, H100 SXM 67, A10 31.2, V100 15.7, T4 8.1, L4 30.3 TFLOPS);
// INT8OPS the same datasheets' dense INT8 tensor figures (A100 624, H100
// SXM 1,979, A10 250, T4 130, L4 242.5 TOPS: the sparse figures halved).
// The V100 has no INT8 tensor cores and its datasheet gives no INT8
// figure: its INT8OPS is the DP4A rate, 4 x 15.7 = 62.8 TOPS (as Pascal's
// P40 datasheet gives 47 INT8 TOPS beside 11.8 FP32 TFLOPS), half its FP16
// tensor rate where the other types' INT8 is twice theirs.
// Prices are AWS us-east-1 on-demand list prices per GPU (the
// instance price divided by its GPUs: p4de, p5, g5, p3dn, g4dn, g6), an
// assumption for comparing deployments, not a quote.
var GPUs = []GPU{
	{Name: "a100-80gb", MemoryBytes: 80 << 30, HBMBytesPerSec: 2.039e12, FP16FLOPS: 312e12, VectorOPS: 19.5e12, INT8OPS: 624e12, DollarsPerHour: 5.12},
	{Name: "h100-80gb", MemoryBytes: 80 << 30, HBMBytesPerSec: 3.35e12, FP16FLOPS: 989e12, VectorOPS: 67e12, INT8OPS: 1979e12, DollarsPerHour: 12.29},
	{Name: "a10g", MemoryBytes: 24 << 30, HBMBytesPerSec: 600e9, FP16FLOPS: 125e12, VectorOPS: 31.2e12, INT8OPS: 250e12, DollarsPerHour: 1.006},
	{Name: "v100-32gb", MemoryBytes: 32 << 30, HBMBytesPerSec: 900e9, FP16FLOPS: 125e12, VectorOPS: 15.7e12, INT8OPS: 62.8e12, DollarsPerHour: 3.90},
	{Name: "t4", MemoryBytes: 16 << 30, HBMBytesPerSec: 320e9, FP16FLOPS: 65e12, VectorOPS: 8.1e12, INT8OPS: 130e12, DollarsPerHour: 0.526},
	{Name: "l4", MemoryBytes: 24 << 30, HBMBytesPerSec: 300e9, FP16FLOPS: 121e12, VectorOPS: 30.3e12, INT8OPS: 242.5e12, DollarsPerHour: 0.805},
}

// int8Rate is g's INT8OPS, or 4 x VectorOPS where it is zero.
func (g GPU) int8Rate() float64 {
	if g.INT8OPS > 0 {
		return g.INT8OPS
	}
	return 4 * g.VectorOPS
}

// LookupGPU returns the GPU type named name.
func LookupGPU(name string) (GPU, error) {
	i := slices.IndexFunc(GPUs, func(g GPU) bool { return g.Name == name })
	if i < 0 {
		return GPU{}, fmt.Errorf("%w: unknown GPU type %q", ErrBadConfig, name)
	}
	return GPUs[i], nil
}
