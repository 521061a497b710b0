package kv_test

import (
	"fmt"

	"github.com/drover-sched/drover/env/infer/kv"
)

// The KV cache of a 4,096-token Qwen3-8B prompt in each format, as the
// HKVQ artifact's E2 experiment measures it.
func Example() {
	a, _ := kv.Lookup("qwen3-8b")
	for _, f := range kv.Formats() {
		if err := f.Check(a); err != nil {
			panic(err)
		}
		stored := float64(f.StoredBytes(a, 4096)) / (1 << 20)
		wire := float64(f.TransferBytes(a, 4096)) / (1 << 20)
		fmt.Printf("%-10s stored %6.1f MiB  sent %6.1f MiB\n", f, stored, wire)
	}
	// Output:
	// fp16       stored  576.0 MiB  sent  576.0 MiB
	// int8       stored  297.0 MiB  sent  297.0 MiB
	// kvquant    stored   84.6 MiB  sent   84.6 MiB
	// cachegen   stored  157.5 MiB  sent   85.8 MiB
	// hack-pi32  stored  120.6 MiB  sent  120.6 MiB
	// hack-pi64  stored  102.0 MiB  sent  102.0 MiB
	// hack-pi128 stored  100.8 MiB  sent  100.8 MiB
}

// The artifact's serving runs, with the HACK reduction of each rate.
func ExampleHKVQMeasured() {
	base := map[string]float64{}
	for _, r := range kv.HKVQMeasured() {
		key := fmt.Sprintf("%s@%.2f", r.Experiment, r.Rate)
		if r.Method == "baseline" {
			base[key] = r.JCT
			continue
		}
		n := len(kv.HKVQWorkload(r.Experiment, r.Rate))
		fmt.Printf("%-10s %2d requests: JCT %5.2f s vs %5.2f s (-%2.0f%%), KV %3.0f MiB\n",
			key, n, r.JCT, base[key], 100*(1-r.JCT/base[key]), r.KVMiB)
	}
	// Output:
	// long@0.15  24 requests: JCT 15.13 s vs 17.11 s (-12%), KV 326 MiB
	// long@0.30  24 requests: JCT 16.99 s vs 24.13 s (-30%), KV 326 MiB
	// short@0.25 40 requests: JCT  6.10 s vs  6.55 s (- 7%), KV  94 MiB
	// short@0.50 40 requests: JCT  6.53 s vs  8.69 s (-25%), KV  94 MiB
	// short@0.75 40 requests: JCT  7.09 s vs 17.92 s (-60%), KV  94 MiB
}

// ExampleTorchPasses: the traffic of one decode step that dequantizes a
// 14,000-token Llama-3.1-70B cache as the HKVQ artifact's PyTorch code
// does, per element of K and V, against the fused kernel's.
func ExampleTorchPasses() {
	a := kv.Llama31_70B
	elems := float64(a.KVElementsPerToken()) * 14000
	for _, f := range []kv.Format{kv.KVQuantTorch(), kv.CacheGenTorch(), kv.KVQuant2()} {
		w := f.Work(a, 14000)
		fmt.Printf("%-14s %5.2f bytes an element beside %.2f stored\n", f, float64(w.DequantBytes)/elems, float64(w.StepBytes)/elems)
	}
	fmt.Println(kv.TorchPasses(a, kv.KVQuantTorch(), 14000).Kernels, "kernels a step")
	// Output:
	// kvquant-torch  76.00 bytes an element beside 0.29 stored
	// cachegen-torch 61.78 bytes an element beside 0.54 stored
	// kvquant         4.00 bytes an element beside 0.29 stored
	// 1760 kernels a step
}
