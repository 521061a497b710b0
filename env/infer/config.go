package infer

import (
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/infer/kv"
)

// ErrBadConfig is returned by New for a configuration no simulation can
// run.
var ErrBadConfig = errors.New("infer: bad config")

// Model is the served LLM, as the simulator needs it: the name its
// performance-table rows carry, its weights (which occupy every instance's
// memory) and the KV cache one token holds.
type Model struct {
	// Name is the model's name in the performance table ("llama2-70b").
	Name string
	// WeightBytes is the size of the weights, held once per instance
	// (split over its TP GPUs).
	WeightBytes int64
	// KVBytesPerToken is the KV cache of one token over all layers, in
	// bytes: 2 (K and V) x layers x KV heads x head dim x bytes per value.
	// ModelOf takes it from a package kv architecture.
	KVBytesPerToken int64
	// Arch is the model's architecture (package kv), which KV formats
	// other than the dense one need to size and cost a cache; the zero
	// Arch allows only the dense format.
	Arch kv.Arch
}

// Llama2_70B is llama2-70b as SplitwiseSim models it
// (configs/model_repo/architectures/llama2-70b.yaml and
// sizes/llama2-70b-fp16.yaml): 135e9 bytes of weights, and a KV cache of
// 2 x hidden 8192 x 80 layers x 2 bytes = 2,621,440 bytes per token
// (request.py, estimate_kv_cache_size). SplitwiseSim counts all 64 heads;
// the real model's grouped-query attention (8 KV heads) holds an eighth of
// that, 327,680 bytes: use Llama2_70BGQA outside the faithful mode.
var Llama2_70B = Model{Name: "llama2-70b", WeightBytes: 135_000_000_000, KVBytesPerToken: 2 * 8192 * 80 * 2}

// Llama2_70BGQA is llama2-70b with its real KV cache: 2 x 80 layers x 8 KV
// heads x 128 head dim x 2 bytes = 327,680 bytes per token (as
// ModelOf(kv.Llama2_70B) gives), with SplitwiseSim's 135e9 bytes of
// weights.
var Llama2_70BGQA = Model{Name: "llama2-70b", WeightBytes: 135_000_000_000, KVBytesPerToken: 2 * 80 * 8 * 128 * 2}

// ModelOf is the model of architecture a (package kv) in its 16-bit dense
// KV format: its name (the performance table's key), its weights (Params x
// DTypeBytes) and a.KVBytesPerToken().
func ModelOf(a kv.Arch) Model {
	return Model{Name: a.Name, WeightBytes: a.WeightBytes(), KVBytesPerToken: a.KVBytesPerToken(), Arch: a}
}

// Role is what an instance was deployed for. The simulator lets any
// instance run either phase; routers read the role to build their pools.
type Role uint8

// The roles.
const (
	// Colocated instances run both phases of the requests routed to them
	// (the non-disaggregated baseline).
	Colocated Role = iota
	// Prefill instances run prompts (Splitwise's "prompt" machines).
	Prefill
	// Decode instances generate tokens (Splitwise's "token" machines).
	Decode
)

func (r Role) String() string {
	switch r {
	case Colocated:
		return "colocated"
	case Prefill:
		return "prefill"
	case Decode:
		return "decode"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// InstanceConfig is one serving instance: a copy of the model on TP GPUs
// of one type, with its batching limits.
type InstanceConfig struct {
	// GPU names the GPU type (GPUs).
	GPU string
	// TP is the tensor parallelism: the instance's GPUs.
	TP int
	// Role is what the instance was deployed for.
	Role Role
	// MaxBatchSize bounds the tasks in one iteration (SplitwiseSim 512).
	MaxBatchSize int
	// MaxBatchTokens bounds the tokens of one iteration, a prompt counting
	// its prompt tokens and a decode one (SplitwiseSim 2048).
	MaxBatchTokens int
	// MaxPreemptions is how often a task may be passed over before it is
	// taken first (SplitwiseSim 4).
	MaxPreemptions int
}

// LinkConfig is the network between instances that carries KV caches from
// a prefill instance to a decode instance.
type LinkConfig struct {
	// BytesPerSec is the link's bandwidth.
	BytesPerSec float64
	// Overhead is a fixed cost per transfer (s), paid before the bytes.
	Overhead float64
	// Shared makes it one link that carries one transfer at a time, in
	// arrival order, the others queued. Without it every transfer has the
	// whole bandwidth to itself at once (SplitwiseSim's DummyLink, one per
	// request).
	Shared bool
	// RetryDelay is how long a transfer waits before it looks again for
	// room in the destination's memory (SplitwiseSim's Link.retry_delay,
	// 1 s); 0 means 1 s.
	RetryDelay float64
	// FairShare, with Shared, makes the one link carry every transfer
	// whose KV cache fits its destination at once, the transfers under way
	// splitting the bandwidth equally (processor sharing), each after its
	// own Overhead; they wait for memory in arrival order. This is how
	// TCP pulls paced by one sender-side rate limiter share a link (the
	// HKVQ artifact's transport, linkshare.go). Without it a shared link
	// sends one transfer at a time at the whole bandwidth.
	FairShare bool
	// StageBytesPerSec is how fast a prefill instance copies a finished
	// prompt's KV cache out for its transfer, within the prompt's
	// iteration: the transfer's bytes / StageBytesPerSec are added to it
	// (the HKVQ artifact stages the KV into pinned host memory at the end
	// of the prompt's step, and the step waits for the copy). 0 for none.
	StageBytesPerSec float64
}

// SLO holds latency objectives; a zero field is no objective.
type SLO struct {
	// TTFT is the objective on time to first token (s).
	TTFT float64
	// TPOT is the objective on time per output token after the first (s).
	TPOT float64
	// E2E is the objective on end-to-end latency (s).
	E2E float64
}

// Config is a deployment to simulate.
type Config struct {
	// Model is the served model.
	Model Model
	// Instances are the serving instances, in the order routers see them.
	Instances []InstanceConfig
	// Perf is the measured performance table.
	Perf *PerfTable
	// Link is the network between instances.
	Link LinkConfig
	// DecodeReadsKV adds to every decode iteration the time to read the
	// KV cache of the batch's requests from GPU memory (their context
	// tokens x Model.KVBytesPerToken / (TP x the GPU's bandwidth)), on top
	// of the measured curve, which is a function of the batch size only.
	// Off in the SplitwiseSim-faithful presets.
	DecodeReadsKV bool
	// SLO is the objectives SLO attainment is measured against.
	SLO SLO
	// GPUs are GPU types of this deployment beyond the catalogue (the
	// package's GPUs), looked up first by name: a type fitted to
	// measurements (env/infer/calib) or a user's own.
	GPUs []GPU
	// RetryUnfit keeps a request whose KV cache can never fit its
	// instances (its prompt's beyond its prefill instance's memory less
	// the weights, or its whole cache beyond its decode instance's), as
	// SplitwiseSim does: its transfer then retries, or it never runs, and
	// it may hold up the requests behind it; once nothing else can run
	// the run ends with ErrStalled naming it. The SplitwiseSim
	// presets set it. Without it Apply rejects such a request
	// (Result.Rejected, Summary.Rejected) and Run ends with ErrRejected.
	RetryUnfit bool
	// FormatStepSeconds is a fixed time, by KV format name
	// (kv.Format.Name), that a decode iteration pays once when its batch
	// holds a decode in that format (the largest if several), besides
	// the format's work per token: the kernel launches and framework work
	// a format adds to every step whatever the batch and its contexts.
	// Counted as format time (Result.FormatTime).
	FormatStepSeconds map[string]float64
}

// lookupGPU finds the GPU type named name among c.GPUs, then in the
// catalogue (LookupGPU).
func (c *Config) lookupGPU(name string) (GPU, error) {
	for _, g := range c.GPUs {
		if g.Name == name {
			return g, nil
		}
	}
	return LookupGPU(name)
}

// Preset cluster limits of SplitwiseSim's start states
// (configs/start_state/baseline.yaml and splitwise.yaml).
const (
	SplitwiseMaxBatchSize   = 512
	SplitwiseMaxBatchTokens = 2048
	SplitwiseMaxPreemptions = 4
)

// SplitwiseTransferBytesPerSec is mixed_pool's KV transfer bandwidth,
// 200 GiB/s (configs/orchestrator_repo/schedulers/mixed_pool.yml,
// transfer_bandwidth: 200, times 1024^3 in scheduler.py).
const SplitwiseTransferBytesPerSec = 200 * (1 << 30)

func splitwiseInstance(gpu string, role Role) InstanceConfig {
	return InstanceConfig{GPU: gpu, TP: 8, Role: role, MaxBatchSize: SplitwiseMaxBatchSize,
		MaxBatchTokens: SplitwiseMaxBatchTokens, MaxPreemptions: SplitwiseMaxPreemptions}
}

// SplitwiseBaseline is SplitwiseSim's Baseline-H100 deployment: n DGX-H100
// machines, one colocated TP8 instance each (start_state baseline,
// instance_type Splitwise), llama2-70b. Route it with token_jsq.
func SplitwiseBaseline(perf *PerfTable, n int) Config {
	c := Config{Model: Llama2_70B, Perf: perf, Link: LinkConfig{BytesPerSec: SplitwiseTransferBytesPerSec}, RetryUnfit: true}
	for range n {
		c.Instances = append(c.Instances, splitwiseInstance("h100-80gb", Colocated))
	}
	return c
}

// SplitwiseHA is SplitwiseSim's Splitwise-HA deployment: prompt DGX-H100
// machines and token DGX-A100 machines, one TP8 instance each
// (start_state splitwise, split_type heterogeneous), llama2-70b, KV caches
// over per-request links of 200 GiB/s. The A100 instances come first, as
// SplitwiseSim numbers them (its cluster lists dgx-a100 before dgx-h100).
// Route it with mixed_pool.
func SplitwiseHA(perf *PerfTable, prompt, token int) Config {
	c := Config{Model: Llama2_70B, Perf: perf, Link: LinkConfig{BytesPerSec: SplitwiseTransferBytesPerSec}, RetryUnfit: true}
	for range token {
		c.Instances = append(c.Instances, splitwiseInstance("a100-80gb", Decode))
	}
	for range prompt {
		c.Instances = append(c.Instances, splitwiseInstance("h100-80gb", Prefill))
	}
	return c
}

// MaxInstances bounds a deployment's instances.
const MaxInstances = 1 << 16

func (c *Config) validate() error {
	m := c.Model
	switch {
	case c.Perf == nil:
		return fmt.Errorf("%w: no performance table", ErrBadConfig)
	case m.Name == "":
		return fmt.Errorf("%w: no model name", ErrBadConfig)
	case m.WeightBytes < 0 || m.KVBytesPerToken <= 0 || m.KVBytesPerToken > 1<<30:
		return fmt.Errorf("%w: model %s: weights %d bytes, KV %d bytes per token", ErrBadConfig, m.Name, m.WeightBytes, m.KVBytesPerToken)
	case m.Arch != (kv.Arch{}) && (m.Arch.Validate() != nil || m.Arch.KVBytesPerToken() != m.KVBytesPerToken):
		return fmt.Errorf("%w: model %s: architecture %s (%v) does not give its %d KV bytes per token", ErrBadConfig, m.Name, m.Arch.Name, m.Arch.Validate(), m.KVBytesPerToken)
	case len(c.Instances) == 0 || len(c.Instances) > MaxInstances:
		return fmt.Errorf("%w: %d instances, want 1..%d", ErrBadConfig, len(c.Instances), MaxInstances)
	case !(c.Link.BytesPerSec > 0) || math.IsInf(c.Link.BytesPerSec, 0):
		return fmt.Errorf("%w: link bandwidth %v bytes/s", ErrBadConfig, c.Link.BytesPerSec)
	case !(c.Link.Overhead >= 0) || math.IsInf(c.Link.Overhead, 0) || !(c.Link.RetryDelay >= 0) || math.IsInf(c.Link.RetryDelay, 0):
		return fmt.Errorf("%w: link overhead %v s, retry delay %v s", ErrBadConfig, c.Link.Overhead, c.Link.RetryDelay)
	case !(c.Link.StageBytesPerSec >= 0) || math.IsInf(c.Link.StageBytesPerSec, 0):
		return fmt.Errorf("%w: link staging %v bytes/s", ErrBadConfig, c.Link.StageBytesPerSec)
	case !validSteps(c.FormatStepSeconds):
		return fmt.Errorf("%w: format step times %v", ErrBadConfig, c.FormatStepSeconds)
	case c.Link.FairShare && !c.Link.Shared:
		return fmt.Errorf("%w: a fair-share link must be shared (LinkConfig.FairShare without Shared)", ErrBadConfig)
	case !(c.SLO.TTFT >= 0 && c.SLO.TPOT >= 0 && c.SLO.E2E >= 0):
		return fmt.Errorf("%w: SLO %+v", ErrBadConfig, c.SLO)
	}
	for i, ic := range c.Instances {
		g, err := c.lookupGPU(ic.GPU)
		if err != nil {
			return fmt.Errorf("instance %d: %w", i, err)
		}
		if !(g.MemoryBytes > 0 && g.HBMBytesPerSec > 0 && g.FP16FLOPS > 0 && g.VectorOPS > 0 && g.INT8OPS >= 0) || math.IsInf(g.HBMBytesPerSec+g.FP16FLOPS+g.VectorOPS+g.INT8OPS, 0) {
			return fmt.Errorf("%w: instance %d: GPU %s: %+v", ErrBadConfig, i, g.Name, g)
		}
		switch {
		case ic.TP < 1 || ic.TP > 64:
			return fmt.Errorf("%w: instance %d: TP %d, want 1..64", ErrBadConfig, i, ic.TP)
		case ic.MaxBatchSize < 1 || ic.MaxBatchTokens < 1 || ic.MaxPreemptions < 0:
			return fmt.Errorf("%w: instance %d: batch limits %d tasks, %d tokens, %d preemptions", ErrBadConfig, i, ic.MaxBatchSize, ic.MaxBatchTokens, ic.MaxPreemptions)
		case ic.Role > Decode:
			return fmt.Errorf("%w: instance %d: role %v", ErrBadConfig, i, ic.Role)
		case m.WeightBytes >= g.MemoryBytes*int64(ic.TP):
			return fmt.Errorf("%w: instance %d: %s weights (%d bytes) do not fit %d x %s", ErrBadConfig, i, m.Name, m.WeightBytes, ic.TP, g.Name)
		}
		if len(c.Perf.tps(m.Name, "a100-80gb")) == 0 && !c.Perf.Has(m.Name, g.Name, ic.TP) && len(c.Perf.tps(m.Name, g.Name)) == 0 {
			return fmt.Errorf("%w: instance %d: no measured rows for %s on %s to calibrate from", ErrBadConfig, i, m.Name, g.Name)
		}
	}
	return nil
}
