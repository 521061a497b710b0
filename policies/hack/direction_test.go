package hack

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
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
// out its larger vocabulary (embedding and head of 2.10B parameters
// against 0.52B: 2.2% of its weights).
func paperModel() infer.Model {
	a := kv.Llama31_70B
	return infer.Model{Name: "llama2-70b", WeightBytes: a.WeightBytes(), KVBytesPerToken: a.KVBytesPerToken(), Arch: a}
}

// paperSetup is the deployment of the paper's comparison as Drover can
// build it: paperModel on 8 prefill instances of 8 A10G or V100
// (extrapolated from the A100's measured curves by the datasheets' FP16
// throughput) and 2 decode instances of 8 A100 (measured), decode
// iterations reading their KV, on a link of gbps between the pools. With
// shared the link is one, its bandwidth split among the transfers under
// way (infer.LinkConfig.FairShare: the artifact's transport); without,
// every transfer has the whole bandwidth to itself. The paper's network
// (10-50 Gbps per prefill instance, its table of instances) lies between
// the two: they bound the dense cache's transfer time from both sides.
func paperSetup(perf *infer.PerfTable, prefillGPU string, gbps float64, shared bool) infer.Config {
	c := infer.Config{Model: paperModel(), Perf: perf, DecodeReadsKV: true,
		Link: infer.LinkConfig{BytesPerSec: gbps / 8 * 1e9, Shared: shared, FairShare: shared}}
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

// directionMiss is a part of the paper's direction Drover does not
// reproduce: a claim ("kvquant-torch < fp16", "kvquant-torch share in
// 17.2-30.4%"; a path.Match pattern, so "* transfer share in 1.31-5.4%"
// names every format's) in the settings that match (an empty link or
// prefill GPU, a zero rate or bandwidth matches every one), with why.
type directionMiss struct {
	link, gpu  string // "own" or "shared"; "a10g" or "v100-32gb"
	rate, gbps float64
	claim, why string
}

// directionMisses are the parts of the paper's direction and figure ranges
// Drover does not reproduce (docs/results/inference.md, HACK). The test
// fails where a listed part holds, so that the list stays true.
var directionMisses = []directionMiss{
	{claim: "kvquant share in 17.2-30.4%", why: "a fused dequantization kernel (4 bytes an element: a 16-bit copy written and read) is 1.4-2.8% of JCT"},
	{claim: "cachegen share in 17.2-30.4%", why: "as kvquant"},
	{rate: 0.3, claim: "kvquant-torch share in 17.2-30.4%", why: "decode batches of several long requests: the artifact's PyTorch dequantization (kv.TorchPasses, 76 bytes of traffic an element against 0.29 stored) grows to 47% of JCT"},
	{rate: 0.3, claim: "cachegen-torch share in 17.2-30.4%", why: "as kvquant-torch: 38% (62 bytes an element)"},
	{link: "shared", rate: 0.2, claim: "kvquant-torch share in 17.2-30.4%", why: "33%"},
	{link: "shared", rate: 0.26, claim: "kvquant-torch share in 17.2-30.4%", why: "41%"},
	{link: "shared", rate: 0.26, claim: "cachegen-torch share in 17.2-30.4%", why: "33.5%"},
	{link: "own", claim: "kvquant-torch < fp16", why: "the PyTorch dequantization costs more decode time than the 2-bit cache saves on the link: FP16's transfer is at most 13.7% of JCT"},
	{link: "own", claim: "cachegen-torch < fp16", why: "as kvquant-torch"},
	{link: "shared", gbps: 25, claim: "kvquant-torch < fp16", why: "the shared link is far from full at 25 Gbps (FP16's transfer 6.7-8.9% of JCT)"},
	{link: "shared", gbps: 25, claim: "cachegen-torch < fp16", why: "as kvquant-torch"},
	{link: "shared", gbps: 50, claim: "kvquant-torch < fp16", why: "as at 25 Gbps (3.3-3.8%)"},
	{link: "shared", gbps: 50, claim: "cachegen-torch < fp16", why: "as at 25 Gbps"},
	{link: "shared", rate: 0.1, gbps: 10, claim: "kvquant-torch < fp16", why: "at 0.1 req/s the 10 Gbps link is 37% busy with FP16: its transfer is 18.5% of JCT, the dequantization 22%"},
	{link: "shared", rate: 0.1, gbps: 10, claim: "cachegen-torch < fp16", why: "as kvquant-torch (29.35 s against FP16's 28.89)"},
	{link: "shared", rate: 0.2, gbps: 10, claim: "kvquant-torch < fp16", why: "FP16's transfer 28.8% of JCT, KVQuant's dequantization 33%"},

	// HACK's reductions (paper: 38.6-61.6% vs FP16, 21.2-45.1% vs KVQuant,
	// 19.2-41.5% vs CacheGen).
	{link: "own", claim: "hack vs fp16 in 38.6-61.6%", why: "2.8-11.7%: FP16's transfer is at most 13.7% of JCT on a link of its own"},
	{link: "shared", gbps: 25, claim: "hack vs fp16 in 38.6-61.6%", why: "6.0-8.4%: the link far from full"},
	{link: "shared", gbps: 50, claim: "hack vs fp16 in 38.6-61.6%", why: "3.0-3.8%"},
	{link: "shared", rate: 0.1, gbps: 10, claim: "hack vs fp16 in 38.6-61.6%", why: "16.8%: FP16's transfer 18.5% of JCT"},
	{link: "shared", rate: 0.2, gbps: 10, claim: "hack vs fp16 in 38.6-61.6%", why: "28.9%: FP16's transfer 28.8% of JCT"},
	{claim: "hack vs kvquant in 21.2-45.1%", why: "0.8-2.2%: the fused kernel's dequantization is 1.4-2.8% of JCT"},
	{claim: "hack vs cachegen in 19.2-41.5%", why: "as kvquant: 0.9-2.4%"},
	{rate: 0.3, claim: "hack vs kvquant-torch in 21.2-45.1%", why: "46.8-47.8%, above: the PyTorch dequantization is 47% of JCT at 0.3 req/s"},
	{rate: 0.1, claim: "hack vs cachegen-torch in 19.2-41.5%", why: "18.1-18.6%, just below: its dequantization is 18.1-18.4% of JCT"},

	// The compressed transfer's share of JCT (paper: 1.31-5.4%) and its
	// cut against FP16's transfer time (80.6-85.4%).
	{gbps: 25, claim: "* transfer share in 1.31-5.4%", why: "0.5-1.1%: the compressed cache takes 0.22-0.26 s at 25 Gbps"},
	{gbps: 50, claim: "* transfer share in 1.31-5.4%", why: "0.2-0.5%"},
	{link: "own", rate: 0.3, gbps: 10, claim: "kvquant-torch transfer share in 1.31-5.4%", why: "1.2%: its dequantization makes the JCT 46 s"},
	{link: "shared", claim: "kvquant* transfer time cut in 80.6-85.4%", why: "85.9-98.1%: FP16's transfers queue on the shared link (their mean 0.78-33.8 s against 0.73-3.67 s alone)"},
	{link: "shared", claim: "cachegen* transfer time cut in 80.6-85.4%", why: "as kvquant"},
	{link: "shared", gbps: 10, claim: "hack-pi64 transfer time cut in 80.6-85.4%", why: "88.3-97.8%: as kvquant (HACK's cache is larger: 0.12 s at 50 Gbps against 0.11)"},
	{link: "shared", gbps: 25, claim: "hack-pi64 transfer time cut in 80.6-85.4%", why: "85.4-88.9%"},
	{link: "shared", rate: 0.3, gbps: 50, claim: "hack-pi64 transfer time cut in 80.6-85.4%", why: "85.9%"},

	// HACK's approximation share (paper: 1.53-3.18%).
	{claim: "hack share in 1.53-3.18%", why: "0.2-0.5% of JCT: the decode kernel's correction work (kv.Work Approx, ApproxINT8), 0.16-0.20 ms a step at 14,000 tokens on 8 A100s, against iterations of about 40 ms"},
	{gpu: "a10g", rate: 0.1, claim: "hack-qp share in 1.53-3.18%", why: "1.30-1.33%, just below: the quantized prefill's elementwise work adds 0.27 s a prompt on A10G"},
	{gpu: "a10g", rate: 0.2, claim: "hack-qp share in 1.53-3.18%", why: "1.40-1.43%"},
	{gpu: "a10g", rate: 0.26, claim: "hack-qp share in 1.53-3.18%", why: "1.47%"},
	{gpu: "a10g", rate: 0.3, gbps: 10, claim: "hack-qp share in 1.53-3.18%", why: "1.50-1.51%"},

	// The phases (paper: HACK's prefill 14.6-41.9% below the others', its
	// decode 11.5-33.7% below CacheGen's and KVQuant's).
	{claim: "hack-pi64 prefill vs * in 14.6-41.9%", why: "0.0%: the artifact's HACK (quantized_prefill off: its default, and E3's) attends in 16 bits at the prefill as every format does; quantizing K and V adds 1 ms to a 7.5 s prefill"},
	{claim: "hack-pi64-qp prefill vs * in 14.6-41.9%", why: "3.6% longer on A10G, 42% longer on V100: the INT8 products on the codes do np = 2 times the dense attention's multiply-adds (Q's codes block-diagonal per channel partition), at twice the FP16 rate on A10G (no gain) and at half of it on V100 (DP4A: no INT8 tensor cores), and 125 elementwise operations per query-key pair besides; the attention is 12% of the prefill's FLOPs at 14,000 tokens, so even free it would save less than 14.6%"},
	{claim: "hack decode vs * in 11.5-33.7%", why: "-0.1 to 0.7%: beside the format's work (counted apart, as the paper's breakdown does), a decode step of HACK reads its 2-bit cache (17.7% of FP16's bytes, KVQuant 14.6%) in iterations mostly spent reading the weights"},

	// HACK with the quantized prefill against the others.
	{link: "own", gpu: "v100-32gb", claim: "hack-qp < kvquant", why: "its prefill takes 10.7 s on V100 against 7.5 s"},
	{link: "own", gpu: "v100-32gb", claim: "hack-qp < cachegen", why: "as against kvquant"},
	{link: "own", gpu: "v100-32gb", rate: 0.1, claim: "hack-qp < fp16", why: "3.2 s more prefill than FP16's transfer saves (0.73-3.67 s against 0.61 s)"},
	{link: "own", gpu: "v100-32gb", rate: 0.3, gbps: 25, claim: "hack-qp < fp16", why: "as at 0.1 req/s"},
	{link: "own", gpu: "v100-32gb", rate: 0.3, gbps: 50, claim: "hack-qp < fp16", why: "as at 0.1 req/s"},
	{gpu: "a10g", rate: 0.1, gbps: 10, claim: "hack-qp < kvquant", why: "its prefill is 0.27 s longer, the fused baselines are 0.2-0.3 s behind HACK's default"},
	{gpu: "a10g", rate: 0.1, gbps: 10, claim: "hack-qp < cachegen", why: "as against kvquant"},
	{gpu: "a10g", rate: 0.1, gbps: 25, claim: "hack-qp < kvquant", why: "as at 10 Gbps"},
}

// missed returns the listed miss that matches claim in a setting, if any.
func missed(link, gpu string, rate, gbps float64, claim string) (directionMiss, bool) {
	for _, m := range directionMisses {
		ok, err := path.Match(m.claim, claim)
		if err != nil {
			panic("hack: bad directionMiss pattern " + m.claim)
		}
		if ok && (m.link == "" || m.link == link) && (m.gpu == "" || m.gpu == gpu) && (m.rate == 0 || m.rate == rate) && (m.gbps == 0 || m.gbps == gbps) {
			return m, true
		}
	}
	return directionMiss{}, false
}

// paperRange is a range of the paper's figures for Llama-3.1-70B (as the
// secondary summary kv.Claims cites reads them), in percent.
type paperRange struct{ lo, hi float64 }

func (r paperRange) has(pct float64) bool { return pct >= r.lo && pct <= r.hi }
func (r paperRange) String() string       { return fmt.Sprintf("%g-%g%%", r.lo, r.hi) }

// The paper's figures for Llama-3.1-70B with A10G prefill (kv.Claims):
// HACK's mean JCT reduction against the baseline, CacheGen and KVQuant;
// the compressed formats' transfer share of JCT and their transfer time
// reduction against the baseline's; the 2-bit baselines' dequantization
// share of JCT and HACK's approximation share.
var (
	vsFP16       = paperRange{38.6, 61.6}
	vsCacheGen   = paperRange{19.2, 41.5}
	vsKVQuant    = paperRange{21.2, 45.1}
	commShare    = paperRange{1.31, 5.4}
	xferCut      = paperRange{80.6, 85.4}
	dequantShare = paperRange{17.2, 30.4}
	approxShare  = paperRange{1.53, 3.18}
	// HACK's prefill time below the other formats' and its decode time
	// below CacheGen's and KVQuant's (the breakdown of JCT).
	prefillCut = paperRange{14.6, 41.9}
	decodeCut  = paperRange{11.5, 33.7}
)

// hackQP is HACK with its prefill attention on the codes too
// (kv.Format.QuantizedPrefill; the artifact's default leaves it off).
func hackQP() kv.Format { f := kv.HACKPi(64); f.QuantizedPrefill = true; return f }

// TestPaperDirection is issue 34's acceptance for the direction of HACK's
// table: with A10G or V100 prefill instances, a 70B model and 10-50 Gbps
// links, HACK's mean JCT is below the KVQuant-like's and the
// CacheGen-like's, theirs below the FP16 baseline's, and their
// dequantization share of JCT in the paper's 17.2-30.4%. It checks the
// paper's other figure ranges too (HACK's reductions against each, the
// compressed transfer's share of JCT and its cut against FP16's, HACK's
// approximation share, its prefill time against the other formats' and
// its decode time, the format's work left out, against the 2-bit
// baselines', runCell's phases). HACK runs as the artifact's default
// (kv.HACKPi(64): 16-bit attention at the prefill) and with its prefill
// attention on the codes (hackQP), which is checked against the direction
// and the approximation share too. The 2-bit baselines run in two forms:
// dequantized by one fused kernel (kv.KVQuant2, kv.CacheGenCodec) and as the
// artifact's PyTorch code does it (kv.KVQuantTorch, kv.CacheGenTorch); on
// both links of paperSetup; at a light and a heavy load (0.1 and 0.3
// requests/s, and 0.2 on the shared link, with 0.26 on its 10 Gbps
// version, where FP16's transfer is 40% of JCT, near the paper's 42.2%;
// the paper's rates were not reachable). On the shared link the V100 is
// left out (it gives the A10G's numbers on the other, but for the
// quantized prefill, which it slows by 42%). What does not hold
// is listed in directionMisses. TestPaperDirectionSweep is a finer sweep
// of the rate on the shared 10 Gbps link (opt-in).
func TestPaperDirection(t *testing.T) {
	perf := readPerf(t)
	formats := []kv.Format{kv.FP16(), kv.KVQuant2(), kv.CacheGenCodec(), kv.KVQuantTorch(), kv.CacheGenTorch(), kv.HACKPi(64), hackQP()}
	baselines := []string{"kvquant", "cachegen", "kvquant-torch", "cachegen-torch"}
	vs := map[string]paperRange{"kvquant": vsKVQuant, "kvquant-torch": vsKVQuant, "cachegen": vsCacheGen, "cachegen-torch": vsCacheGen}
	check := func(link, gpu string, rate, gbps float64, at, claim string, holds bool) {
		t.Helper()
		m, known := missed(link, gpu, rate, gbps, claim)
		switch {
		case !holds && !known:
			t.Errorf("%s%s does not hold", at, claim)
		case !holds && known:
			t.Logf("known miss: %s%s: %s", at, claim, m.why)
		case holds && known:
			t.Errorf("%s%s holds but is listed as a known miss (%+v): update directionMisses", at, claim, m)
		}
	}
	for _, link := range []string{"own", "shared"} {
		rates, gpus := []float64{0.1, 0.3}, []string{"a10g", "v100-32gb"}
		if link == "shared" {
			rates, gpus = []float64{0.1, 0.2, 0.26, 0.3}, []string{"a10g"}
		}
		for _, rate := range rates {
			reqs := paperRequests(t, 120, rate)
			shareIn := map[string]bool{}
			for _, b := range baselines {
				shareIn[b] = true
			}
			links := []float64{10, 25, 50}
			if rate == 0.26 {
				links = links[:1]
			}
			for _, pg := range gpus {
				for _, gbps := range links {
					x := runCell(t, paperSetup(perf, pg, gbps, link == "shared"), reqs, formats)
					jct, share := x.jct, x.share
					t.Logf("%s link, %g req/s, %s prefill, %g Gbps (extrapolated: %s):%s", link, rate, pg, gbps, pg, x.line)
					at := fmt.Sprintf("%s link %g req/s %s %g Gbps: ", link, rate, pg, gbps)
					cut := func(a, b float64) float64 { return 100 * (1 - a/b) }
					hack := jct["hack-pi64"]
					for _, b := range baselines {
						check(link, pg, rate, gbps, at, "hack < "+b, hack < jct[b])
						check(link, pg, rate, gbps, at, b+" < fp16", jct[b] < jct["fp16"])
						check(link, pg, rate, gbps, at, "hack vs "+b+" in "+vs[b].String(), vs[b].has(cut(hack, jct[b])))
						if !(share[b] > 0) {
							t.Errorf("%s%s: no dequantization time", at, b)
						}
						shareIn[b] = shareIn[b] && dequantShare.has(100*share[b])
					}
					check(link, pg, rate, gbps, at, "hack < fp16", hack < jct["fp16"])
					qp := jct["hack-pi64-qp"]
					check(link, pg, rate, gbps, at, "hack-qp < fp16", qp < jct["fp16"])
					for _, b := range baselines {
						check(link, pg, rate, gbps, at, "hack-qp < "+b, qp < jct[b])
						check(link, pg, rate, gbps, at, "hack decode vs "+b+" in "+decodeCut.String(), decodeCut.has(cut(x.decode["hack-pi64"], x.decode[b])))
					}
					for _, h := range []string{"hack-pi64", "hack-pi64-qp"} {
						for _, b := range []string{"fp16", "kvquant", "cachegen"} {
							check(link, pg, rate, gbps, at, h+" prefill vs "+b+" in "+prefillCut.String(), prefillCut.has(cut(x.prefill[h], x.prefill[b])))
						}
					}
					check(link, pg, rate, gbps, at, "hack vs fp16 in "+vsFP16.String(), vsFP16.has(cut(hack, jct["fp16"])))
					check(link, pg, rate, gbps, at, "hack share in "+approxShare.String(), approxShare.has(100*share["hack-pi64"]))
					check(link, pg, rate, gbps, at, "hack-qp share in "+approxShare.String(), approxShare.has(100*share["hack-pi64-qp"]))
					for _, b := range append(baselines, "hack-pi64") {
						check(link, pg, rate, gbps, at, b+" transfer share in "+commShare.String(), commShare.has(100*x.xfer[b]))
						check(link, pg, rate, gbps, at, b+" transfer time cut in "+xferCut.String(), xferCut.has(cut(x.xferTime[b], x.xferTime["fp16"])))
					}
				}
			}
			// The dequantization share holds at a rate if it does on every
			// prefill GPU and link bandwidth.
			for _, b := range baselines {
				check(link, "", rate, 0, fmt.Sprintf("%s link %g req/s: ", link, rate), b+" share in "+dequantShare.String(), shareIn[b])
			}
		}
	}
}
