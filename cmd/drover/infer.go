package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/policies/hack"
	"github.com/drover-sched/drover/policies/pdrl"
	"github.com/drover-sched/drover/policies/splitwise"
)

// drover infer: the inference half's simulator and evaluation (issue 34,
// item 6), over env/infer, datasets/llm and the routers of policies/.

// inferUsage is drover infer's usage: its subcommands.
const inferUsage = `usage: drover infer sim|eval|mm|mmscale [flags]

  sim [flags]    replay one request trace on one deployment under one router:
                 TTFT, TPOT, end-to-end latency (JCT), SLO attainment, GPU cost,
                 KV bytes moved
  eval [flags]   compare routers (each with its KV format and deployment) over
                 seeds: 95% intervals, table.md, summary.json, latency CDFs (PNG)
  mm sim|eval    multimodal serving (ModServe, issue 35): drover infer mm -h
  mmscale        multimodal autoscaling over the synthetic LMM week: ModServe's
                 pools against monolithic instances, GPU-hours at the SLO

Without flags, both run the built-in synthetic workload on the Splitwise
presets with the performance table of ../shared/traces/llm/calibration,
or, where it is absent, the built-in roofline (--perf builtin; marked derived).
Run "drover infer SUBCOMMAND -h" for its flags.`

func runInfer(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, inferUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, inferUsage)
		return flag.ErrHelp
	case "sim":
		return inferSim(args[1:], stdout, stderr)
	case "eval":
		return inferEval(args[1:], stdout, stderr)
	case "mm":
		return runInferMM(args[1:], stdout, stderr)
	case "mmscale":
		return inferMmscale(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "drover infer: unknown subcommand %q (want sim, eval, mm or mmscale)\n", args[0])
	return errUsage
}

// defaultPerfTable is SplitwiseSim's measured latency table, read from the
// shared traces beside the repository (never copied into it).
var defaultPerfTable = filepath.Join("..", "shared", "traces", "llm", "calibration", "splitwise_perf_model.csv")

// Bounds of drover infer's flags that no library states.
const (
	// maxGapScale bounds --gap-scale: a million times the trace's gaps
	// (or a millionth) is past any load study.
	maxGapScale = 1e6
	// maxSLO bounds the latency objectives: a day.
	maxSLO = 24 * 3600
	// maxFormatStep bounds --format-step's times: a minute a decode step
	// is past any kernel's launch cost (the HKVQ calibration's are 3 to
	// 5 ms).
	maxFormatStep = 60
)

// inferNumRules are the rules of drover infer's numeric flags (numflags.go:
// cmdNumRules), the same in sim and eval. --seed, --rate, --duration and
// --parallel take the rules every command shares.
var inferNumRules = map[string]numRule{
	"start":         within(0, llm.MaxArrival, fmt.Sprintf("a time in [0, %g] s of the trace", float64(llm.MaxArrival))),
	"duration":      within(0, llm.MaxArrival, fmt.Sprintf("0 (to the trace's end) or a window of up to %g s", float64(llm.MaxArrival))),
	"gap-scale":     above(0, maxGapScale, fmt.Sprintf("a factor in (0, %g] on the gaps between arrivals (0.5: twice the rate)", float64(maxGapScale))),
	"shift":         within(0, llm.MaxArrival, fmt.Sprintf("seconds in [0, %g] added to every arrival", float64(llm.MaxArrival))),
	"cv":            above(0, 1000, "a coefficient of variation in (0, 1000] (gamma arrivals; 1 for poisson)"),
	"requests":      within(0, llm.MaxTokens, fmt.Sprintf("0 (the default: every row kept, %d for the built-in workload) to %d requests", builtinRequests, llm.MaxTokens)),
	"min-prompt":    within(0, llm.MaxTokens, "0 (keep all) or the fewest prompt tokens a row needs"),
	"max-tokens":    {func(x float64) bool { return x == 0 || x >= 2 && x <= llm.MaxTokens }, "0 (off) or a limit of 2 or more tokens a request"},
	"prefill":       within(-1, infer.MaxInstances, fmt.Sprintf("-1 (the preset's) or 0 to %d instances", infer.MaxInstances)),
	"decode":        within(-1, infer.MaxInstances, fmt.Sprintf("-1 (the preset's) or 0 to %d instances", infer.MaxInstances)),
	"colocated":     within(-1, infer.MaxInstances, fmt.Sprintf("-1 (the preset's) or 0 to %d instances", infer.MaxInstances)),
	"tp":            within(1, 64, "1 to 64 GPUs an instance"),
	"link-gbps":     within(0, maxNICGbps, fmt.Sprintf("0 (the preset's 200 GiB/s) or a bandwidth of up to %g Gbit/s", float64(maxNICGbps))),
	"link-overhead": within(0, maxDuration, "0 or more seconds a transfer, at most a day"),
	"stage-gbps":    within(0, maxNICGbps, fmt.Sprintf("0 (no staging) or a copy rate of up to %g Gbit/s", float64(maxNICGbps))),
	"slo-ttft":      within(0, maxSLO, "0 (no objective) or seconds, at most a day"),
	"slo-tpot":      within(0, maxSLO, "0 (no objective) or seconds, at most a day"),
	"slo-e2e":       within(0, maxSLO, "0 (no objective) or seconds, at most a day"),
}

// inferSetupFlags are the flags drover infer sim and eval share: the
// trace, the deployment and the objectives.
type inferSetupFlags struct {
	trace, format, arrivals             *string
	start, duration, gapScale, shift    *float64
	rate, cv                            *float64
	requests, minPrompt, maxTokens      *int
	skipBad                             *bool
	perf, model, cluster                *string
	prefill, decode, colocated, tp      *int
	prefillGPU, decodeGPU, colocatedGPU *string
	linkGbps, linkOverhead              *float64
	sharedLink, decodeReadsKV           *bool
	retryUnfit                          *bool
	fairShare                           *bool
	stageGbps                           *float64
	formatStep                          *string
	kvSize                              *string
	sloTTFT, sloTPOT, sloE2E            *float64
}

// defineInferSetupFlags defines the shared flags on fs.
func defineInferSetupFlags(fs *flag.FlagSet) *inferSetupFlags {
	f := new(inferSetupFlags)
	f.trace = fs.String("trace", "builtin", "requests: builtin (synthetic: Poisson arrivals at --rate, lengths drawn like the Azure 2023 code trace's, from the seed), a request trace to replay (an Azure LLM inference trace, Drover's request CSV or Parquet, a SplitwiseSim trace), or a table of request lengths (Vidur's) given arrivals by --arrivals and --rate")
	f.format = fs.String("format", "auto", "trace format: auto|"+strings.Join(llmFormatNames(), "|"))
	f.start = fs.Float64("start", 0, "replayed trace: the window's start, seconds into the trace")
	f.duration = fs.Float64("duration", 0, "replayed trace: the window's length in seconds (0: to the end)")
	f.gapScale = fs.Float64("gap-scale", 1, "replayed trace: multiply the gaps between arrivals (0.5: twice the rate)")
	f.shift = fs.Float64("shift", 0, "replayed trace: seconds added to every arrival (SplitwiseSim comparisons use 1)")
	f.arrivals = fs.String("arrivals", "poisson", "built-in workload or lengths table: arrival process, poisson or gamma")
	f.rate = fs.Float64("rate", 2, "built-in workload or lengths table: mean arrival rate, requests per second")
	f.cv = fs.Float64("cv", 1, "gamma arrivals: coefficient of variation of the gaps (1 for poisson)")
	f.requests = fs.Int("requests", 0, fmt.Sprintf("built-in workload or lengths table: requests to generate (0: %d built in, every row kept of a table)", builtinRequests))
	f.minPrompt = fs.Int("min-prompt", 2, "lengths table: drop rows with fewer prompt tokens (2 drops the arXiv file's one-token prompts)")
	f.maxTokens = fs.Int("max-tokens", 0, "lengths table: trim rows whose prompt and output exceed this many tokens, as Vidur does (0: off)")
	f.skipBad = fs.Bool("skip-bad", false, "skip and count malformed or invalid trace rows instead of failing")
	f.perf = fs.String("perf", defaultPerfTable, "latency table: SplitwiseSim's measured perf_model.csv, or builtin (a roofline from datasheets, marked derived in every output; the fallback, with a note, when the default file is absent)")
	f.model = fs.String("model", "llama2-70b", "served model, with rows in the latency table: llama2-70b or bloom-176b")
	f.cluster = fs.String("cluster", "splitwise-ha", "deployment preset: splitwise-ha (1 prompt DGX-H100 + 1 token DGX-A100, disaggregated), splitwise-baseline (2 DGX-H100, colocated), whose pools the flags below override, or pd-rl (pd-rl's fixed deployment, env/infergym.Deployment: 2 A10G and 1 A100 prefill, 1 A100 and 1 V100 decode, TP8, a shared 25 Gbit/s link, decode reading the KV cache; the link flags apply)")
	f.prefill = fs.Int("prefill", -1, "prefill instances (-1: the preset's)")
	f.decode = fs.Int("decode", -1, "decode instances (-1: the preset's)")
	f.colocated = fs.Int("colocated", -1, "colocated instances, running both phases (-1: the preset's)")
	gpus := make([]string, len(infer.GPUs))
	for i, g := range infer.GPUs {
		gpus[i] = g.Name
	}
	gpuList := strings.Join(gpus, ", ")
	f.prefillGPU = fs.String("prefill-gpu", "", "GPU type of the prefill instances ("+gpuList+"; types beyond a100-80gb and h100-80gb are extrapolated and marked so); empty: the preset's")
	f.decodeGPU = fs.String("decode-gpu", "", "GPU type of the decode instances; empty: the preset's")
	f.colocatedGPU = fs.String("colocated-gpu", "", "GPU type of the colocated instances; empty: the preset's")
	f.tp = fs.Int("tp", 8, "tensor parallelism: GPUs an instance")
	f.linkGbps = fs.Float64("link-gbps", 0, "KV link bandwidth in Gbit/s (0: the preset's 200 GiB/s)")
	f.linkOverhead = fs.Float64("link-overhead", 0, "fixed cost of every KV transfer, seconds")
	f.sharedLink = fs.Bool("shared-link", false, "one link between the pools carrying one transfer at a time, the others queued (the presets: every transfer has the whole bandwidth, as SplitwiseSim)")
	f.fairShare = fs.Bool("fair-share", false, "with a shared link (--shared-link, or pd-rl's): every transfer whose KV cache fits its destination runs at once, those under way splitting the bandwidth equally, as the HKVQ artifact's rate-limited TCP pulls do (without it a shared link sends one transfer at a time)")
	f.stageGbps = fs.Float64("stage-gbps", 0, "the prefill step also copies each finished prompt's KV cache out for its transfer at this rate, Gbit/s, and waits for the copy (the HKVQ artifact stages it into pinned host memory: 4.66 GB/s, 37.28 Gbit/s, fitted on its RTX A6000s); 0: no staging")
	f.formatStep = fs.String("format-step", "", "a fixed time that a decode iteration pays once when its batch holds a request in a KV format, besides the format's work per token, as FORMAT=SECONDS[,FORMAT=SECONDS] (the HKVQ calibration's: hack-pi64=0.0052 on the RTX A6000); empty: none")
	f.retryUnfit = fs.Bool("retry-unfit", false, "keep a request whose KV cache can never fit its instances, as SplitwiseSim does, instead of rejecting it: it waits (its transfer looking again every second) and holds up what queues behind it; the run ends, stalled, naming the request that waits, once nothing else can run")
	f.decodeReadsKV = fs.Bool("decode-reads-kv", false, "decode iterations also pay for reading the batch's KV caches at HBM bandwidth (the presets: the measured curve only, as SplitwiseSim)")
	f.kvSize = fs.String("kv-size", "auto", "KV bytes per token: splitwise (SplitwiseSim's count, all 64 heads of llama2-70b: 2,621,440 B), arch (the architecture's, grouped-query attention: 327,680 B), or auto (splitwise unless a KV format other than fp16 is in use, which needs the architecture)")
	f.sloTTFT = fs.Float64("slo-ttft", 2, "SLO on time to first token, seconds (0: none; an assumption, not a paper's)")
	f.sloTPOT = fs.Float64("slo-tpot", 0.2, "SLO on time per output token after the first, seconds (0: none)")
	f.sloE2E = fs.Float64("slo-e2e", 0, "SLO on end-to-end latency, seconds (0: none)")
	return f
}

// parse parses args into fs, whose shared flags are f's, and checks
// them; it returns the flags given and the format of the command's
// --kv-format (its value kvFormat, read after parsing) when given, nil
// otherwise.
func (f *inferSetupFlags) parse(fs *flag.FlagSet, args []string, kvFormat *string) (given map[string]bool, format *kv.Format, err error) {
	if err := parse(fs, args); err != nil {
		return nil, nil, err
	}
	if err := f.check(fs); err != nil {
		return nil, nil, err
	}
	given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if given["kv-format"] {
		kf, err := kv.Parse(*kvFormat)
		if err != nil {
			return nil, nil, fmt.Errorf("--kv-format: %w", err)
		}
		format = &kf
	}
	return given, format, nil
}

// llmFormatNames are the trace formats --format names.
func llmFormatNames() []string {
	return []string{string(llm.FormatAzure), string(llm.FormatRequests), string(llm.FormatParquet), string(llm.FormatSplitwise), string(llm.FormatVidur)}
}

// check checks the flags that are not numbers, before anything is read.
func (f *inferSetupFlags) check(fs *flag.FlagSet) error {
	if *f.format != "auto" && !slices.Contains(llmFormatNames(), *f.format) {
		return fmt.Errorf("%s %q: want auto or one of %v", flagName(fs, "format"), *f.format, llmFormatNames())
	}
	if _, err := llm.ParseProcess(*f.arrivals); err != nil {
		return fmt.Errorf("%s %q: want poisson or gamma", flagName(fs, "arrivals"), *f.arrivals)
	}
	if *f.arrivals == "poisson" && *f.cv != 1 {
		return fmt.Errorf("%s %g: poisson gaps have CV 1 (use --arrivals gamma)", flagName(fs, "cv"), *f.cv)
	}
	if _, ok := inferPresets[*f.cluster]; !ok {
		return fmt.Errorf("%s %q: want one of %v", flagName(fs, "cluster"), *f.cluster, presetNames())
	}
	if _, ok := kv.Lookup(*f.model); !ok || !slices.Contains([]string{"llama2-70b", "bloom-176b"}, *f.model) {
		return fmt.Errorf("%s %q: want llama2-70b or bloom-176b (the models of the latency table)", flagName(fs, "model"), *f.model)
	}
	for _, g := range []struct{ name, v string }{{"prefill-gpu", *f.prefillGPU}, {"decode-gpu", *f.decodeGPU}, {"colocated-gpu", *f.colocatedGPU}} {
		if g.v != "" {
			if _, err := infer.LookupGPU(g.v); err != nil {
				return fmt.Errorf("%s %q: %w", flagName(fs, g.name), g.v, err)
			}
		}
	}
	if !slices.Contains([]string{"auto", "splitwise", "arch"}, *f.kvSize) {
		return fmt.Errorf("%s %q: want auto, splitwise or arch", flagName(fs, "kv-size"), *f.kvSize)
	}
	if _, err := parseFormatSteps(*f.formatStep); err != nil {
		return fmt.Errorf("%s %q: %w", flagName(fs, "format-step"), *f.formatStep, err)
	}
	return nil
}

// parseFormatSteps reads --format-step: FORMAT=SECONDS pairs, comma
// separated, keyed by the formats' names (kv.Format.Name); nil when s is
// empty.
func parseFormatSteps(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	steps := map[string]float64{}
	for _, pair := range strings.Split(s, ",") {
		name, sec, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want FORMAT=SECONDS", strings.TrimSpace(pair))
		}
		f, err := kv.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("%w (want fp16, int8, kvquant, cachegen, hack or hack-piN)", err)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(sec), 64)
		if err != nil || !(x >= 0 && x <= maxFormatStep) {
			return nil, fmt.Errorf("%s=%s: want 0 to %d seconds", f.Name(), strings.TrimSpace(sec), maxFormatStep)
		}
		if _, dup := steps[f.Name()]; dup {
			return nil, fmt.Errorf("%s given twice", f.Name())
		}
		steps[f.Name()] = x
	}
	return steps, nil
}

// inferPreset is a deployment preset: its pools (count, GPU type) and the
// router it is meant for, or a fixed deployment.
type inferPreset struct {
	prefill, decode, colocated int
	prefillGPU, decodeGPU      string
	colocatedGPU               string
	router                     string
	// fixed, when set, builds the whole deployment (its pools and link;
	// the link flags still apply when given, the SLO flags always).
	fixed func(*infer.PerfTable) infer.Config
}

// inferPresets are the --cluster presets, SplitwiseSim's deployments of
// issue 34's acceptance (infer.SplitwiseHA, infer.SplitwiseBaseline).
var inferPresets = map[string]inferPreset{
	"splitwise-ha":       {prefill: 1, decode: 1, prefillGPU: "h100-80gb", decodeGPU: "a100-80gb", colocatedGPU: "h100-80gb", router: splitwise.MixedPoolName},
	"splitwise-baseline": {colocated: 2, prefillGPU: "h100-80gb", decodeGPU: "a100-80gb", colocatedGPU: "h100-80gb", router: splitwise.TokenJSQName},
	// pd-rl's deployment (env/infergym.Deployment): 2 A10G and 1 A100
	// prefill, 1 A100 and 1 V100 decode, TP8, a shared 25 Gbps link.
	"pd-rl": {router: hack.Name, fixed: infergym.Deployment},
}

// poolFlags are the flags that shape a preset's pools, which a fixed
// deployment does not take.
var poolFlags = []string{"prefill", "decode", "colocated", "prefill-gpu", "decode-gpu", "colocated-gpu", "tp"}

func presetNames() []string {
	out := make([]string, 0, len(inferPresets))
	for k := range inferPresets {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// inferDeployment is what a run simulates apart from its requests: a
// config (without the model, which depends on the KV size) and its text.
type inferDeployment struct {
	name string // the preset
	cfg  infer.Config
	desc string
	// router is the preset's router.
	router string
}

// deployment builds the deployment of preset name with the flags'
// overrides, on perf (nil: the caller sets cfg.Perf once the model is
// known).
func (f *inferSetupFlags) deployment(name string, perf *infer.PerfTable, given map[string]bool) (inferDeployment, error) {
	p := inferPresets[name]
	var cfg infer.Config
	if p.fixed != nil {
		for _, fl := range poolFlags {
			if given[fl] {
				return inferDeployment{}, fmt.Errorf("--%s: --cluster %s is a fixed deployment; its pools take no flags", fl, name)
			}
		}
		cfg = p.fixed(perf)
	} else {
		var err error
		if cfg, err = f.pools(name, p, perf, given); err != nil {
			return inferDeployment{}, err
		}
	}
	if err := f.applyLink(&cfg, given); err != nil {
		return inferDeployment{}, err
	}
	return inferDeployment{name: name, cfg: cfg, desc: deploymentText(name, cfg), router: p.router}, nil
}

// pools builds preset p's instances with the pool flags' overrides, on
// perf, and its link: SplitwiseSim's, 200 GiB/s a transfer.
func (f *inferSetupFlags) pools(name string, p inferPreset, perf *infer.PerfTable, given map[string]bool) (infer.Config, error) {
	pick := func(flagName string, v, preset int) int {
		if given[flagName] && v >= 0 {
			return v
		}
		return preset
	}
	gpu := func(v, preset string) string {
		if v != "" {
			return v
		}
		return preset
	}
	np, nd, nc := pick("prefill", *f.prefill, p.prefill), pick("decode", *f.decode, p.decode), pick("colocated", *f.colocated, p.colocated)
	gp, gd, gc := gpu(*f.prefillGPU, p.prefillGPU), gpu(*f.decodeGPU, p.decodeGPU), gpu(*f.colocatedGPU, p.colocatedGPU)
	if np+nd+nc == 0 {
		return infer.Config{}, fmt.Errorf("--cluster %s: no instances (--prefill, --decode and --colocated are 0)", name)
	}
	if (np == 0) != (nd == 0) {
		return infer.Config{}, fmt.Errorf("--cluster %s: %d prefill and %d decode instances: a disaggregated deployment needs both", name, np, nd)
	}
	inst := func(g string, r infer.Role) infer.InstanceConfig {
		return infer.InstanceConfig{GPU: g, TP: *f.tp, Role: r, MaxBatchSize: infer.SplitwiseMaxBatchSize,
			MaxBatchTokens: infer.SplitwiseMaxBatchTokens, MaxPreemptions: infer.SplitwiseMaxPreemptions}
	}
	// SplitwiseSim's order: the token (decode) machines first.
	cfg := infer.Config{Perf: perf, Link: infer.LinkConfig{BytesPerSec: infer.SplitwiseTransferBytesPerSec}}
	for _, pool := range []struct {
		n    int
		gpu  string
		role infer.Role
	}{{nd, gd, infer.Decode}, {np, gp, infer.Prefill}, {nc, gc, infer.Colocated}} {
		for range pool.n {
			cfg.Instances = append(cfg.Instances, inst(pool.gpu, pool.role))
		}
	}
	return cfg, nil
}

// applyLink sets on cfg what the link, staging and format-step flags
// give (the preset's where a flag is not given; --link-gbps 0 is the
// preset's too) and the SLO flags, one SLO for every deployment of a
// comparison.
func (f *inferSetupFlags) applyLink(cfg *infer.Config, given map[string]bool) error {
	if given["link-gbps"] && *f.linkGbps > 0 {
		cfg.Link.BytesPerSec = *f.linkGbps * 1e9 / 8
	}
	if given["link-overhead"] {
		cfg.Link.Overhead = *f.linkOverhead
	}
	if given["shared-link"] {
		cfg.Link.Shared = *f.sharedLink
	}
	if given["fair-share"] {
		cfg.Link.FairShare = *f.fairShare
	}
	if cfg.Link.FairShare && !cfg.Link.Shared {
		return fmt.Errorf("--fair-share: the link is not shared (add --shared-link): transfers with a link each have its whole bandwidth")
	}
	if given["stage-gbps"] {
		cfg.Link.StageBytesPerSec = *f.stageGbps * 1e9 / 8
	}
	if given["decode-reads-kv"] {
		cfg.DecodeReadsKV = *f.decodeReadsKV
	}
	if given["retry-unfit"] {
		cfg.RetryUnfit = *f.retryUnfit
	}
	if given["format-step"] {
		steps, err := parseFormatSteps(*f.formatStep)
		if err != nil {
			return fmt.Errorf("--format-step: %w", err) // checked already
		}
		cfg.FormatStepSeconds = steps
	}
	cfg.SLO = infer.SLO{TTFT: *f.sloTTFT, TPOT: *f.sloTPOT, E2E: *f.sloE2E}
	return nil
}

// deploymentText describes deployment cfg of preset name: its pools (runs
// of like instances, in order), its link and what it adds to the steps.
func deploymentText(name string, cfg infer.Config) string {
	var parts []string
	for i := 0; i < len(cfg.Instances); {
		j := i
		for j < len(cfg.Instances) && cfg.Instances[j] == cfg.Instances[i] {
			j++
		}
		ic := cfg.Instances[i]
		parts = append(parts, fmt.Sprintf("%d %s %s TP%d", j-i, ic.Role, ic.GPU, ic.TP))
		i = j
	}
	l := cfg.Link
	link := fmt.Sprintf("%g Gbit/s", l.BytesPerSec*8/1e9)
	if l.BytesPerSec == infer.SplitwiseTransferBytesPerSec {
		link = "200 GiB/s"
	}
	switch {
	case l.FairShare:
		link += ", shared fairly (the transfers under way split it)"
	case l.Shared:
		link += ", shared (one transfer at a time)"
	default:
		link += " per transfer"
	}
	if l.Overhead > 0 {
		link += fmt.Sprintf(", %g s a transfer", l.Overhead)
	}
	desc := fmt.Sprintf("%s: %s; link %s", name, strings.Join(parts, ", "), link)
	if l.StageBytesPerSec > 0 {
		desc += fmt.Sprintf("; prefill stages the KV for its transfer at %g Gbit/s", l.StageBytesPerSec*8/1e9)
	}
	if cfg.DecodeReadsKV {
		desc += "; decode reads the KV cache"
	}
	if cfg.RetryUnfit {
		desc += "; requests that never fit kept (--retry-unfit)"
	}
	if len(cfg.FormatStepSeconds) > 0 {
		names := slices.Sorted(maps.Keys(cfg.FormatStepSeconds))
		steps := make([]string, len(names))
		for i, n := range names {
			steps[i] = fmt.Sprintf("%s %g ms", n, 1e3*cfg.FormatStepSeconds[n])
		}
		desc += "; a decode step's fixed format time " + strings.Join(steps, ", ")
	}
	return desc
}

// needsArch says whether contenders cs need the model's architecture: a
// compressed KV format, a learned router (its encoding sizes the formats)
// or a fixed deployment (pd-rl's serves the real KV size).
func needsArch(cs []inferContender) bool {
	for _, c := range cs {
		if c.format != kv.FP16() || c.ckpt != "" || inferPresets[c.cluster].fixed != nil {
			return true
		}
	}
	return false
}

// inferModel is the served model with the KV size kvSize (splitwise or
// arch).
func inferModel(name, kvSize string) infer.Model {
	a, _ := kv.Lookup(name)
	if kvSize == "splitwise" && name == "llama2-70b" {
		return infer.Llama2_70B
	}
	return infer.ModelOf(a)
}

// resolveKVSize is --kv-size for contenders cs, auto resolved: arch when
// they need the architecture (needsArch), which splitwise refuses.
func resolveKVSize(flagValue string, cs []inferContender) (string, error) {
	need := needsArch(cs)
	switch {
	case flagValue == "auto" && need:
		return "arch", nil
	case flagValue == "auto":
		return "splitwise", nil
	case flagValue == "splitwise" && need:
		return "", fmt.Errorf("--kv-size splitwise: a compressed KV format, a learned router or a fixed deployment needs the architecture's KV size (--kv-size arch)")
	}
	return flagValue, nil
}

// builtinPerf is the --perf value that chooses the built-in roofline
// latency model (infer.RooflinePerfTable) instead of a measured table.
const builtinPerf = "builtin"

// builtinPerfNote is how every output of a run on the built-in roofline
// marks its latencies.
const builtinPerfNote = "derived (built-in roofline): datasheet FLOPS and memory bandwidth at efficiencies fitted to SplitwiseSim's table, not measurements; a Splitwise preset's results are then not SplitwiseSim's"

// readPerf reads the latency table at path, or builds the built-in
// roofline's for "builtin". When path is the default (not given: explicit
// false) and the shared traces' copy of SplitwiseSim's table is absent, it
// falls back to the built-in roofline and says so in one line on note; a
// table named explicitly must exist.
func readPerf(path string, explicit bool, note io.Writer) (*infer.PerfTable, error) {
	src, err := readPerfSource(path, explicit, note)
	if err != nil {
		return nil, err
	}
	return src.table(nil)
}

// perfSource is --perf read but not yet parsed: a measured table's bytes,
// or the built-in roofline's table.
type perfSource struct {
	path  string
	data  []byte
	built *infer.PerfTable
}

// readPerfSource reads --perf as readPerf does, leaving a file's table to
// be parsed (perfSource.table).
func readPerfSource(path string, explicit bool, note io.Writer) (perfSource, error) {
	if path == builtinPerf {
		return perfSource{path: path, built: infer.RooflinePerfTable()}, nil
	}
	data, err := inputfile.ReadFile(path, inputfile.Document)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && path == defaultPerfTable && !explicit {
			fmt.Fprintf(note, "drover: no measured latency table at %s (SplitwiseSim's, in the shared traces): using the built-in roofline model (--perf builtin), derived from datasheets, not measured; give --perf FILE for a measured table\n", path)
			return perfSource{path: path, built: infer.RooflinePerfTable()}, nil
		}
		return perfSource{}, fmt.Errorf("--perf: %w", err)
	}
	return perfSource{path: path, data: data}, nil
}

// table is the latency table: the built-in one, or the file's, of which
// only the rows that deployment cfg reads are parsed when cfg is not nil
// (infer.ParsePerfTableFor: the model's rows on the instances' GPU types,
// the whole file where it cannot tell).
func (p perfSource) table(cfg *infer.Config) (*infer.PerfTable, error) {
	if p.built != nil {
		return p.built, nil
	}
	var t *infer.PerfTable
	var err error
	if cfg != nil {
		t, err = infer.ParsePerfTableFor(p.data, *cfg)
	} else {
		t, err = infer.ParsePerfTable(p.data)
	}
	if err != nil {
		return nil, fmt.Errorf("--perf %s: %w", p.path, err)
	}
	return t, nil
}

// builtinRequests is the built-in workload's size: 1,200 requests, ten
// minutes at its default 2 requests a second.
const builtinRequests = 1200

// Log-normal lengths of the built-in workload, fitted to the Azure 2023
// code trace's nearest-rank medians and 90th percentiles (datasets/llm
// TestInspectRealFiles: prompts 1,469 and 5,194 tokens, outputs 13 and 55):
// mu = ln(p50), sigma = ln(p90 / p50) / z(0.9), z(0.9) = 1.2815516.
const (
	builtinPromptP50, builtinPromptP90 = 1469, 5194
	builtinOutputP50, builtinOutputP90 = 13, 55
	builtinMaxPrompt, builtinMaxOutput = 8192, 2048
	z90                                = 1.2815515655446004
)

// builtinLengths draws n request lengths like the Azure code trace's from
// src: log-normal prompts and outputs, rounded, clamped to [2, 8192] and
// [1, 2048] tokens.
func builtinLengths(n int, src rand.Source) []llm.Length {
	r := rand.New(src)
	draw := func(p50, p90 float64, lo, hi int) int {
		sigma := math.Log(p90/p50) / z90
		x := int(math.Round(math.Exp(math.Log(p50) + sigma*r.NormFloat64())))
		return max(lo, min(hi, x))
	}
	ls := make([]llm.Length, n)
	for i := range ls {
		ls[i] = llm.Length{Prompt: draw(builtinPromptP50, builtinPromptP90, 2, builtinMaxPrompt),
			Output: draw(builtinOutputP50, builtinOutputP90, 1, builtinMaxOutput)}
	}
	return ls
}

// inferWorkload is the source of a run's requests: a replayed trace, or
// lengths given arrivals by the seed (the built-in workload, a Vidur
// table).
type inferWorkload struct {
	name    string
	trace   *llm.Trace   // a replayed trace, or nil
	lengths []llm.Length // a lengths table (nil for the built-in workload, drawn per seed)
	skipped int
	f       *inferSetupFlags
}

// loadWorkload reads --trace.
func (f *inferSetupFlags) loadWorkload() (*inferWorkload, error) {
	w := &inferWorkload{name: *f.trace, f: f}
	if *f.trace == "builtin" {
		return w, nil
	}
	o := llm.Options{SkipBad: *f.skipBad}
	format := llm.Format(*f.format)
	if format == "auto" {
		format = llm.FormatAuto
	}
	if format == llm.FormatAuto {
		head, err := fileHead(*f.trace)
		if err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		if sniffed, err := llm.Sniff(head); err == nil && sniffed == llm.FormatVidur {
			format = llm.FormatVidur
		}
	}
	if format == llm.FormatVidur {
		ls, err := llm.ReadLengths(*f.trace, o)
		if err != nil {
			return nil, err
		}
		w.name, w.lengths, w.skipped = ls.Name, ls.Rows, ls.Skipped
		return w, nil
	}
	tr, err := llm.ReadFile(*f.trace, format, o)
	if err != nil {
		return nil, err
	}
	w.name, w.trace, w.skipped = tr.Name, tr, tr.Skipped
	return w, nil
}

// fileHead returns the first 64 KiB of the file at path, decompressed
// when it is gzip data, for sniffing its header line.
func fileHead(path string) ([]byte, error) {
	fh, err := inputfile.Open(path, inputfile.Trace)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	br := bufio.NewReader(fh)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head[:n], nil
}

// Stream ids of the seeded draws, so that the built-in lengths, the
// arrivals and a replay's window never share a random stream.
const (
	streamLengths = 0x6c656e67 // "leng"
	streamWindow  = 0x77696e64 // "wind"
)

// requests returns the requests of seed: the replayed window (its start
// drawn from the seed when randomWindow and --duration > 0), or the
// synthetic arrivals the seed draws. what says which. The requests are
// read only: a replay of the whole trace unchanged returns the trace's
// own slice.
func (w *inferWorkload) requests(seed uint64, randomWindow bool) (reqs []llm.Request, what string, err error) {
	f := w.f
	if w.trace != nil {
		rp := llm.Replay{Start: *f.start, Duration: *f.duration, GapScale: *f.gapScale, Shift: *f.shift}
		if randomWindow && rp.Duration > 0 {
			last := w.trace.Requests[len(w.trace.Requests)-1].Arrival
			room := max(0, last-rp.Duration-rp.Start)
			rp.Start += room * rand.New(rand.NewPCG(seed, streamWindow)).Float64()
		}
		if rp == (llm.Replay{GapScale: 1}) {
			// The whole trace as it is: Apply would copy it unchanged
			// (a trace's requests are sorted, numbered and checked, its
			// arrivals finite, at most MaxArrival and never -0).
			reqs = w.trace.Requests
		} else if reqs, err = rp.Apply(w.trace.Requests); err != nil {
			return nil, "", fmt.Errorf("replay %s: %w", w.name, err)
		}
		what = fmt.Sprintf("%s, %d requests from %.1f s", w.name, len(reqs), rp.Start)
		if rp.Duration > 0 {
			what += fmt.Sprintf(" for %g s", rp.Duration)
		}
		if rp.GapScale != 1 {
			what += fmt.Sprintf(", gaps x %g", rp.GapScale)
		}
		if rp.Shift != 0 {
			what += fmt.Sprintf(", shifted %g s", rp.Shift)
		}
		return reqs, what, nil
	}
	proc, _ := llm.ParseProcess(*f.arrivals)
	s := llm.Synth{Process: proc, Rate: *f.rate, N: *f.requests}
	if proc == llm.Gamma {
		s.CV = *f.cv
	}
	ls := w.lengths
	if ls == nil {
		n := *f.requests
		if n == 0 {
			n = builtinRequests
		}
		ls = builtinLengths(n, rand.NewPCG(seed, streamLengths))
		s.N = n
	} else {
		s.Shuffle, s.MinPrompt, s.MaxTokens = true, *f.minPrompt, *f.maxTokens
	}
	reqs, _, err = s.Generate(ls, rand.NewPCG(seed, seed))
	if err != nil {
		return nil, "", fmt.Errorf("synthesize %s: %w", w.name, err)
	}
	arr := fmt.Sprintf("%s %g req/s", proc, *f.rate)
	if proc == llm.Gamma {
		arr += fmt.Sprintf(" (CV %g)", *f.cv)
	}
	if w.lengths == nil {
		return reqs, fmt.Sprintf("builtin: %d requests, %s, lengths like the Azure 2023 code trace's (log-normal), seed %d", len(reqs), arr, seed), nil
	}
	return reqs, fmt.Sprintf("%s: %d requests, %s, rows shuffled, seed %d", w.name, len(reqs), arr, seed), nil
}

// inferRouter is an entry of the router registry: how to build it for a
// KV format, and the format it uses when none is named.
type inferRouter struct {
	make   func(kv.Format) infer.Router
	format kv.Format
	about  string
}

// inferRouters are the inference routers by name: the registry drover
// infer sim and eval pick from. A contender may add a KV format
// ("+hack-pi64") and a deployment preset ("@splitwise-ha").
var inferRouters = map[string]inferRouter{
	splitwise.TokenJSQName: {func(f kv.Format) infer.Router { return withFormat(splitwise.NewTokenJSQ(), f) }, kv.FP16(),
		"Splitwise's token_jsq: both phases on the instance with the fewest pending tokens"},
	splitwise.MixedPoolName: {func(f kv.Format) infer.Router {
		return withFormat(splitwise.NewMixedPool(splitwise.MixedPoolConfig{}), f)
	}, kv.FP16(), "Splitwise's mixed_pool: prompt and token pools, an overloaded pool borrows"},
	hack.Name: {func(f kv.Format) infer.Router { return hack.New(f) }, kv.HACKPi(64),
		"HACK's router: prefill and decode instance with the fewest pending tokens, KV in HACK Pi 64 unless +FORMAT"},
	"disagg-fp16": {func(kv.Format) infer.Router { return hack.New(kv.FP16()) }, kv.FP16(),
		"the disaggregated FP16 baseline of the HACK paper: HACK's routing rule, dense KV caches"},
}

// routerNames lists the registry's names, sorted.
func routerNames() []string {
	out := make([]string, 0, len(inferRouters))
	for k := range inferRouters {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// inferContender is one row of a comparison: a router, the KV format it
// gives every request, and the deployment preset it runs on.
type inferContender struct {
	name    string
	router  string
	format  kv.Format
	cluster string
	// ckpt is a learned router's checkpoint directory (router pd-rl),
	// learned its policies once loaded (load).
	ckpt    string
	learned func() *pdrl.Policy
}

// parseContender reads "router[+format][@cluster]"; an empty router or
// cluster takes the defaults: the preset's router, the --cluster preset.
// The format is +format's, else defFormat when not nil (--kv-format
// given), else the router's own.
func parseContender(s, defCluster string, defFormat *kv.Format) (inferContender, error) {
	c := inferContender{cluster: defCluster}
	rest, cl, hasCluster := strings.Cut(strings.TrimSpace(s), "@")
	if hasCluster {
		if _, ok := inferPresets[cl]; !ok {
			return c, fmt.Errorf("%q: deployment %q: want one of %v", s, cl, presetNames())
		}
		c.cluster = cl
	}
	r, fm, hasFormat := strings.Cut(rest, "+")
	if strings.ContainsRune(r, filepath.Separator) {
		if hasFormat {
			return c, fmt.Errorf("%q: a learned router chooses every request's KV format itself", s)
		}
		c.router, c.ckpt, c.name = pdrl.Name, r, pdrl.Name+":"+r
		if hasCluster || c.cluster != defCluster {
			c.name += "@" + c.cluster
		}
		return c, nil
	}
	if r == "" || r == "auto" {
		r = inferPresets[c.cluster].router
	}
	spec, ok := inferRouters[r]
	if !ok {
		return c, fmt.Errorf("%q: unknown router %q (want one of %v, or a pd-rl checkpoint directory)", s, r, routerNames())
	}
	c.router, c.format = r, spec.format
	switch {
	case hasFormat:
		f, err := kv.Parse(fm)
		if err != nil {
			return c, fmt.Errorf("%q: KV format: %w (want fp16, int8, kvquant, cachegen, hack or hack-piN)", s, err)
		}
		c.format = f
	case defFormat != nil:
		c.format = *defFormat
	}
	if r == "disagg-fp16" && c.format != kv.FP16() {
		return c, fmt.Errorf("%q: disagg-fp16 keeps dense KV caches (use hack+%s)", s, c.format.Name())
	}
	c.name = r
	if c.format != spec.format {
		c.name += "+" + c.format.Name()
	}
	if hasCluster || c.cluster != defCluster {
		c.name += "@" + c.cluster
	}
	return c, nil
}

// newRouter builds c's router, which gives every request c's format (a
// learned one: the formats it chooses; load first).
func (c inferContender) newRouter() infer.Router {
	if c.ckpt != "" {
		return pdrl.Router(c.learned())
	}
	return inferRouters[c.router].make(c.format)
}

// load reads a learned contender's checkpoint for deployment cfg (its
// model's architecture and link); other contenders need nothing.
func (c *inferContender) load(cfg infer.Config) error {
	if c.ckpt == "" {
		return nil
	}
	_, newPolicy, err := pdrl.Load(c.ckpt, infergym.Config{Arch: cfg.Model.Arch, LinkBytesPerSec: cfg.Link.BytesPerSec})
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	c.learned = newPolicy
	return nil
}

// withFormat returns r giving every request format f (r itself for the
// dense format).
func withFormat(r infer.Router, f kv.Format) infer.Router {
	if f == kv.FP16() {
		return r
	}
	fr := formatRouter{r, f}
	if o, ok := r.(infer.IdleObserver); ok {
		return formatObserver{fr, o}
	}
	return fr
}

// formatRouter gives every request its router's placement and format f.
type formatRouter struct {
	infer.Router
	f kv.Format
}

// Route implements infer.Router.
func (r formatRouter) Route(v *infer.View, req infer.Request) (infer.Decision, error) {
	d, err := r.Router.Route(v, req)
	d.Format = r.f
	return d, err
}

// formatObserver is a formatRouter whose router watches idle instances.
type formatObserver struct {
	formatRouter
	o infer.IdleObserver
}

// InstanceIdle implements infer.IdleObserver.
func (r formatObserver) InstanceIdle(v *infer.View, i int) { r.o.InstanceIdle(v, i) }

// formatName names c's KV format: a learned router's is its own choice.
func (c inferContender) formatName() string {
	if c.ckpt != "" {
		return "chosen per request"
	}
	return c.format.Name()
}

// accuracyNote says what the artifact measured of format f's accuracy on
// model.
func accuracyNote(f kv.Format, model string) string {
	if f == kv.FP16() {
		return "none (the dense cache)"
	}
	if loss, ok := f.AccuracyLoss(model); ok {
		return fmt.Sprintf("%.2f points (HKVQ artifact, mean over its tasks)", loss)
	}
	return fmt.Sprintf("not measured for %s (the HKVQ artifact measured qwen3-8b only)", model)
}

// extrapolatedNote names the extrapolated GPU types of a run; derived:
// the run's rows were the built-in roofline's, not measured.
func extrapolatedNote(types []string, derived bool) string {
	switch {
	case len(types) == 0 && derived:
		return "none: every instance ran on its own type's rows of the built-in table"
	case len(types) == 0:
		return "none: every instance ran on measured rows"
	case derived:
		return strings.Join(types, ", ") + " (no rows of their own in the built-in table: latencies scaled from another type's by datasheet FP16 throughput and HBM bandwidth)"
	}
	return strings.Join(types, ", ") + " (no measured rows: latencies scaled from a measured type by datasheet FP16 throughput and HBM bandwidth)"
}

// inspectLLM reads path as an LLM request trace (datasets/llm: an Azure
// LLM inference trace, Drover's request table, a SplitwiseSim trace), for
// drover trace inspect when the file is no job workload; ok is false when
// it is none of those either (the workload reader's error then stands).
// A table of lengths without arrivals (Vidur's) is summarised with every
// arrival at 0.
func inspectLLM(path, format string, skipBad bool) (llm.Stats, bool) {
	if format != "auto" || path == "builtin" {
		return llm.Stats{}, false
	}
	o := llm.Options{SkipBad: skipBad}
	if tr, err := llm.ReadFile(path, llm.FormatAuto, o); err == nil {
		return llm.Inspect(tr), true
	}
	ls, err := llm.ReadLengths(path, o)
	if err != nil {
		return llm.Stats{}, false
	}
	tr := &llm.Trace{Name: ls.Name, Format: llm.FormatVidur, Skips: ls.Skips, Requests: make([]llm.Request, len(ls.Rows))}
	for i, l := range ls.Rows {
		tr.Requests[i] = llm.Request{ID: i, Prompt: l.Prompt, Output: l.Output}
	}
	return llm.Inspect(tr), true
}

// writeLLMStats prints st (llm.Stats.WriteText); a lengths table's has no
// arrivals, and says so instead of a span and rate of 0.
func writeLLMStats(w io.Writer, st llm.Stats) error {
	if st.Format != llm.FormatVidur {
		return st.WriteText(w)
	}
	var b strings.Builder
	if err := st.WriteText(&b); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "arrivals"):
			line = "arrivals  none: a table of lengths (drover infer gives them arrivals: --arrivals, --rate)\n"
		case strings.HasPrefix(line, "rate"):
			continue
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// routerHelp describes the registry's routers for -h.
func routerHelp() string {
	var parts []string
	for _, n := range routerNames() {
		parts = append(parts, n+" ("+inferRouters[n].about+")")
	}
	return strings.Join(parts, ", ")
}

// latencyNote says where a run's latencies came from.
func latencyNote(derived bool) string {
	if derived {
		return builtinPerfNote
	}
	return "measured (the latency table given by --perf)"
}
