package hack

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// paperSetup is the deployment of the paper's comparison as Drover can
// build it: Llama-2-70B (grouped-query attention, 327,680 bytes of dense
// KV a token) on 8 prefill instances of 8 A10G or V100 (extrapolated from
// the A100's measured curves by the datasheets' FP16 throughput) and 2
// decode instances of 8 A100 (measured), decode iterations reading their
// KV, each KV transfer at gbps on its own (no transfer waits for another:
// the favourable case for the dense cache).
func paperSetup(perf *infer.PerfTable, prefillGPU string, gbps float64) infer.Config {
	c := infer.Config{Model: infer.ModelOf(kv.Llama2_70B), Perf: perf, DecodeReadsKV: true,
		Link: infer.LinkConfig{BytesPerSec: gbps / 8 * 1e9}}
	for range 8 {
		c.Instances = append(c.Instances, infer.InstanceConfig{GPU: prefillGPU, TP: 8, Role: infer.Prefill,
			MaxBatchSize: 512, MaxBatchTokens: 4096, MaxPreemptions: 4})
	}
	for range 2 {
		c.Instances = append(c.Instances, infer.InstanceConfig{GPU: "a100-80gb", TP: 8, Role: infer.Decode,
			MaxBatchSize: 512, MaxBatchTokens: 4096, MaxPreemptions: 4})
	}
	return c
}

// paperRequests are 600 requests of Vidur's arXiv-summarization lengths
// (the paper's long-prompt dataset; prompt and output trimmed to
// Llama-2's 4,096 tokens by Vidur's rule, one-token prompts dropped),
// shuffled and arriving as a Poisson process at 2 requests/s, from seed
// (1, 1).
func paperRequests(t *testing.T) []infer.Request {
	t.Helper()
	raw, err := os.ReadFile(sharedtraces.Path(t, "llm", "vidur_lengths", "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv"))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := llm.DecodeVidur(raw, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reqs, _, err := llm.Synth{Process: llm.Poisson, Rate: 2, N: 600, Shuffle: true, MinPrompt: 2, MaxTokens: 4096}.Generate(ls.Rows, rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

func readPerf(t *testing.T) *infer.PerfTable {
	t.Helper()
	data, err := os.ReadFile(sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		t.Fatal(err)
	}
	perf, err := infer.ParsePerfTable(data)
	if err != nil {
		t.Fatal(err)
	}
	return perf
}

// directionMisses are the parts of the paper's direction Drover does not
// reproduce, with why (docs/results/inference.md, HACK). The test fails
// if one starts to hold, so that the list stays true.
var directionMisses = map[string]string{
	"a10g 25 Gbps kvquant < fp16":       "from 25 Gbps the dense cache's transfer (3.5% of JCT) costs less than the 2-bit baselines' dequantization (2.7%)",
	"a10g 25 Gbps cachegen < fp16":      "as for KVQuant",
	"a10g 50 Gbps kvquant < fp16":       "as at 25 Gbps",
	"a10g 50 Gbps cachegen < fp16":      "as at 25 Gbps",
	"v100-32gb 25 Gbps kvquant < fp16":  "as with A10G prefill (the decode instances are the same)",
	"v100-32gb 25 Gbps cachegen < fp16": "as with A10G prefill",
	"v100-32gb 50 Gbps kvquant < fp16":  "as with A10G prefill",
	"v100-32gb 50 Gbps cachegen < fp16": "as with A10G prefill",
	"dequantization share in 17-30%":    "kv.Work prices dequantization at the GPU's peak FP32 rate and HBM bandwidth (a fused kernel writing and reading a 16-bit copy): 1.5-4% of JCT; the paper's 17-30% (up to 37.9% in a summary) needs unfused dequantization several times slower, which no reachable measurement calibrates (the artifact's fused dequantizing kernel is faster than its BF16 one)",
}

// TestPaperDirection is issue 34's acceptance for the direction of HACK's
// table: with A10G or V100 prefill instances, Llama-2-70B and 10-50 Gbps
// links, HACK's mean JCT is below the KVQuant-like's and the
// CacheGen-like's, and theirs below the FP16 baseline's; and the 2-bit
// baselines' dequantization share of JCT is in the paper's 17-30%. What
// does not hold is listed in directionMisses.
func TestPaperDirection(t *testing.T) {
	perf := readPerf(t)
	reqs := paperRequests(t)
	formats := []kv.Format{kv.FP16(), kv.KVQuant2(), kv.CacheGenCodec(), kv.HACKPi(64)}
	check := func(name string, holds bool) {
		t.Helper()
		why, known := directionMisses[name]
		switch {
		case !holds && !known:
			t.Errorf("%s does not hold", name)
		case !holds && known:
			t.Logf("known miss: %s: %s", name, why)
		case holds && known:
			t.Errorf("%s holds but is listed as a known miss: update directionMisses", name)
		}
	}
	shareIn := true
	for _, pg := range []string{"a10g", "v100-32gb"} {
		for _, gbps := range []float64{10, 25, 50} {
			c := paperSetup(perf, pg, gbps)
			jct := map[string]float64{}
			line := ""
			for _, f := range formats {
				s, err := infer.New(c, reqs)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := s.Run(New(f))
				if err != nil {
					t.Fatal(err)
				}
				if sum.Finished != len(reqs) || len(sum.Extrapolated) != 1 || sum.Extrapolated[0] != pg {
					t.Fatalf("%s: %d of %d finished, extrapolated %v", f, sum.Finished, len(reqs), sum.Extrapolated)
				}
				xfer := 0.0
				for _, r := range s.Results() {
					xfer += (r.TransferEnd - r.FirstToken) / r.E2E()
				}
				xfer /= float64(len(reqs))
				name := f.Name()
				jct[name] = sum.E2E.Mean
				line += fmt.Sprintf(" | %s %.2f s (p99 %.2f, transfer %.1f%%, format %.1f%%)", name, sum.E2E.Mean, sum.E2E.P99, 100*xfer, 100*sum.FormatShare)
				if f.Kind == kv.KVQuant || f.Kind == kv.CacheGen {
					shareIn = shareIn && sum.FormatShare >= 0.17 && sum.FormatShare <= 0.30
					if !(sum.FormatShare > 0) {
						t.Errorf("%s: no dequantization time", name)
					}
				}
			}
			t.Logf("%s prefill, %g Gbps (extrapolated: %s):%s", pg, gbps, pg, line)
			at := fmt.Sprintf("%s %g Gbps ", pg, gbps)
			check(at+"hack < kvquant", jct["hack-pi64"] < jct["kvquant"])
			check(at+"hack < cachegen", jct["hack-pi64"] < jct["cachegen"])
			check(at+"hack < fp16", jct["hack-pi64"] < jct["fp16"])
			check(at+"kvquant < fp16", jct["kvquant"] < jct["fp16"])
			check(at+"cachegen < fp16", jct["cachegen"] < jct["fp16"])
		}
	}
	check("dequantization share in 17-30%", shareIn)
}
