package mm

import (
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/infer"
)

// ErrBadConfig is returned by New for a configuration no simulation can
// run.
var ErrBadConfig = errors.New("mm: bad config")

// Pool is the kind of an instance.
type Pool uint8

// The pools.
const (
	// Mono instances run every stage of the requests routed to them (the
	// monolithic baseline, vLLM-style): CPU preprocessing, then the vision
	// encoder inside the prefill iteration, prefill and decode.
	Mono Pool = iota
	// Image instances preprocess and encode images (ModServe's Image
	// Instances) and send the image tokens to a text instance.
	Image
	// Text instances run prefill and decode (ModServe's Text Instances).
	Text
	numPools
)

func (p Pool) String() string {
	switch p {
	case Mono:
		return "mono"
	case Image:
		return "image"
	case Text:
		return "text"
	}
	return fmt.Sprintf("Pool(%d)", uint8(p))
}

// Link is the network that carries image tokens from image instances to a
// text instance. As in ModServe (its section 4.3) the text instance pulls
// a request's image tokens once all its images are encoded: one transfer
// of images x Model.EmbeddingBytes, taking Latency + bytes / BytesPerSec,
// every transfer on its own.
type Link struct {
	// Name says which link it is ("rdma", "tcp").
	Name string
	// Latency is a fixed cost per transfer (s).
	Latency float64
	// BytesPerSec is the bandwidth a transfer gets.
	BytesPerSec float64
}

// RDMA is one 200 Gb/s HDR InfiniBand NIC of a DGX-A100 (8 per server, one
// per GPU; NVIDIA's DGX A100 datasheet) used with GPUDirect RDMA, with a
// 10 microsecond setup (an assumption: the usual verbs latency). One
// Llama-3.2-11B image (52 MB) takes 2.1 ms, one InternVL-2.5 image
// (15.7 MB) 0.6 ms; ModServe measured a P99 of 5 ms a request over
// InfiniBand (its Fig. 20).
var RDMA = Link{Name: "rdma", Latency: 10e-6, BytesPerSec: 25e9}

// TCP is the transfer over TCP on Ethernet: ModServe measured a P50 of
// 100 ms and a P99 of 180 ms a request (its Fig. 20, InternVL-2.5-26B);
// the link takes the P50 as its per-transfer latency and 12.5 GB/s
// (100 Gb/s Ethernet, an assumption) for the bytes.
var TCP = Link{Name: "tcp", Latency: 0.1, BytesPerSec: 12.5e9}

// SLO is the objectives attainment is measured against. As in ModServe
// (its section 5.1) they are the TTFT and TBT of an isolated run on the
// monolith of a single text-only request and of a single text-image
// request with one image, times a factor: Sim.Objectives computes them,
// for the trace's median prompt of each kind.
type SLO struct {
	// Factor scales the isolated runs' latencies; 0 is no objective.
	// ModServe's value is in its figures, not its text.
	Factor float64
}

// Objectives are the latency objectives of a run (SLO), in seconds.
type Objectives struct {
	// TTFTText and TTFTImage are the TTFT objectives of requests without
	// and with images; TBT the objective on a request's mean time between
	// tokens. +Inf is none.
	TTFTText, TTFTImage, TBT float64
}

// Config is a deployment to simulate.
type Config struct {
	// Model is the served model.
	Model Model
	// GPU names the GPU type of every instance (infer.GPUs, e.g.
	// "a100-80gb").
	GPU string
	// Instances is how many instances each pool starts with, by Pool
	// (Mono, Image, Text). A deployment is monolithic (Mono > 0, the
	// others 0) or decoupled (Image > 0 and Text > 0, Mono 0).
	Instances [3]int
	// TP is each pool's tensor parallelism (GPUs an instance).
	TP [3]int
	// StartupSec is how long an instance added by a scaling action takes
	// to start (load weights, warm up) before it takes requests, by pool.
	StartupSec [3]float64
	// Link carries image tokens from image to text instances.
	Link Link
	// MaxEncodeBatch bounds the images of one vision-encoder batch on an
	// image instance (ModServe batches little).
	MaxEncodeBatch int
	// MaxBatchSize bounds the requests a language-model instance holds
	// (vLLM's max_num_seqs); MaxBatchTokens the prompt tokens of one
	// prefill iteration (max_num_batched_tokens; a longer prompt runs
	// alone).
	MaxBatchSize, MaxBatchTokens int
	// PreprocessWorkers is the CPU workers (cores) a GPU brings to
	// preprocess images: an instance that takes images has TP times as
	// many, each preprocessing one image at a time.
	PreprocessWorkers int
	// MaxImages bounds a request's images (those beyond are dropped and
	// counted in Summary.CutImages); 0 means what fits the model's context.
	// ModServe's evaluation drew 0 to 16 images a request from its trace
	// (section 5.1): the presets set 16.
	MaxImages int
	// MaxPrompt, when positive, cuts every request's text prompt to that
	// many tokens (counted in Summary.CutTokens): a sensitivity knob for
	// traces whose prompts are longer than a deployment serves.
	MaxPrompt int
	// MemoryUtil is the share of an instance's GPU memory for weights and
	// KV caches (vLLM's gpu_memory_utilization, 0.9).
	MemoryUtil float64
	// Efficiency is what the derived costs assume.
	Efficiency Efficiency
	// PreprocessSec is the CPU time to preprocess one image.
	PreprocessSec float64
	// Costs, when set for a pool, replaces the derived costs of its
	// instances (measured figures).
	Costs [3]*Costs
	// SLO is the objectives attainment is measured against.
	SLO SLO
	// Images says how big the simulated images are: drawn per image
	// (the presets) or all 896x896.
	Images ImageSizes
	// PromptHasImageTokens reads a request's Prompt (the trace's
	// ContextTokens) as its text and its images' tokens in the production
	// model (GPT4oImageTokens of each image's size), as ModServe's
	// section 3.2 reads the trace ("image-text requests have longer median
	// prompts due to image tokens"): the simulator takes them away, keeping
	// at least one text token, and adds the served model's image tokens.
	// False reads it as text tokens only. The presets set it.
	PromptHasImageTokens bool
}

// ImageSizes says how big a simulation's images are.
type ImageSizes struct {
	// Fixed makes every image 896x896 (ModServe's Table 1 example): each
	// is Model.ImageTokens tokens and one Costs.EncodePerImage to encode,
	// the simulator's only behaviour before images were drawn. Otherwise
	// each image's size is ImageSize(Seed, request, image index), its
	// tiles Model.Tiles of it, and its tokens and encoder work follow.
	Fixed bool
	// Seed seeds the draw of the image sizes.
	Seed uint64
}

// DefaultPreprocessSec is the CPU time to preprocess one 896x896 image on
// one core, assumed (ModServe says only that it is a minimal share of
// TTFT and parallel across cores).
const DefaultPreprocessSec = 0.005

// DefaultStartupSec is an instance's start-up time, assumed: about 20 s
// of process and CUDA start and the weights at 2 GB/s a GPU come to 21-26
// s for every instance kind of both models, rounded up (ModServe gives no
// figure).
const DefaultStartupSec = 30

func base(m Model) Config {
	return Config{
		Model: m, GPU: "a100-80gb", TP: [3]int{4, 1, 4},
		StartupSec: [3]float64{DefaultStartupSec, DefaultStartupSec, DefaultStartupSec}, Link: RDMA,
		// Encoding is compute-bound and linear in the batch; ModServe's
		// image instances forgo batching (its section 4.2).
		MaxEncodeBatch: 1,
		MaxBatchSize:   256, MaxBatchTokens: m.MaxContext,
		// A DGX-A100 has 96 cores for 8 GPUs: 12 a GPU.
		PreprocessWorkers: 12,
		MaxImages:         16,
		MemoryUtil:        0.9, Efficiency: DefaultEfficiency, PreprocessSec: DefaultPreprocessSec,
		SLO:                  SLO{Factor: 5},
		PromptHasImageTokens: true,
	}
}

// Monolith is the paper's baseline: n vLLM instances of TP 4 on A100s,
// each running every stage of its requests (n = 32: 16 DGX-A100 servers,
// 128 GPUs).
func Monolith(m Model, n int) Config {
	c := base(m)
	c.Instances[Mono] = n
	return c
}

// Decoupled is ModServe's deployment: images TP-1 image instances and
// texts TP-4 text instances on A100s (the paper's static setup: 48 and
// 20, 128 GPUs).
func Decoupled(m Model, images, texts int) Config {
	c := base(m)
	c.Instances[Image] = images
	c.Instances[Text] = texts
	return c
}

// GPUs is the GPUs the configuration's instances hold at the start.
func (c Config) GPUs() int {
	n := 0
	for p := range numPools {
		n += c.Instances[p] * c.TP[p]
	}
	return n
}

// Decoupled reports whether the deployment has image and text pools.
func (c Config) Decoupled() bool { return c.Instances[Mono] == 0 }

// MaxInstances bounds a pool's instances.
const MaxInstances = 1 << 14

func (c *Config) validate() error {
	if err := c.Model.validate(); err != nil {
		return err
	}
	if _, err := infer.LookupGPU(c.GPU); err != nil {
		return fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	mono, img, txt := c.Instances[Mono], c.Instances[Image], c.Instances[Text]
	switch {
	case mono < 0 || img < 0 || txt < 0 || mono > MaxInstances || img > MaxInstances || txt > MaxInstances:
		return fmt.Errorf("%w: instances %v", ErrBadConfig, c.Instances)
	case mono > 0 && (img > 0 || txt > 0):
		return fmt.Errorf("%w: instances %v: monolithic and decoupled at once", ErrBadConfig, c.Instances)
	case mono == 0 && (img == 0 || txt == 0):
		return fmt.Errorf("%w: instances %v: want monolithic instances, or image and text instances", ErrBadConfig, c.Instances)
	case c.MaxEncodeBatch < 1 || c.MaxBatchSize < 1 || c.MaxBatchTokens < 1 || c.PreprocessWorkers < 1 || c.PreprocessWorkers > 1024 || c.MaxImages < 0 || c.MaxPrompt < 0:
		return fmt.Errorf("%w: limits: encode batch %d, batch %d requests %d tokens, %d preprocess workers, %d images", ErrBadConfig, c.MaxEncodeBatch, c.MaxBatchSize, c.MaxBatchTokens, c.PreprocessWorkers, c.MaxImages)
	case !(c.MemoryUtil > 0 && c.MemoryUtil <= 1):
		return fmt.Errorf("%w: memory utilisation %v", ErrBadConfig, c.MemoryUtil)
	case !(c.Efficiency.Compute > 0 && c.Efficiency.Compute <= 1 && c.Efficiency.Memory > 0 && c.Efficiency.Memory <= 1):
		return fmt.Errorf("%w: efficiency %+v", ErrBadConfig, c.Efficiency)
	case !(c.PreprocessSec >= 0) || math.IsInf(c.PreprocessSec, 0):
		return fmt.Errorf("%w: preprocess %v s", ErrBadConfig, c.PreprocessSec)
	case !(c.Link.Latency >= 0) || math.IsInf(c.Link.Latency, 0) || !(c.Link.BytesPerSec > 0) || math.IsInf(c.Link.BytesPerSec, 0):
		return fmt.Errorf("%w: link %+v", ErrBadConfig, c.Link)
	case !(c.SLO.Factor >= 0) || math.IsInf(c.SLO.Factor, 0):
		return fmt.Errorf("%w: SLO %+v", ErrBadConfig, c.SLO)
	}
	for p := range numPools {
		if c.TP[p] < 1 || c.TP[p] > 64 || !(c.StartupSec[p] >= 0) || math.IsInf(c.StartupSec[p], 0) {
			return fmt.Errorf("%w: pool %v: TP %d, start-up %v s", ErrBadConfig, p, c.TP[p], c.StartupSec[p])
		}
		if c.Costs[p] != nil {
			if err := c.Costs[p].validate(); err != nil {
				return fmt.Errorf("pool %v: %w", p, err)
			}
		}
	}
	return nil
}

// Fixed896 returns c with every image 896x896 and prompts read as text
// tokens only (Config.Images.Fixed, Config.PromptHasImageTokens false):
// the simulator as it was before image sizes were drawn, to reproduce
// earlier results.
func (c Config) Fixed896() Config {
	c.Images.Fixed = true
	c.PromptHasImageTokens = false
	return c
}
