package hack

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// decodeMemEnv turns on TestDecodeMemory.
const decodeMemEnv = "DROVER_HACK_DECODEMEM"

// a100_40 is AWS p4d's GPU (NVIDIA A100 40GB SXM4 datasheet: 40 GB (GiB,
// as GPUs counts the 80 GB part), 1,555 GB/s, 312 FP16 and 624 INT8
// dense tensor TFLOPS/TOPS, 19.5 FP32 TFLOPS); its iteration times are the A100 80GB's curves scaled by the
// bandwidths (extrapolated). No price: it is not compared on cost.
var a100_40 = infer.GPU{Name: "a100-40gb", MemoryBytes: 40 << 30, HBMBytesPerSec: 1.555e12, FP16FLOPS: 312e12, VectorOPS: 19.5e12, INT8OPS: 624e12}

// TestDecodeMemory is an opt-in look at whether the paper's direction can
// come from decode memory: paperSetup's deployment (A10G prefill, the
// shared 10 Gbps link) with its decode instances on AWS p4de (8 x A100
// 80GB) or p4d (8 x A100 40GB, and 4 x A100 40GB, the fewest that hold
// Llama-3.1-70B's 141 GB), at the direction tables' rates and beyond. Per
// format it prints the mean JCT, the largest number of requests whose KV
// cache a decode instance held at once against how many of the mean
// request fit (and the peak bytes against the memory the weights leave),
// and the mean wait of a transfer for room in the decode instance's memory
// (TransferStart - FirstToken; the shared link's queue comes after
// TransferStart). A run that stalls (infer.ErrStalled) is logged and left
// out of the table. It asserts nothing beyond the runs;
// docs/results/inference.md holds its output.
//
//	DROVER_HACK_DECODEMEM=1 go test ./policies/hack -run TestDecodeMemory -v
func TestDecodeMemory(t *testing.T) {
	if os.Getenv(decodeMemEnv) == "" {
		t.Skipf("set %s=1 to run", decodeMemEnv)
	}
	perf := readPerf(t)
	formats := []kv.Format{kv.FP16(), kv.KVQuant2(), kv.CacheGenCodec(), kv.KVQuantTorch(), kv.CacheGenTorch(), kv.HACKPi(64)}
	type deploy struct {
		name string
		gpu  string
		tp   int
	}
	var out strings.Builder
	out.WriteString("| decode | req/s | format | JCT (s) | peak requests held / fit | wait for decode memory (s) |\n|---|---|---|---|---|---|\n")
	for _, d := range []deploy{{"p4de 8 x A100-80GB", "a100-80gb", 8}, {"p4d 8 x A100-40GB", "a100-40gb", 8}, {"p4d 4 x A100-40GB", "a100-40gb", 4}} {
		for _, rate := range []float64{0.1, 0.3, 0.6, 1.0} {
			reqs := paperRequests(t, 120, rate)
			c := paperSetup(perf, "a10g", 10, true)
			c.GPUs = append(append([]infer.GPU(nil), infer.GPUs...), a100_40)
			for i := range c.Instances {
				if c.Instances[i].Role == infer.Decode {
					c.Instances[i].GPU, c.Instances[i].TP = d.gpu, d.tp
				}
			}
			g, _ := infer.LookupGPU(d.gpu)
			if d.gpu == a100_40.Name {
				g = a100_40
			}
			free := g.MemoryBytes*int64(d.tp) - c.Model.WeightBytes
			for _, f := range formats {
				s, err := infer.New(c, reqs)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := s.Run(New(f))
				if err != nil {
					t.Logf("%s %g req/s %s: %v", d.name, rate, f, err)
					continue
				}
				a := c.Model.Arch
				type ev struct {
					t     float64
					delta int64
					inst  int
				}
				var evs []ev
				wait, per := 0.0, int64(0)
				for _, r := range s.Results() {
					b := f.StoredBytes(a, r.Prompt+r.Output)
					evs = append(evs, ev{r.TransferStart, b, r.Decode}, ev{r.End, -b, r.Decode})
					wait += r.TransferStart - r.FirstToken
					per += b
				}
				sort.Slice(evs, func(i, j int) bool { return evs[i].t < evs[j].t || evs[i].t == evs[j].t && evs[i].delta < 0 })
				held, peak := map[int]int64{}, int64(0)
				n, peakN := map[int]int{}, 0
				for _, e := range evs {
					held[e.inst] += e.delta
					if e.delta > 0 {
						n[e.inst]++
					} else {
						n[e.inst]--
					}
					peak = max(peak, held[e.inst])
					peakN = max(peakN, n[e.inst])
				}
				mean := per / int64(len(reqs))
				fmt.Fprintf(&out, "| %s | %g | %s | %.2f | %d / %d (%.0f%% of %.0f GB) | %.2f |\n", d.name, rate, f, sum.E2E.Mean, peakN, free/mean, 100*float64(peak)/float64(free), float64(free)/1e9, wait/float64(len(reqs)))
			}
		}
	}
	t.Log("A10G prefill, shared 10 Gbps link, 120 requests:\n" + out.String())
}
