// Package llm reads, generates and writes the request traces of Drover's
// LLM inference simulator (env/infer, issue 34). Its unit is Request (an
// arrival in seconds, prompt and output tokens, and the images of a
// multimodal request; infer.Request is the same type, defined in the leaf
// package internal/llmreq, which both import: datasets, the first layer,
// imports no env, and the simulator links none of the readers). Every
// reader and generator returns requests that are valid
// (Request.Validate), sorted by arrival (stably) and numbered 0, 1, ... in
// that order.
//
// The sources:
//
//   - The Azure LLM inference traces (Azure/AzurePublicDataset; the 2023
//     code and conversation traces of Splitwise, ISCA'24): DecodeAzure.
//     TIMESTAMP, ContextTokens and GeneratedTokens become the arrival, the
//     prompt and the output. An arrival is the row's timestamp minus the
//     earliest, taken in whole nanoseconds (ParseTimestamp reads the
//     2023 files' "2023-11-16 18:17:03.9799600" exactly, naive times as
//     UTC) and rounded once to a float64 of seconds, which at the traces'
//     hour-long spans keeps every 100 ns tick apart. Trace.Origin keeps
//     the earliest timestamp. Replay then picks a window, scales the gaps
//     (the load) and shifts the arrivals.
//   - The Azure LMM (multimodal) inference trace 2025 (ModServe, SoCC'25;
//     AzureLMMInferenceTrace_multimodal.csv.gz, one week of 1,000,000
//     requests): DecodeAzure reads its TIMESTAMP
//     ("2024-10-15T12:00:05.819Z"), NumImages, ContextTokens and
//     GeneratedTokens, NumImages into Request.Images. The file is not
//     available here, so LMMSynth generates a week fitted to the
//     dataset's published figures, digitised into lmm2025_digitised.csv
//     (embedded; lmm2025_digitise.go reads the PNGs): images per request,
//     context and generated tokens of image and text requests, and the
//     per-minute arrivals of each with their diurnal shape and bursts.
//     Fit gives the KS distance to each curve (docs/results/multimodal.md).
//   - Vidur's request-length tables (microsoft/vidur
//     data/processed_traces, such as the arXiv-summarization lengths with
//     the Llama-2 tokenizer): DecodeVidur reads lengths without arrival
//     times, and Synth gives them Poisson or Gamma arrivals (rate, CV)
//     drawn from an injected rand.Source, as Vidur's synthetic request
//     generator does: deterministic for one seed.
//   - SplitwiseSim's request traces (request_id, ..., arrival_timestamp,
//     prompt_size, token_size; what scripts/splitwise/make_trace.py
//     writes): DecodeSplitwise. The traces make_trace.py made from the
//     Azure 2023 files are Replay{Shift: 1} of DecodeAzure's, to the bit
//     (TestSplitwiseTraces).
//   - Drover's own request table, CSV (Encode, DecodeRequests) and Parquet
//     (WriteParquet, ReadParquet), specified in docs/format/requests.md:
//     arrival, prompt_tokens, output_tokens.
//
// Decode and ReadFile pick the format from the data (Sniff); gzip is
// decompressed. ReadFile and ReadLengths read a user's path through
// internal/inputfile (a regular file within inputfile.Trace bytes).
//
// Images is a field of Request rather than a separate multimodal type
// because a multimodal request is still one request to every reader,
// replay and writer here and to the simulator: a text request has 0
// images, so existing traces, code and tables are unchanged (Drover's
// table writes its images column only when some request has images), and
// the simulator's multimodal stages read the count from the request they
// already schedule.
//
// # Validation
//
// A row that does not parse, tokens outside 1..MaxTokens (2^24), or an
// arrival that is negative, NaN, infinite or past MaxArrival (1e8 s) is a
// *ParseError naming the file, the line (the row of a Parquet file), the
// byte column where known, and the field: "conv.csv:3:31: field
// GeneratedTokens: llm: bad request: -3 tokens, want 1..16777216". With
// Options.SkipBad such rows are skipped and counted in Skips by reason
// (the Reason* constants). A leading UTF-8 byte-order mark is skipped. A
// source with no request left is ErrEmpty.
//
// # The Azure 2023 files
//
// ../shared/traces/llm/azure_llm_2023 (tested by TestAzureRealFiles):
// the code trace holds 8,819 requests from 2023-11-16 18:17:03.9799600 over
// 3,435.948056 s (mean prompt 2,047.8, output 27.9 tokens), the
// conversation trace 19,366 from 18:15:46.6805900 over 3,501.721937 s
// (1,154.7 and 211.1). Each file's last row has no line end, so `wc -l`
// counts one row fewer (the traces README's 8,818 and 19,365).
//
// Inspect summarises a trace (count, span, rate, token percentiles) and
// Stats.WriteText prints it.
//
// # Beside datasets' job tables
//
// The CSV table reader (csv.go: header, required columns, records of the
// header's width), the opening of ReadParquet (recover, version key) and
// Stats.WriteText's skip reasons have the shape of package datasets'
// job-table code, and the duplicates tool pairs them. They stay apart on
// purpose: each package reports its own *ParseError and sentinel errors
// ("llm: missing column", "datasets: missing column"), which callers
// match with errors.As and errors.Is, and each reads its own versions
// (datasets' job tables 1 and 2, this request table 1, with different
// messages); a shared reader would have to carry both as options for
// some forty lines a side. What is common is shared already:
// internal/pqlog encodes and opens both Parquet files, internal/inputfile
// bounds the reads and trims the byte-order mark.
//
// # Usage
//
// Replay the code trace at twice its rate from 1 s on (SplitwiseSim fails
// on a request at t = 0), or give Vidur's lengths Poisson arrivals:
//
//	tr, err := llm.ReadFile("AzureLLMInferenceTrace_code.csv", llm.FormatAuto, llm.Options{})
//	if err != nil {
//		return err
//	}
//	reqs, err := llm.Replay{GapScale: 0.5, Shift: 1}.Apply(tr.Requests)
//
//	ls, err := llm.ReadLengths("arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv", llm.Options{})
//	reqs, skips, err := llm.Synth{Process: llm.Poisson, Rate: 2, MinPrompt: 2, Shuffle: true}.
//		Generate(ls.Rows, rand.NewPCG(seed, seed))
//
//	// A synthetic multimodal week (about 1,000,000 requests), or one day of it:
//	reqs, err = llm.LMMSynth{}.Generate(rand.NewPCG(seed, seed))
//	day, err := llm.LMMSynth{Start: 1440, Minutes: 1440}.Generate(rand.NewPCG(seed, seed))
//
//	// Either feeds the simulator (reqs are []infer.Request), or is kept:
//	err = llm.WriteParquet(f, "code-2x", reqs)
package llm
