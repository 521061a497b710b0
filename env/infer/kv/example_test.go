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
