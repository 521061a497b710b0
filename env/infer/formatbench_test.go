package infer

import (
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env/infer/kv"
)

// paperRouter is HACK's router (policies/hack), written here because env
// must not import policies: the prompt to the prefill instance with the
// fewest pending tokens, the decode to the decode instance with the
// fewest among those whose memory still takes the request's cache in f.
type paperRouter struct{ f kv.Format }

func (p paperRouter) Route(v *View, r Request) (Decision, error) {
	need := v.StoredBytes(p.f, r.Prompt+r.Output)
	pre, dec, fit := -1, -1, false
	for i := range v.NumInstances() {
		st := v.Instance(i)
		switch st.Role {
		case Prefill:
			if pre < 0 || st.PendingTokens < v.Instance(pre).PendingTokens {
				pre = i
			}
		case Decode:
			ok := st.ReservedBytes+need <= st.MaxBytes
			if dec < 0 || (ok && !fit) || (ok == fit && st.PendingTokens < v.Instance(dec).PendingTokens) {
				dec, fit = i, ok
			}
		}
	}
	return Decision{Prefill: pre, Decode: dec, Format: p.f}, nil
}

// BenchmarkFormats runs 120 requests of the HACK paper's long-context
// workload (prompts of 12,000-16,000 tokens, outputs of 256-512, Poisson
// at 0.3 requests/s, fixed seeds) on policies/hack's paperSetup
// deployment (8 A10G prefill and 2 A100 decode instances at TP8, a shared
// 25 Gbit/s link, decode reading the KV cache; the built-in roofline's
// latencies) under HACK's routing rule, once per KV format: the path on
// which the simulator prices every request's cache at every decode
// iteration (iterationTime, kv.Bound.Step). Compare two builds with
//
//	go test ./env/infer -run '^$' -bench Formats -count 10 | tee new.txt
//	benchstat old.txt new.txt
func BenchmarkFormats(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	reqs := make([]Request, 120)
	at := 1.0
	for i := range reqs {
		at += r.ExpFloat64() / 0.3
		reqs[i] = Request{ID: i, Arrival: at, Prompt: 12000 + r.IntN(4001), Output: 256 + r.IntN(257)}
	}
	c := Config{Model: ModelOf(kv.Llama2_70B), Perf: RooflinePerfTable(), DecodeReadsKV: true,
		Link: LinkConfig{BytesPerSec: 25 / 8.0 * 1e9, Shared: true, FairShare: true}}
	for i := range 10 {
		ic := InstanceConfig{GPU: "a10g", TP: 8, Role: Prefill, MaxBatchSize: 512, MaxBatchTokens: 4096, MaxPreemptions: 4}
		if i >= 8 {
			ic.GPU, ic.Role = "a100-80gb", Decode
		}
		c.Instances = append(c.Instances, ic)
	}
	for _, name := range []string{"fp16", "kvquant", "cachegen", "kvquant-torch", "cachegen-torch", "hack-pi64", "hack-pi64-qp"} {
		f, err := kv.Parse(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var iters int64
			for b.Loop() {
				s, err := New(c, reqs)
				if err != nil {
					b.Fatal(err)
				}
				sum, err := s.Run(paperRouter{f})
				if err != nil {
					b.Fatal(err)
				}
				if sum.Finished != len(reqs) {
					b.Fatalf("%d of %d requests finished", sum.Finished, len(reqs))
				}
				iters = sum.Iterations
			}
			b.ReportMetric(float64(iters), "iterations/op")
		})
	}
}
