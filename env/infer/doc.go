// Package infer is Drover's simulator of LLM inference serving: a pure,
// deterministic, request-level discrete-event model of prefill and decode
// instances on typed GPUs, the link between them and the requests of a
// replayed trace (issue 34). Like package env it has no goroutines, reads
// no clock and does no I/O: the caller reads files and hands over bytes
// (ParsePerfTable) and requests.
//
// # Model
//
// An instance is one copy of the model on TP GPUs of one type (GPUs), with
// TP x the GPU's memory for its weights and the KV caches of its requests.
// A Router sends each arriving request's prompt (prefill) to one instance
// and its decode to the same one (colocated) or another (disaggregated;
// the prompt's KV cache then crosses the link). Instances batch
// continuously, iteration by iteration: each iteration runs waiting
// prompts first, then the decodes, within a batch size and a token budget,
// admitting a new KV cache only while it fits the instance's memory;
// decodes passed over are preempted and come back first. An iteration's
// time comes from measured latency curves (PerfTable): the prompt curve
// at the batch's prompt tokens, the decode curve at its size, and 1.1 x
// the prompt curve for a mix. Identical decode iterations run back to
// back as one event, cut at the next iteration boundary when a request
// arrives, so a run costs events per batch change, not per token. The
// link carries each KV cache in Overhead + bytes / bandwidth, either each
// transfer on its own (SplitwiseSim) or one at a time on a shared, queued
// link; a transfer waits for room in the destination's memory.
//
// A request's KV cache is dense (16-bit) unless its Decision names another
// format of package kv (INT8, KVQuant- and CacheGen-like 2-bit, HACK): the
// format then sizes the cache on the instances and on the link and adds
// its work (kv.Format.Work) to the iterations it runs in, at the GPUs'
// vector throughput, INT8 tensor throughput (HACK's products on its codes)
// and memory bandwidth; Result.FormatTime and Summary.FormatShare report
// the time spent on it. HACK with its prefill attention on the codes
// (kv.Format.QuantizedPrefill) also changes the prompt's own time: its
// attention's share of the measured prompt time, scaled by the kernel's
// products over the dense attention's at the GPU's INT8 and FP16 rates.
//
// # SplitwiseSim-faithful mode
//
// The presets SplitwiseBaseline and SplitwiseHA, with the routers of
// policies/splitwise (token_jsq, mixed_pool), reproduce SplitwiseSim
// (github Mutinifni/splitwise-sim @ 8f99e7d), whose rules the code follows
// and cites file by file: its SplitwiseInstance's batching (instance.py:
// the five passes of select_batch, contiguous iterations and
// pause_iteration, the pass-over counter, prompts never preempted), its
// memory accounting (task.py, flow.py: a prompt holds prompt + 1 tokens of
// KV until its transfer ends, a decode output - 1 more; request.py:
// 2 x hidden x layers x 2 bytes a token), its DatabasePerformanceModel
// (performance_model.py, with scipy's interp1d arithmetic), its
// per-request DummyLink of 200 GiB/s that retries every second when the
// destination is full (interconnect.py), the zero overheads of its
// configurations, and its event heap's tie order (heap.go). Quirks kept on
// purpose: the decode curve is read at the batch's size although its
// knots are prompt_size x batch_size; the pass-over count also grows for
// waiting prompts, which may then jump the queue; the pending queue is
// insorted by keys that change after insertion; TTFT ends when the prompt's
// iteration ends (before any KV transfer).
//
// Where Drover's own settings differ, and why:
//   - LinkConfig.Shared: one link between the pools, transfers queued
//     (SplitwiseSim gives every transfer the whole bandwidth at once);
//     LinkConfig.Overhead: a per-transfer setup cost (SplitwiseSim: none).
//   - LinkConfig.FairShare: the shared link's transfers run at once and
//     split its bandwidth (TCP pulls paced by one sender, as the HKVQ
//     artifact's transport); LinkConfig.StageBytesPerSec: the prefill
//     instance's step copies the finished prompt's KV out for its transfer.
//   - Config.RetryUnfit (set by the presets): SplitwiseSim keeps a request
//     whose KV cache can never fit its instances, and its transfer retries
//     forever; without it Apply rejects the request (ErrRejected). Here
//     the run ends with ErrStalled once only such retries are left, none
//     finding room (SplitwiseSim's would not end).
//   - Config.DecodeReadsKV: decode iterations also pay for reading the
//     batch's KV caches (context x KV bytes per token / (TP x HBM
//     bandwidth)); the measured curve depends on the batch size only, so
//     long contexts would otherwise decode as fast as short ones. The
//     decode then runs one iteration per event.
//   - Model.KVBytesPerToken: the model's real KV size (Llama2_70BGQA:
//     grouped-query attention, an eighth of SplitwiseSim's); package
//     env/infer/kv computes it per architecture and format.
//   - GPU types beyond A100 and H100 are extrapolated (GPU, Summary.
//     Extrapolated); SplitwiseSim knows only its measured ones.
//   - RooflinePerfTable: a table of the same kind without measurements,
//     derived from the GPUs' datasheets and the models' architectures
//     (Roofline, BuiltinRoofline: prefill at 50% of the FP16 peak, decode
//     at 64% of the HBM bandwidth, 16 us a ring all-reduce step), for a
//     machine without SplitwiseSim's table; Summary.Derived marks its runs.
//     Against SplitwiseSim's 104 A100 and H100 rows its prompt times are
//     off by 13.5% at the median (worst 50%) and its token times by 9.3%
//     (worst 55%; TestRooflineFit reports it per model, GPU and TP). It
//     is not SplitwiseSim's: the faithful mode needs the measured table.
//   - TPOT divides by the output's tokens after the first (SplitwiseSim's
//     tbt_times divide by all of them).
//
// # Comparing with SplitwiseSim
//
// scripts/splitwise runs SplitwiseSim itself on the same input and leaves
// per-request CSVs and its wall times; policies/splitwise compares with
// them (tests must not depend on files outside the repository and
// ../shared, so these run only when pointed at the reference directory):
//
//	INFER_SPLITREF=/work/splitref-out go test ./policies/splitwise -run 'TestAgainstSplitwiseSim|TestSpeedAgainstSplitwiseSim' -v
//
// On the Azure 2023 code trace (8,819 requests) both deployments of issue
// 34's acceptance give every request's TTFT and end-to-end latency bit for
// bit as SplitwiseSim does (its detailed/0.csv), and so on the first 10
// minutes of the conv trace. The inputs must be read as SplitwiseSim reads
// them, through pandas' float parser (ParseFloatPandas; ParsePerfTable
// does): correctly rounded values differ from it in the last bit for 4%
// of the performance table's times. The products Python rounds before an
// addition are rounded apart here too (an explicit float64()), so that a
// build that fuses multiply-adds (GOAMD64=v3) gives the same bits.
//
// # Cost
//
// A run costs events per batch change (arrivals, prompt completions,
// decode completions, transfers), each O(batch + waiting) as SplitwiseSim's
// ordered lists are, not per token; a decode batch holding a KV format
// other than the dense one, or DecodeReadsKV, runs one event per
// iteration instead. The first 10 minutes of the conv trace (2,867
// requests, 2 instances, token_jsq) take about 8 ms of CPU here from
// reading to summary, against SplitwiseSim's 7.0 s (820-890x; Splitwise-HA
// 3,400x); as whole commands side by side (scripts/splitwise/speed.sh,
// docs/results/inference.md, Speed) 11.2 ms against 6.7 s, 597x
// (Splitwise-HA 2,297x), of which the process's start and its fresh pages
// take about 3.2 ms. The hot spots are the batch selection's passes over
// the running batch and the pending requests, and the event heap, which
// holds every arrival from the start as SplitwiseSim's does.
//
// # Usage
//
//	perf, _ := infer.ParsePerfTable(csvBytes)
//	s, err := infer.New(infer.SplitwiseHA(perf, 1, 1), reqs)
//	sum, err := s.Run(router) // e.g. splitwise.NewMixedPool(...)
//	fmt.Println(sum.TTFT.Mean, sum.E2E.P99, s.Results()[0].TTFT())
//
// A Router answers Route(view, request) with a Decision (prefill and
// decode instance) at each arrival; routers that also want to know when an
// instance falls idle implement IdleObserver. Run wraps the step loop a
// gym environment or a policy server drives itself:
//
//	s.Observe(observer) // optional
//	for {
//		req, v, err := s.Next()
//		if err == infer.ErrDone {
//			break
//		}
//		if err != nil { ... } // ErrStalled: requests that can never finish
//		d, _ := router.Route(v, req)
//		if err := s.Apply(d); err != nil { ... }
//	}
//	sum := s.Summary()
package infer
