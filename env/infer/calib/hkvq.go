package calib

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// The artifact's GPUs as their datasheets give them (NVIDIA RTX A6000
// datasheet: 48 GB GDDR6, 768 GB/s, 38.7 TFLOPS FP32, 309.7 TFLOPS FP16
// tensor with sparsity, so 154.8 dense; RTX 4000 Ada Generation datasheet:
// 20 GB GDDR6, 360 GB/s, 26.7 TFLOPS FP32, 327.6 TFLOPS FP8 tensor with
// sparsity, so 81.9 dense FP16; dense INT8 is twice the dense FP16 rate on
// both, 309.7 and 163.8 TOPS, as on every Ampere and Ada tensor core).
// Spec-sheet figures, not measurements: Fit
// replaces what the simulator's iteration times need by values fitted to
// the artifact's runs. No cloud sells them by the hour here; the price is 0.
var (
	RTXA6000   = infer.GPU{Name: "rtx-a6000", MemoryBytes: 48 << 30, HBMBytesPerSec: 768e9, FP16FLOPS: 154.8e12, VectorOPS: 38.7e12, INT8OPS: 309.7e12}
	RTX4000Ada = infer.GPU{Name: "rtx-4000-ada", MemoryBytes: 20 << 30, HBMBytesPerSec: 360e9, FP16FLOPS: 81.9e12, VectorOPS: 26.7e12, INT8OPS: 163.8e12}
)

// specOf maps an experiment's GPU (kv.Experiment.GPU) to its spec sheet.
func specOf(gpu string) (infer.GPU, bool) {
	switch {
	case strings.HasPrefix(gpu, "RTX A6000"):
		return RTXA6000, true
	case strings.HasPrefix(gpu, "RTX 4000 Ada"):
		return RTX4000Ada, true
	}
	return infer.GPU{}, false
}

// ErrNoExperiment is returned for an experiment the artifact does not
// have, or one without a baseline and a HACK row at a rate.
var ErrNoExperiment = errors.New("calib: no such HKVQ experiment")

// Params are the simulator's free parameters for one of the artifact's
// experiments, as Fit finds them.
type Params struct {
	// Experiment is the artifact's workload ("long" or "short").
	Experiment string
	// GPU is the instances' GPU: the datasheet's memory, the bandwidth
	// the artifact's BF16 attention kernel achieves (MicrobenchBandwidth)
	// and VectorOPS replaced by the fitted rate of HACK's per-step work.
	GPU infer.GPU
	// PrefillFLOPS is the prefill's achieved throughput: a prompt of s
	// tokens takes PrefillFLOPs(s) / PrefillFLOPS seconds.
	PrefillFLOPS float64
	// StepSeconds is a decode iteration's time besides reading the
	// batch's KV caches (which the simulator adds at the GPU's bandwidth,
	// DecodeReadsKV): the weights' read and the framework's overheads.
	StepSeconds float64
	// LinkOverhead (s) and LinkBytesPerSec are the KV transfer's fixed cost
	// and effective bandwidth, solved from the lowest rate's two rows.
	LinkOverhead, LinkBytesPerSec float64
	// CopyBytesPerSec is the rate of the KV's handling outside the
	// artifact's measured transfer window (taking it out of the prefill
	// instance's blocks and installing it in the decode instance's), which
	// the baseline's TTFT shows beyond HACK's and the transfers'
	// difference; it occupies the link with the transfer, or with
	// Structure.StageOnPrefill the prefill step that ends the prompt.
	// +Inf for none.
	CopyBytesPerSec float64
	// KVCapacity is the KV cache one instance holds (vLLM's KV blocks):
	// VLLMKVCapacity, not fitted (see Fit).
	KVCapacity int64
	// StepFormat and FormatStepSeconds are HACK's format and its fixed
	// time per decode step (Structure.FixedFormatStep), fitted to HACK's
	// TPOT; 0 without it.
	StepFormat        string
	FormatStepSeconds float64
	// Structure is the deployment's mechanisms beyond the fitted numbers.
	Structure
}

// Structure is which of the artifact's mechanisms the simulated
// deployment models; all off is the first calibration's model (a FIFO
// link that also carries the KV's handling, HACK's per-step work at a
// fitted rate), Artifact all on.
type Structure struct {
	// FairShare has concurrent transfers split the link's bandwidth
	// (infer.LinkConfig.FairShare), as the artifact's transport does
	// (its sender paces all its connections through one rate limiter, 8
	// MiB at a time); otherwise they queue for it one at a time.
	FairShare bool
	// StageOnPrefill charges the KV's handling outside the measured
	// transfer (CopyBytesPerSec) to the prefill instance's step that
	// ends the prompt (infer.LinkConfig.StageBytesPerSec), as the
	// artifact's connector stages the KV into pinned host memory there;
	// otherwise it occupies the link with the transfer.
	StageOnPrefill bool
	// FixedFormatStep fits HACK's TPOT with a fixed time per decode step
	// (infer.Config.FormatStepSeconds) instead of a rate of its per-step
	// work (the GPU's VectorOPS, which then stays the datasheet's): the
	// artifact's HACK TPOT barely moves with the batch's context.
	FixedFormatStep bool
}

// PrefillFLOPs is the work of a prefill of s tokens of a: 2 FLOPs per
// weight and token outside the embeddings (vLLM computes the logits of the
// last token only) and causal attention's 2 x layers x heads x head dim x
// s^2.
func PrefillFLOPs(a kv.Arch, s int) float64 {
	n := float64(s)
	lin := float64(a.Params - int64(2*a.Vocab*a.Hidden))
	return 2*lin*n + 2*float64(a.Layers*a.Heads*a.HeadDim)*n*n
}

// maxKnot is the longest batch the generated performance curve holds a
// knot for; beyond it the curve extrapolates linearly.
const maxKnot = 32768

// perfTable is the calibrated model's performance table in SplitwiseSim's
// CSV layout, one (model, GPU, TP 1) curve with knots every 256 tokens:
// prompt time PrefillFLOPs / PrefillFLOPS, token time StepSeconds.
func (p Params) perfTable(a kv.Arch) (*infer.PerfTable, error) {
	var b strings.Builder
	b.WriteString("model,hardware,tensor_parallel,prompt_size,batch_size,prompt_time,token_time\n")
	for x := 0; x <= maxKnot; x += 256 {
		x := max(x, 1)
		pt := PrefillFLOPs(a, x) / p.PrefillFLOPS * 1000
		fmt.Fprintf(&b, "%s,%s,1,%d,1,%s,%s\n", a.Name, p.GPU.Name, x,
			strconv.FormatFloat(pt, 'g', 17, 64), strconv.FormatFloat(p.StepSeconds*1000, 'g', 17, 64))
	}
	return infer.ParsePerfTable([]byte(b.String()))
}

// Config is the artifact's deployment with p: Qwen3-8B on one prefill and
// one decode instance of p.GPU (TP 1), vLLM's batch limits (max-num-seqs,
// max-num-batched-tokens; FCFS, so tasks never jump the queue for being
// passed over), a shared link, decode iterations reading their KV caches,
// and p.KVCapacity of KV memory per instance (the model's WeightBytes is
// the rest of the GPU's memory: weights, activations and what vLLM leaves
// free).
func (p Params) Config(e kv.Experiment) (infer.Config, error) {
	a := kv.Qwen3_8B
	perf, err := p.perfTable(a)
	if err != nil {
		return infer.Config{}, err
	}
	m := infer.ModelOf(a)
	m.WeightBytes = p.GPU.MemoryBytes - p.KVCapacity
	inst := func(r infer.Role) infer.InstanceConfig {
		return infer.InstanceConfig{GPU: p.GPU.Name, TP: 1, Role: r, MaxBatchSize: e.MaxNumSeqs,
			MaxBatchTokens: e.MaxModelLen, MaxPreemptions: math.MaxInt32}
	}
	c := infer.Config{Model: m, Perf: perf, GPUs: []infer.GPU{p.GPU},
		Instances:     []infer.InstanceConfig{inst(infer.Prefill), inst(infer.Decode)},
		Link:          infer.LinkConfig{BytesPerSec: 1 / (1/p.LinkBytesPerSec + 1/p.CopyBytesPerSec), Overhead: p.LinkOverhead, Shared: true, FairShare: p.FairShare},
		DecodeReadsKV: true}
	if p.FormatStepSeconds > 0 {
		c.FormatStepSeconds = map[string]float64{p.StepFormat: p.FormatStepSeconds}
	}
	if p.StageOnPrefill {
		c.Link.BytesPerSec = p.LinkBytesPerSec
		if !math.IsInf(p.CopyBytesPerSec, 1) {
			c.Link.StageBytesPerSec = p.CopyBytesPerSec
		}
	}
	return c, nil
}

// Outcome is a replay's means, in the artifact's terms.
type Outcome struct {
	// JCT and P99JCT are the mean and 99th percentile (linear) of the
	// requests' end-to-end latencies (s).
	JCT, P99JCT float64
	// TTFT is the client's time to first token: until the decode
	// instance's first iteration ends, after the KV transfer, as the
	// artifact's client sees it through its proxy (s).
	TTFT float64
	// TPOT is the mean decode iteration of a request (s per token).
	TPOT float64
	// KVTransfer is the mean transfer time (overhead and bytes, s).
	KVTransfer float64
	// KVMiB is the mean KV sent per request (MiB).
	KVMiB float64
	// PeakKVUsage is the decode instance's peak KV, every request
	// counted at its full length from its transfer's start to its end,
	// over the instance's KV capacity.
	PeakKVUsage float64
	// FormatShare is the mean share of a request's latency spent on its
	// KV format's work (infer.Summary.FormatShare).
	FormatShare float64
	// Finished counts the finished requests (all of them, unless the run
	// stalled).
	Finished, Requests int
}

// fixedRouter sends every prompt to instance 0 and every decode to
// instance 1, in one format: the artifact's proxy with one instance each.
type fixedRouter struct{ f kv.Format }

func (r fixedRouter) Route(*infer.View, infer.Request) (infer.Decision, error) {
	return infer.Decision{Prefill: 0, Decode: 1, Format: r.f}, nil
}

// Replay runs the artifact's replay of experiment e at rate (its workload,
// kv.HKVQWorkload, without the warm-up requests, which were sent and
// finished before it) in format f with p.
func (p Params) Replay(e kv.Experiment, rate float64, f kv.Format) (Outcome, error) {
	w := kv.HKVQWorkload(e.Name, rate)
	if len(w) == 0 {
		return Outcome{}, fmt.Errorf("%w: %s at %g req/s", ErrNoExperiment, e.Name, rate)
	}
	reqs := make([]infer.Request, len(w))
	for i, r := range w {
		reqs[i] = infer.Request{ID: i, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output}
	}
	cfg, err := p.Config(e)
	if err != nil {
		return Outcome{}, err
	}
	s, err := infer.New(cfg, reqs)
	if err != nil {
		return Outcome{}, err
	}
	sum, err := s.Run(fixedRouter{f})
	if err != nil {
		return Outcome{}, fmt.Errorf("replay %s at %g req/s in %v: %w", e.Name, rate, f, err)
	}
	return outcome(s.Results(), sum, cfg, f, p.KVCapacity), nil
}

func outcome(res []infer.Result, sum infer.Summary, cfg infer.Config, f kv.Format, capacity int64) Outcome {
	o := Outcome{JCT: sum.E2E.Mean, P99JCT: sum.E2E.P99, FormatShare: sum.FormatShare,
		Finished: sum.Finished, Requests: sum.Requests}
	type mark struct {
		t     float64
		bytes int64
	}
	var marks []mark
	n := 0.0
	for _, r := range res {
		if math.IsNaN(r.End) {
			continue
		}
		tpot := (r.End - r.DecodeStart) / float64(r.Output-1)
		o.TPOT += tpot
		o.TTFT += r.DecodeStart - r.Arrival + tpot
		o.KVTransfer += r.TransferEnd - r.TransferStart
		o.KVMiB += float64(r.TransferBytes) / (1 << 20)
		held := int64(r.Prompt+r.Output) * cfg.Model.KVBytesPerToken
		if f != kv.FP16() {
			held = f.StoredBytes(cfg.Model.Arch, r.Prompt+r.Output)
		}
		marks = append(marks, mark{r.TransferStart, held}, mark{r.End, -held})
		n++
	}
	if n > 0 {
		o.TPOT /= n
		o.TTFT /= n
		o.KVTransfer /= n
		o.KVMiB /= n
	}
	// Ends before starts at one instant: a request leaving makes room.
	slices.SortFunc(marks, func(a, b mark) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return int(min(max(a.bytes-b.bytes, -1), 1))
	})
	var cur, peak int64
	for _, m := range marks {
		cur += m.bytes
		peak = max(peak, cur)
	}
	o.PeakKVUsage = float64(peak) / float64(capacity)
	return o
}

// runsAt returns the experiment's baseline and HACK rows at rate.
func runsAt(e kv.Experiment, rate float64) (base, hack kv.MeasuredRun, err error) {
	var nb, nh int
	for _, r := range kv.HKVQMeasured() {
		if r.Experiment != e.Name || math.Abs(r.Rate-rate) > 1e-9 {
			continue
		}
		switch r.Method {
		case "baseline":
			base, nb = r, nb+1
		case "hack":
			hack, nh = r, nh+1
		}
	}
	if nb != 1 || nh != 1 {
		return base, hack, fmt.Errorf("%w: %s at %g req/s: %d baseline and %d HACK rows", ErrNoExperiment, e.Name, rate, nb, nh)
	}
	return base, hack, nil
}

// Experiment returns the artifact's experiment named name.
func Experiment(name string) (kv.Experiment, error) {
	for _, e := range kv.HKVQExperiments() {
		if e.Name == name {
			return e, nil
		}
	}
	return kv.Experiment{}, fmt.Errorf("%w: %q", ErrNoExperiment, name)
}

// FitRounds is how many times Fit goes round its fits: each parameter is
// fitted with the others at their last values, and the KV capacity moves
// the times of the others.
const FitRounds = 4

// Fit finds the simulator's free parameters for experiment e from its
// lowest request rate's two rows only (baseline and HACK), in that order:
//
//  1. the link's overhead and effective bandwidth, the line through the
//     two rows' mean KV transfer times at the mean bytes the simulator
//     sends per request (exact: two points, two unknowns);
//  2. then FitRounds times: StepSeconds so that the baseline's simulated
//     mean TPOT is the measured one; PrefillFLOPS so that HACK's mean TTFT
//     is (HACK's small caches never wait for memory); CopyBytesPerSec so
//     that the baseline's mean TTFT is (infinite if it already is without
//     it); and the GPU's VectorOPS (the rate of HACK's per-step work) so
//     that HACK's mean TPOT is (kept at the datasheet's FP32 rate if HACK
//     is as fast as the datasheet allows), or, with
//     Structure.FixedFormatStep, HACK's fixed time per decode step
//     (FormatStepSeconds) so that it is, VectorOPS at the datasheet's.
//
// With Structure.StageOnPrefill the link carries the measured transfer
// alone, and each round first moves the line's two targets (by the ratio
// of the measured mean transfer to the simulated one) until the
// simulated transfers, overlapping on a fair-share link and with HACK's
// decoding on arrival, take the measured times. Fit uses the Artifact
// structure.
// The memory bandwidth comes from the artifact's kernel microbenchmark
// (MicrobenchBandwidth) and the KV capacity from vLLM's memory budget
// (VLLMKVCapacity): the lowest rate's peak KV usage does not pin the
// capacity down (a simulated short-prompt baseline peaks at 95-100% for
// every capacity up to 2.7 GB). The JCT is never fitted: at the lowest
// rate, too, it is the simulator's prediction from TTFT, TPOT and the
// workload. Fit is deterministic.
func Fit(e kv.Experiment) (Params, error) { return FitWith(e, Artifact) }

// Artifact is the structure of the artifact's serving path, read from its
// code (github Zeyu-ZEYU/HKVQ @ fc16e215, hack/vllm_plugin): its
// transport's shared rate limiter (FairShare), its connector's staging
// within the prefill step (StageOnPrefill) and HACK's TPOT, which barely
// moves with the load (FixedFormatStep). Fit and Compare use it.
var Artifact = Structure{FairShare: true, StageOnPrefill: true, FixedFormatStep: true}

// FitWith is Fit for a deployment with the mechanisms s.
func FitWith(e kv.Experiment, s Structure) (Params, error) {
	spec, ok := specOf(e.GPU)
	if !ok {
		return Params{}, fmt.Errorf("%w: no datasheet for %q", ErrNoExperiment, e.GPU)
	}
	rate := slices.Min(e.Rates)
	base, hack, err := runsAt(e, rate)
	if err != nil {
		return Params{}, err
	}
	a := kv.Qwen3_8B
	bb, bh, overhead, bw := linkLine(e, rate, base, hack)
	p := Params{Experiment: e.Name, GPU: spec,
		LinkBytesPerSec: bw, LinkOverhead: overhead,
		PrefillFLOPS: spec.FP16FLOPS / 2, CopyBytesPerSec: math.Inf(1), StepSeconds: float64(a.WeightBytes()) / spec.HBMBytesPerSec,
		KVCapacity: VLLMKVCapacity(e, spec), Structure: s}
	if bw, ok := MicrobenchBandwidth(e.GPU); ok {
		p.GPU.HBMBytesPerSec = bw
	}
	if !(bw > 0) || p.LinkOverhead < 0 {
		return p, fmt.Errorf("calib: %s: link fit %g bytes/s, overhead %g s", e.Name, bw, p.LinkOverhead)
	}
	replay := func(q Params, f kv.Format) Outcome {
		o, err := q.Replay(e, rate, f)
		if err != nil || o.Finished < o.Requests {
			return Outcome{JCT: math.Inf(1), TTFT: math.Inf(1), TPOT: math.Inf(1)}
		}
		return o
	}
	tb, th := base.KVTransfer, hack.KVTransfer
	for range FitRounds {
		if s.StageOnPrefill {
			// The link carries the measured transfer only: move the line's
			// targets until the simulated mean transfers, shared and with
			// HACK's decoding on arrival, are the measured ones.
			tb *= base.KVTransfer / replay(p, kv.FP16()).KVTransfer
			th *= hack.KVTransfer / replay(p, hack.Format).KVTransfer
			p.LinkBytesPerSec = (bb - bh) / (tb - th)
			p.LinkOverhead = tb - bb/p.LinkBytesPerSec
			if !(p.LinkBytesPerSec > 0) || p.LinkOverhead < 0 {
				return p, fmt.Errorf("calib: %s: link fit %g bytes/s, overhead %g s", e.Name, p.LinkBytesPerSec, p.LinkOverhead)
			}
		}
		p.StepSeconds = bisect(1e-4, 1, false, func(x float64) float64 {
			q := p
			q.StepSeconds = x
			return replay(q, kv.FP16()).TPOT - base.TPOT
		})
		p.PrefillFLOPS = bisect(1e11, spec.FP16FLOPS, true, func(x float64) float64 {
			q := p
			q.PrefillFLOPS = x
			return hack.TTFT - replay(q, hack.Format).TTFT
		})
		q := p
		q.CopyBytesPerSec = math.Inf(1)
		if replay(q, kv.FP16()).TTFT >= base.TTFT {
			p.CopyBytesPerSec = math.Inf(1)
		} else {
			p.CopyBytesPerSec = bisect(1e8, 1e13, true, func(x float64) float64 {
				q := p
				q.CopyBytesPerSec = x
				return base.TTFT - replay(q, kv.FP16()).TTFT
			})
		}
		if s.FixedFormatStep {
			p.StepFormat = hack.Format.Name()
			q = p
			q.FormatStepSeconds = 0
			if replay(q, hack.Format).TPOT >= hack.TPOT {
				p.FormatStepSeconds = 0
			} else {
				p.FormatStepSeconds = bisect(0, 0.1, false, func(x float64) float64 {
					q := p
					q.FormatStepSeconds = x
					return replay(q, hack.Format).TPOT - hack.TPOT
				})
			}
			continue
		}
		q = p
		q.GPU.VectorOPS = spec.VectorOPS
		if replay(q, hack.Format).TPOT >= hack.TPOT {
			p.GPU.VectorOPS = spec.VectorOPS
		} else {
			p.GPU.VectorOPS = bisect(1e9, spec.VectorOPS, true, func(x float64) float64 {
				q := p
				q.GPU.VectorOPS = x
				return hack.TPOT - replay(q, hack.Format).TPOT
			})
		}
	}
	return p, nil
}

// linkLine is FitWith's first step: the mean KV bytes the simulator sends
// per request of e's workload at rate in FP16 (bb) and in HACK's format
// (bh), and the line through the two rows' mean transfer times at them,
// its overhead (s) and bandwidth (bytes/s). Without
// Structure.StageOnPrefill the fit keeps this link.
func linkLine(e kv.Experiment, rate float64, base, hack kv.MeasuredRun) (bb, bh, overhead, bw float64) {
	a := kv.Qwen3_8B
	w := kv.HKVQWorkload(e.Name, rate)
	for _, r := range w {
		bb += float64(int64(r.Prompt) * a.KVBytesPerToken())
		bh += float64(hack.Format.TransferBytes(a, r.Prompt))
	}
	bb /= float64(len(w))
	bh /= float64(len(w))
	bw = (bb - bh) / (base.KVTransfer - hack.KVTransfer)
	return bb, bh, base.KVTransfer - bb/bw, bw
}

// VLLMNonTorchBytes is what vLLM's budget sets aside besides the weights
// and the activations of its profiling run: the CUDA context and the
// cuBLAS and NCCL workspaces, 512 MiB (an estimate: the artifact prints no
// vLLM log).
const VLLMNonTorchBytes = 512 << 20

// VLLMActivationBytesPerToken is the peak activation memory of a's
// forward pass per batched token, as vLLM's profiling run at
// max-num-batched-tokens finds it, estimated as the tensors alive at the
// MLP in 16 bits: the residual and normed hidden states (2 x Hidden), the
// QKV projection ((Heads + 2 KVHeads) x HeadDim), the gate-up output and
// the activation (3 x Intermediate). 102,400 bytes for Qwen3-8B.
func VLLMActivationBytesPerToken(a kv.Arch) int64 {
	return 2 * int64(2*a.Hidden+(a.Heads+2*a.KVHeads)*a.HeadDim+3*a.Intermediate)
}

// VLLMKVCapacity is the KV cache vLLM gives one instance of e on gpu: the
// --gpu-memory-utilization share of its memory less the weights, the
// profiling run's activations at --max-num-batched-tokens and
// VLLMNonTorchBytes. 2.00 GB on the RTX 4000 Ada (short prompts), 28.4 GB
// on the RTX A6000 (long).
func VLLMKVCapacity(e kv.Experiment, gpu infer.GPU) int64 {
	a := kv.Qwen3_8B
	return int64(e.GPUMemoryUtilization*float64(gpu.MemoryBytes)) - a.WeightBytes() -
		int64(e.MaxModelLen)*VLLMActivationBytesPerToken(a) - VLLMNonTorchBytes
}

// MicrobenchBandwidth is the memory bandwidth the artifact's BF16 decode
// attention achieves on gpu (kv.HKVQMicrobench, "bf16" rows): the least-
// squares slope of a step's time against the KV bytes one layer of
// Llama-3.1-70B's heads reads (8 KV heads x 128 x 2 (K and V) x 2 bytes a
// token); the intercept is the kernel's launch. About 711 GB/s on the RTX
// A6000 (datasheet 768) and 335 GB/s on the RTX 4000 Ada (360).
func MicrobenchBandwidth(gpu string) (float64, bool) {
	a := kv.Llama31_70B
	perToken := float64(2 * a.KVHeads * a.HeadDim * 2)
	var xs, ys []float64
	for _, k := range kv.HKVQMicrobench() {
		if k.Method == "bf16" && strings.HasPrefix(gpu, k.GPU) {
			xs = append(xs, float64(k.KVTokens)*perToken)
			ys = append(ys, k.StepMicros*1e-6)
		}
	}
	if len(xs) < 2 {
		return 0, false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if !(sxy > 0) {
		return 0, false
	}
	return sxx / sxy, true
}

// bisect finds x in [lo, hi] where the increasing function g crosses 0,
// by 40 halvings (of log x when logScale); it returns an end if g keeps
// one sign.
func bisect(lo, hi float64, logScale bool, g func(float64) float64) float64 {
	to, from := func(x float64) float64 { return x }, func(x float64) float64 { return x }
	if logScale {
		to, from = math.Log, math.Exp
	}
	l, h := to(lo), to(hi)
	for range 40 {
		m := (l + h) / 2
		if g(from(m)) < 0 {
			l = m
		} else {
			h = m
		}
	}
	return from((l + h) / 2)
}

// Row is one of the artifact's measured rows beside Drover's replay of
// it.
type Row struct {
	// Experiment, Rate and Method name the row; Fitted marks the lowest
	// rate's, whose TTFT and TPOT (not JCT) were fitted.
	Experiment string
	Rate       float64
	Method     string
	Fitted     bool
	// Measured is the artifact's row, Drover the replay's outcome.
	Measured kv.MeasuredRun
	Drover   Outcome
}

// JCTError is Drover's mean JCT over the measured one, minus 1.
func (r Row) JCTError() float64 { return r.Drover.JCT/r.Measured.JCT - 1 }

// P99Error is Drover's P99 JCT over the measured one, minus 1.
func (r Row) P99Error() float64 { return r.Drover.P99JCT/r.Measured.P99JCT - 1 }

// Compare fits each experiment on its lowest rate (Fit) and replays every
// measured row with the fitted parameters, in the order of
// kv.HKVQMeasured.
func Compare() ([]Row, map[string]Params, error) { return CompareWith(Artifact) }

// CompareWith is Compare with the deployment's structure s.
func CompareWith(s Structure) ([]Row, map[string]Params, error) {
	params := map[string]Params{}
	var rows []Row
	for _, m := range kv.HKVQMeasured() {
		e, err := Experiment(m.Experiment)
		if err != nil {
			return nil, nil, err
		}
		p, ok := params[e.Name]
		if !ok {
			if p, err = FitWith(e, s); err != nil {
				return nil, nil, err
			}
			params[e.Name] = p
		}
		o, err := p.Replay(e, m.Rate, m.Format)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, Row{Experiment: m.Experiment, Rate: m.Rate, Method: m.Method,
			Fitted: m.Rate == slices.Min(e.Rates), Measured: m, Drover: o})
	}
	return rows, params, nil
}

// Reduction is HACK's JCT reduction against the baseline, 1 - hack/base.
func Reduction(base, hack float64) float64 { return 1 - hack/base }
