// Package mm is Drover's simulator of multimodal (image + text) inference
// serving, after ModServe (SoCC'25, arXiv 2502.00937; issue 35): a pure,
// deterministic, request-level discrete-event model of monolithic
// instances and of ModServe's decoupled image and text pools, with
// scaling actions. Like env and env/infer it reads no clock, holds no
// random state and does no I/O: the caller hands over the requests (e.g.
// datasets/llm's LMMSynth week, or a replayed Azure LMM 2025 trace); image
// sizes are a hash of Config.Images.Seed and the request (ImageSize).
//
// # Stages
//
// A request brings a prompt, images (Request.Images) and an output
// length. Each image's size is drawn (ImageSize: log-normal, median 500
// px, P95 1,100 px a side, an assumption after ModServe's section 3.2)
// and cut into tiles by the model's own rule (Model.Tiles: Llama-3.2-
// Vision's canvas of up to 4 tiles of 560, 1,601 tokens a tile, its
// encoder always running over 4; InternVL-2.5's dynamic tiling, up to 12
// tiles of 448 and a thumbnail, 256 tokens a tile); Config.Fixed896 makes
// every image 896x896 instead (ModServe's Table 1: 6,404 tokens for
// Llama-3.2-11B-Vision, 7,290 for LLaVA-OneVision, 1,280 for
// InternVL-2.5-26B). The prompt is read as the trace's ContextTokens:
// text and each image's tokens in the production model
// (Config.PromptHasImageTokens, GPT4oImageTokens), which are taken away
// before the served model's own image tokens are added. Its stages:
//
//   - CPU preprocessing of each image, Costs.Preprocess on one of the
//     instance's CPU workers (Config.PreprocessWorkers a GPU).
//   - The vision encoder, on the GPU: a batch of images takes EncodeFixed
//     plus each image's time, EncodePerImage (an 896x896 image's) scaled
//     by the encoder FLOPs of its tiles (compute-bound, linear in the
//     batch, as ModServe measured).
//   - Decoupled only: the image tokens' transfer to the text instance,
//     pulled once the request's last image is encoded (Link: RDMA or TCP).
//   - Prefill, over the text tokens only for a CrossAttention model (its
//     cross-attention layers project the image tokens to keys and values)
//     or over text and image tokens for a DecoderOnly one.
//   - Decode, continuously batched.
//
// A language-model instance runs vLLM's (v0) iteration loop: waiting
// prompts first, as many as fit (Config.MaxBatchSize, MaxBatchTokens, the
// KV memory, each request reserving its prompt and output at admission),
// in a prefill iteration of their own, otherwise one decode iteration of
// every running request. Identical decode iterations run as one event (a
// run): iteration i of a run of batch B costs IterFixed + B x PerToken +
// (KV bytes of the batch, which grow by B tokens an iteration) x
// PerKVByte, summed in closed form, and the run is cut at the end of the
// iteration in flight when a prompt that fits arrives. A monolithic
// instance encodes its prefill batch's images inside that iteration
// (vLLM runs the encoder in the model's forward pass), so encoding blocks
// its decodes; an image instance encodes MaxEncodeBatch images at a time
// (1: ModServe's image instances forgo batching), beside nothing else.
// Queues inside an instance are ordered by the Decision's Priority (FCFS:
// the arrival), ties by arrival.
//
// Every event is O(log n) (binary heaps: events, each instance's queues,
// its running batch by finishing iteration) and a run allocates little
// beyond its per-request state: a week of the LMM 2025 trace (998,047
// requests) takes 1.6-3.1 s on one core, 363 MB (BenchmarkWeek,
// docs/results/multimodal.md).
//
// # Costs
//
// Costs derives each stage's latency from the public model card (Model)
// and the GPU's datasheet (env/infer's GPUs: A100 80GB 312 TFLOPS, 2,039
// GB/s) at an assumed efficiency (DefaultEfficiency: 50% of peak FLOPs,
// 80% of bandwidth), additively: weights read + FLOPs. ModServe's own
// latencies are in figures that could not be read (/work's facts digest,
// docs/results/multimodal.md), so every stage cost is derived, and
// Summary.Derived says so for each. Config.Costs replaces them with
// measured figures when there are some. Preprocessing (5 ms an image on
// one core) and instance start-up (30 s) are assumptions. What ModServe
// states and the costs reproduce: encoding dominates Llama-3.2-11B's
// TTFT and not InternVL's (its 79% and 25%; TestTTFTShares), and
// InternVL's encoder costs about 10x SigLIP's a 896x896 image.
//
// # Deployments and scaling
//
// Monolith(m, 32) is ModServe's baseline, 32 vLLM TP-4 instances on 16
// DGX-A100 servers (128 GPUs); Decoupled(m, 48, 20) is its static
// ModServe, 48 TP-1 image instances and 20 TP-4 text instances (128
// GPUs). AddInstance adds an instance to a pool: it holds its GPUs at
// once and takes requests after Config.StartupSec; RemoveInstance drains
// one (it takes no new requests, finishes its own, then is gone).
// GPUSeconds counts GPUs held. Routers see every instance's state and
// load in the View and must route to active instances only.
//
// Instances keep their index for the simulation's life: View.Instances
// holds every instance ever deployed, the gone ones with State Gone, so
// that a decision, a log line or a served answer names one instance for
// good. View.Live lists the indexes of those not gone, in increasing
// order, and routers scan it rather than Instances: an autoscaled week
// starts thousands of instances (2,300-3,300 a week at the trace's rate)
// while its pools hold tens, and a scan of every instance at every
// arrival made routing the run's largest cost (policies/modserve's
// routers, env/infer/mm/autoscale's driver and PoolSize scan Live; the
// ties among equal loads still go to the lowest index, the same
// instance as before). A gone instance lets go of its queues' buffers.
// A View may also list only some instances, numbered (View.Numbers,
// Started: a policy server's view of a client's live instances); routers
// answer positions in it, and a router that counts instances by number
// reads View.Number and View.Deployed.
//
// What bounds a run is its live instances, not those it has deployed:
// AddInstance refuses more than MaxInstances starting or active
// instances in a pool and more than MaxLive live ones (draining
// included), while gone instances only add up. Their slots are not
// reused, since an index names one instance for good and decides ties (a
// reused low index would move decisions); each keeps 336 bytes (its
// instance and InstanceView): 3 MB for the 8,947 instances ModServe's
// autoscaled Llama week at 5x the trace's rate starts, 34 MB for 100,000,
// against at least 120 bytes of state for each request (600 MB for that
// week's 5M). GPUSeconds alone still visits every instance ever deployed
// (its comment says why); it is called per period and per Summary, not
// per event.
//
// # Usage
//
//	reqs, _ := llm.LMMSynth{}.Generate(rand.NewPCG(1, 1))
//	s, err := mm.New(mm.Decoupled(mm.InternVL25_26B, 48, 20), reqs)
//	sum, err := s.Run(router) // e.g. policies/modserve's
//	fmt.Println(sum.TTFT.P99, sum.SLOAttainment, sum.Derived)
//
// A Router fills a Decision for each arriving request: the monolithic
// or text instance, the image instance of each image (decoupled), and a
// priority. A decoupled request with images may leave its text instance
// Deferred: a TextRouter (RunUntil installs the router when it is one)
// chooses it once the images are encoded, as ModServe does. Result.Dropped
// marks a request that could never fit its instance's memory. An
// autoscaler drives the clock itself:
//
//	for t := period; !s.Done(); t += period {
//		if err := s.RunUntil(t, router); err != nil { ... }
//		// read s.View(), s.Result(i), s.GPUSeconds(); then
//		// s.AddInstance(mm.Text) or s.RemoveInstance(i)
//	}
//	sum := s.Summary()
//
// and a gym environment or a policy server steps request by request:
//
//	for {
//		req, d, err := s.Next()
//		if err == mm.ErrDone {
//			break
//		}
//		router.Route(s.View(), req, d)
//		if err := s.Apply(d); err != nil { ... }
//	}
//	s.RunUntil(math.Inf(1), router) // finish what is in flight
package mm
