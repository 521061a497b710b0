package hack

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// paperModel is a 70B model with the long context the paper's prompts
// need: Llama-3.1-70B (128K tokens; the head configuration of the
// artifact's attention microbenchmark). Its KV cache is Llama-2-70B's
// (80 layers, 8 KV heads of 128: 327,680 bytes a token dense), and so are
// its layers, heads and hidden size; its iteration times are Llama-2-70B's
// measured curves (the performance table's key llama2-70b), which leave
// out its larger vocabulary (1.05B parameters of embedding and head
// against 0.26B, 1.1% of the weights).
func paperModel() infer.Model {
	a := kv.Llama31_70B
	return infer.Model{Name: "llama2-70b", WeightBytes: a.WeightBytes(), KVBytesPerToken: a.KVBytesPerToken(), Arch: a}
}

// paperSetup is the deployment of the paper's comparison as Drover can
// build it: paperModel on 8 prefill instances of 8 A10G or V100
// (extrapolated from the A100's measured curves by the datasheets' FP16
// throughput) and 2 decode instances of 8 A100 (measured), decode
// iterations reading their KV, each KV transfer at gbps on its own (no
// transfer waits for another: the favourable case for the dense cache).
func paperSetup(perf *infer.PerfTable, prefillGPU string, gbps float64) infer.Config {
	c := infer.Config{Model: paperModel(), Perf: perf, DecodeReadsKV: true,
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

// paperRequests are n requests of the paper's default long-context
// workload as the artifact generates it (Zeyu-ZEYU/HKVQ@fc16e215:
// README.md E3, "prompts of 12K to 16K tokens as in the default setting
// of the paper, 256 to 512 output tokens"; benchmarks/e2e/workload.py
// draws both uniformly), lengths from seed (1, 1), arriving as a Poisson
// process at rate requests/s from seed (2, 2).
func paperRequests(t *testing.T, n int, rate float64) []infer.Request {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 1))
	rows := make([]llm.Length, n)
	for i := range rows {
		rows[i] = llm.Length{Prompt: 12000 + r.IntN(4001), Output: 256 + r.IntN(257)}
	}
	reqs, _, err := llm.Synth{Process: llm.Poisson, Rate: rate, N: n}.Generate(rows, rand.NewPCG(2, 2))
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
// reproduce, with why (docs/results/inference.md, HACK). A key names one
// setting ("0.3 req/s a10g 50 Gbps kvquant < fp16") or, without the
// setting, every one. The test fails if a listed part holds where the
// list says it does not, so that the list stays true.
var directionMisses = map[string]string{
	"kvquant-torch < fp16": "the artifact's PyTorch dequantization (kv.TorchPasses: 76 bytes of traffic an element, " +
		"against 0.29 stored) costs more decode time than the 2-bit cache saves on the link",
	"cachegen-torch < fp16": "as kvquant-torch (62 bytes an element)",
	"kvquant share in 17-30%": "a fused dequantization kernel (4 bytes an element: a 16-bit copy written and read) " +
		"is 2-5% of JCT",
	"cachegen share in 17-30%":                 "as kvquant",
	"0.3 req/s kvquant-torch share in 17-30%":  "decode batches of several long requests: the dequantization grows to 59% of JCT",
	"0.3 req/s cachegen-torch share in 17-30%": "as kvquant-torch: 48%",
}

// TestPaperDirection is issue 34's acceptance for the direction of HACK's
// table: with A10G or V100 prefill instances, a 70B model and 10-50 Gbps
// links, HACK's mean JCT is below the KVQuant-like's and the
// CacheGen-like's, theirs below the FP16 baseline's, and their
// dequantization share of JCT in the paper's 17-30%. The 2-bit baselines
// run in two forms: dequantized by one fused kernel (kv.KVQuant2,
// kv.CacheGenCodec) and as the artifact's PyTorch code does it
// (kv.KVQuantTorch, kv.CacheGenTorch), at a light and a heavy load
// (0.1 and 0.3 requests/s; the paper's rates were not reachable). What
// does not hold is listed in directionMisses.
func TestPaperDirection(t *testing.T) {
	perf := readPerf(t)
	formats := []kv.Format{kv.FP16(), kv.KVQuant2(), kv.CacheGenCodec(), kv.KVQuantTorch(), kv.CacheGenTorch(), kv.HACKPi(64)}
	check := func(at, claim string, holds bool) {
		t.Helper()
		name := at + claim
		why, known := directionMisses[name]
		general := false
		if !known {
			why, known = directionMisses[claim]
			general = known
		}
		switch {
		case !holds && !known:
			t.Errorf("%s does not hold", name)
		case !holds && known:
			t.Logf("known miss: %s: %s", name, why)
		case holds && general:
			t.Errorf("%s holds but %q is listed as a known miss everywhere: update directionMisses", name, claim)
		case holds && known:
			t.Errorf("%s holds but is listed as a known miss: update directionMisses", name)
		}
	}
	baselines := []string{"kvquant", "cachegen", "kvquant-torch", "cachegen-torch"}
	for _, rate := range []float64{0.1, 0.3} {
		reqs := paperRequests(t, 120, rate)
		shareIn := map[string]bool{}
		for _, b := range baselines {
			shareIn[b] = true
		}
		for _, pg := range []string{"a10g", "v100-32gb"} {
			for _, gbps := range []float64{10, 25, 50} {
				c := paperSetup(perf, pg, gbps)
				jct, share := map[string]float64{}, map[string]float64{}
				var line strings.Builder
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
					jct[name], share[name] = sum.E2E.Mean, sum.FormatShare
					fmt.Fprintf(&line, " | %s %.2f s (p99 %.2f, transfer %.1f%%, format %.1f%%)", name, sum.E2E.Mean, sum.E2E.P99, 100*xfer, 100*sum.FormatShare)
				}
				t.Logf("%g req/s, %s prefill, %g Gbps (extrapolated: %s):%s", rate, pg, gbps, pg, line.String())
				at := fmt.Sprintf("%g req/s %s %g Gbps ", rate, pg, gbps)
				for _, b := range baselines {
					check(at, "hack < "+b, jct["hack-pi64"] < jct[b])
					check(at, b+" < fp16", jct[b] < jct["fp16"])
					if !(share[b] > 0) {
						t.Errorf("%s%s: no dequantization time", at, b)
					}
					shareIn[b] = shareIn[b] && share[b] >= 0.17 && share[b] <= 0.30
				}
				check(at, "hack < fp16", jct["hack-pi64"] < jct["fp16"])
			}
		}
		// The dequantization share holds at a rate if it does on both prefill
		// GPUs and every link.
		for _, b := range baselines {
			check(fmt.Sprintf("%g req/s ", rate), b+" share in 17-30%", shareIn[b])
		}
	}
}
