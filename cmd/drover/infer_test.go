package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// inferPerfFlag is --perf naming the shared traces' latency table (the test
// skips itself where ../shared is absent).
func inferPerfFlag(t *testing.T) []string {
	t.Helper()
	p := sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("latency table absent: %v", err)
	}
	return []string{"--perf", p}
}

// inferAzureTrace is the path of an Azure 2023 trace (code or conv).
func inferAzureTrace(t *testing.T, kind string) string {
	t.Helper()
	p := sharedtraces.Path(t, "llm", "azure_llm_2023", "AzureLLMInferenceTrace_"+kind+".csv")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("trace absent: %v", err)
	}
	return p
}

// inferSimOut is the part of drover infer sim --json the tests read.
type inferSimOut struct {
	Cluster string `json:"cluster"`
	Router  string `json:"router"`
	Format  string `json:"kv_format"`
	KVBytes int64  `json:"kv_bytes_per_token"`
	Summary struct {
		Requests, Finished int
		TTFT               struct{ Mean, P99 float64 } `json:"ttft_s"`
		E2E                struct{ Mean, P99 float64 } `json:"e2e_s"`
		KVBytesMoved       int64                       `json:"kv_bytes_moved"`
		Transfers          int                         `json:"transfers"`
		FormatShare        float64                     `json:"format_share"`
		Extrapolated       []string                    `json:"extrapolated_gpus"`
	} `json:"summary"`
}

func inferSimJSON(t *testing.T, args ...string) inferSimOut {
	t.Helper()
	code, out, e := drover(t, append([]string{"infer", "sim", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("drover infer sim %v: exit %d: %s", args, code, e)
	}
	var s inferSimOut
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("drover infer sim %v: %v\n%s", args, err, out)
	}
	return s
}

func inferRelErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// TestInferSimMatchesSplitwiseSim: drover infer sim on the Azure 2023 code
// trace, shifted 1 s, gives SplitwiseSim's own summaries of its two
// deployments of issue 34's acceptance (TTFT and E2E mean and p99, the
// numbers policies/splitwise's TestAzureCodeMatchesSplitwiseSim holds,
// from SplitwiseSim's a_baseline_h100 and b_splitwise_ha runs): the CLI
// wires presets, routers and the trace as the library test does.
func TestInferSimMatchesSplitwiseSim(t *testing.T) {
	perf := inferPerfFlag(t)
	code := inferAzureTrace(t, "code")
	tests := []struct {
		cluster string
		want    [4]float64 // TTFT mean, p99; E2E mean, p99 (s)
	}{
		{"splitwise-baseline", [4]float64{2.9118527239050604, 26.050906896856763, 7.207874566152969, 39.243011223986606}},
		{"splitwise-ha", [4]float64{7.194863452269439, 43.83536508450566, 14.823520962955628, 75.27238872096198}},
	}
	for _, tt := range tests {
		t.Run(tt.cluster, func(t *testing.T) {
			s := inferSimJSON(t, append(perf, "--trace", code, "--shift", "1", "--cluster", tt.cluster)...)
			got := [4]float64{s.Summary.TTFT.Mean, s.Summary.TTFT.P99, s.Summary.E2E.Mean, s.Summary.E2E.P99}
			for i := range got {
				if inferRelErr(got[i], tt.want[i]) > 1e-9 {
					t.Fatalf("(TTFT mean, p99, E2E mean, p99) = %v, SplitwiseSim %v", got, tt.want)
				}
			}
			if s.Summary.Finished != 8819 || s.KVBytes != 2621440 {
				t.Errorf("%d of %d finished, %d KV bytes a token; want 8,819 and SplitwiseSim's 2,621,440", s.Summary.Finished, s.Summary.Requests, s.KVBytes)
			}
			// The colocated baseline moves no KV cache; Splitwise-HA
			// moves each transfer's prompt + 1 tokens of it.
			if (tt.cluster == "splitwise-baseline") != (s.Summary.Transfers == 0) {
				t.Errorf("%d transfers", s.Summary.Transfers)
			}
		})
	}
}

// TestInferSimDefault: drover infer sim without flags (but --perf, as the
// test runs in cmd/drover) runs the built-in workload, on measured GPUs,
// the same bit for bit twice; another seed draws another workload.
func TestInferSimDefault(t *testing.T) {
	perf := inferPerfFlag(t)
	run := func(args ...string) string {
		code, out, e := drover(t, append(append([]string{"infer", "sim"}, perf...), args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, e)
		}
		return regexp.MustCompile(`(?m)^simulated .*$`).ReplaceAllString(out, "")
	}
	a, b := run(), run()
	if a != b {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
	for _, want := range []string{"builtin: 1200 requests", "1200 finished of 1200", "mixed_pool", "extrapolated  none", "TTFT", "TPOT", "E2E (JCT)", "SLO ", "GPU ", "KV moved "} {
		if !strings.Contains(a, want) {
			t.Errorf("output lacks %q:\n%s", want, a)
		}
	}
	if c := run("--seed", "2"); c == a {
		t.Error("seeds 1 and 2 gave the same run")
	}
}

// TestInferSimExtrapolatedAndFormats: a GPU type without measured rows is
// named as extrapolated in the text and the JSON; a compressed KV format
// moves fewer bytes than the dense cache for the same placements (HACK
// 2-bit against 16-bit: under a fifth) and spends time on its work.
func TestInferSimExtrapolatedAndFormats(t *testing.T) {
	perf := inferPerfFlag(t)
	base := append(perf, "--requests", "300", "--decode-gpu", "v100-32gb", "--kv-size", "arch")
	dense := inferSimJSON(t, base...)
	if got := dense.Summary.Extrapolated; len(got) != 1 || got[0] != "v100-32gb" {
		t.Errorf("extrapolated %v, want [v100-32gb]", got)
	}
	hack := inferSimJSON(t, append(base, "--kv-format", "hack-pi64")...)
	if hack.Format != "hack-pi64" || dense.Format != "fp16" {
		t.Errorf("formats %q and %q", dense.Format, hack.Format)
	}
	if r := float64(hack.Summary.KVBytesMoved) / float64(dense.Summary.KVBytesMoved); !(r > 0 && r < 0.2) {
		t.Errorf("HACK moved %d bytes, the dense cache %d: ratio %.3f, want under 0.2", hack.Summary.KVBytesMoved, dense.Summary.KVBytesMoved, r)
	}
	if !(hack.Summary.FormatShare > 0) || dense.Summary.FormatShare != 0 {
		t.Errorf("format shares %g (hack) and %g (dense)", hack.Summary.FormatShare, dense.Summary.FormatShare)
	}
	code, out, _ := drover(t, append([]string{"infer", "sim"}, base...)...)
	if code != 0 || !strings.Contains(out, "extrapolated  v100-32gb") {
		t.Errorf("exit %d; the text does not name v100-32gb as extrapolated:\n%s", code, out)
	}
}

// TestInferBadFlags: bad values are refused before anything runs, with an
// error that names the flag, exit 1 and nothing on stdout.
func TestInferBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"router", []string{"infer", "sim", "--router", "bogus"}, `--router "bogus": unknown router "bogus"`},
		{"router format", []string{"infer", "sim", "--router", "mixed_pool+int3"}, "--router"},
		{"kv-format", []string{"infer", "sim", "--kv-format", "fp8"}, "--kv-format"},
		{"cluster", []string{"infer", "sim", "--cluster", "dgx"}, `--cluster "dgx"`},
		{"format", []string{"infer", "sim", "--format", "jobs"}, `--format "jobs"`},
		{"arrivals", []string{"infer", "sim", "--arrivals", "uniform"}, `--arrivals "uniform"`},
		{"cv poisson", []string{"infer", "sim", "--cv", "2"}, "--cv 2: poisson gaps have CV 1"},
		{"model", []string{"infer", "sim", "--model", "qwen3-8b"}, `--model "qwen3-8b"`},
		{"gpu", []string{"infer", "sim", "--decode-gpu", "b200"}, `--decode-gpu "b200"`},
		{"kv-size", []string{"infer", "sim", "--kv-size", "mha"}, `--kv-size "mha"`},
		{"gap-scale", []string{"infer", "sim", "--gap-scale", "0"}, "--gap-scale 0: want a factor"},
		{"tp", []string{"infer", "sim", "--tp", "0"}, "--tp 0: want 1 to 64"},
		{"slo", []string{"infer", "sim", "--slo-ttft", "-1"}, "--slo-ttft -1"},
		{"link", []string{"infer", "sim", "--link-gbps", "NaN"}, "--link-gbps NaN"},
		{"max-tokens 1", []string{"infer", "sim", "--max-tokens", "1"}, "--max-tokens 1"},
		{"eval routers", []string{"infer", "eval", "--routers", "token_jsq@nowhere", "--out", "OUT"}, `--routers: "token_jsq@nowhere": deployment "nowhere"`},
		{"eval routers twice", []string{"infer", "eval", "--routers", "token_jsq,token_jsq", "--out", "OUT"}, "--routers: token_jsq listed twice"},
		{"eval seeds", []string{"infer", "eval", "--seeds", "5-1", "--out", "OUT"}, "--seeds"},
		{"eval parallel", []string{"infer", "eval", "--parallel", "-1", "--out", "OUT"}, "--parallel -1"},
		{"format-step name", []string{"infer", "sim", "--format-step", "fp8=0.001"}, `--format-step "fp8=0.001": kv: bad format`},
		{"format-step pair", []string{"infer", "sim", "--format-step", "hack-pi64"}, `"hack-pi64": want FORMAT=SECONDS`},
		{"format-step seconds", []string{"infer", "sim", "--format-step", "hack=-1"}, "hack-pi64=-1: want 0 to 60 seconds"},
		{"format-step twice", []string{"infer", "eval", "--format-step", "hack=1,hack-pi64=2", "--out", "OUT"}, "hack-pi64 given twice"},
		{"stage-gbps", []string{"infer", "sim", "--stage-gbps", "-1"}, "--stage-gbps -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.ReplaceAll(a, "OUT", out)
			}
			code, stdout, stderr := drover(t, args...)
			if code != 1 || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
	if code, _, e := drover(t, "infer", "nope"); code != 2 || !strings.Contains(e, `unknown subcommand "nope"`) {
		t.Errorf("drover infer nope: exit %d, %q", code, e)
	}
	if code, _, e := drover(t, "infer", "sim", "extra"); code != 2 || !strings.Contains(e, `unexpected argument "extra"`) {
		t.Errorf("drover infer sim extra: exit %d, %q", code, e)
	}
}

// inferEvalSummary is the part of summary.json the tests read.
type inferEvalSummary struct {
	Meta struct {
		Seeds    []uint64 `json:"seeds"`
		SeedNote string   `json:"seed_note"`
	} `json:"meta"`
	Routers []struct {
		Name    string `json:"name"`
		Metrics map[string]struct {
			Mean float64  `json:"mean"`
			CI95 *float64 `json:"ci95"`
			N    int      `json:"n"`
		} `json:"metrics"`
		Runs []struct {
			Seed    uint64 `json:"seed"`
			Trace   string `json:"trace"`
			Summary struct {
				Rejected int                    `json:"rejected"`
				TTFT     struct{ Mean float64 } `json:"ttft_s"`
				E2E      struct{ Mean float64 } `json:"e2e_s"`
			} `json:"summary"`
		} `json:"runs"`
	} `json:"routers"`
}

func readInferEvalSummary(t *testing.T, dir string) inferEvalSummary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s inferEvalSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestInferEval: drover infer eval writes its table, summary and plots;
// each of its runs is the run drover infer sim makes of the same router,
// deployment and seed (the eval is many sims, in parallel, and parallelism
// changes nothing); a metric's mean is the mean of its runs, and the
// built-in workload's seeds differ, so the intervals have width.
func TestInferEval(t *testing.T) {
	perf := inferPerfFlag(t)
	dir := t.TempDir()
	args := append([]string{"infer", "eval", "--quiet", "--seeds", "1-3", "--requests", "200", "--out", dir,
		"--routers", "token_jsq@splitwise-baseline,mixed_pool,mixed_pool+hack-pi128,hack,disagg-fp16", "--kv-size", "arch"}, perf...)
	code, out, e := drover(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	for _, f := range []string{"table.md", "summary.json", "ttft_cdf.png", "tpot_cdf.png", "jct_cdf.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if strings.Contains(out, "| rejected |") {
		t.Errorf("a column of rejected requests where none was:\n%s", out)
	}
	for _, want := range []string{"| token_jsq@splitwise-baseline |", "| mixed_pool |", "| mixed_pool+hack-pi128 |", "| hack |", "| disagg-fp16 |", " ± ", "each seed draws the built-in workload"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s := readInferEvalSummary(t, dir)
	if len(s.Routers) != 5 {
		t.Fatalf("%d routers in summary.json", len(s.Routers))
	}
	sims := map[string][]string{
		"token_jsq@splitwise-baseline": {"--cluster", "splitwise-baseline"},
		"mixed_pool":                   {},
		"mixed_pool+hack-pi128":        {"--kv-format", "hack-pi128"},
		"hack":                         {"--router", "hack"},
		"disagg-fp16":                  {"--router", "disagg-fp16"},
	}
	for _, r := range s.Routers {
		m := r.Metrics["ttft_mean_s"]
		if m.N != 3 || m.CI95 == nil || !(*m.CI95 > 0) {
			t.Errorf("%s: TTFT mean %+v: want 3 seeds and a positive interval", r.Name, m)
		}
		sum := 0.0
		for _, run := range r.Runs {
			sum += run.Summary.TTFT.Mean
			seed := []string{"--seed", strconv.FormatUint(run.Seed, 10)}
			one := inferSimJSON(t, append(append(append(perf, "--requests", "200", "--kv-size", "arch"), sims[r.Name]...), seed...)...)
			if one.Summary.TTFT.Mean != run.Summary.TTFT.Mean || one.Summary.E2E.Mean != run.Summary.E2E.Mean {
				t.Errorf("%s seed %d: eval TTFT, E2E means %v, %v; drover infer sim %v, %v", r.Name, run.Seed,
					run.Summary.TTFT.Mean, run.Summary.E2E.Mean, one.Summary.TTFT.Mean, one.Summary.E2E.Mean)
			}
		}
		if inferRelErr(sum/3, m.Mean) > 1e-12 {
			t.Errorf("%s: TTFT mean %v, runs' mean %v", r.Name, m.Mean, sum/3)
		}
	}
}

// TestInferEvalReplayWindows: on a replayed trace with --duration, each
// seed replays another window (so the seeds' runs differ); without it
// every seed replays the whole trace and the eval says so.
func TestInferEvalReplayWindows(t *testing.T) {
	perf := inferPerfFlag(t)
	conv := inferAzureTrace(t, "conv")
	dir := t.TempDir()
	code, _, e := drover(t, append([]string{"infer", "eval", "--quiet", "--trace", conv, "--duration", "120", "--seeds", "1-2",
		"--routers", "mixed_pool", "--out", dir}, perf...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	s := readInferEvalSummary(t, dir)
	runs := s.Routers[0].Runs
	if len(runs) != 2 || runs[0].Trace == runs[1].Trace || runs[0].Summary.TTFT.Mean == runs[1].Summary.TTFT.Mean {
		t.Errorf("seeds 1 and 2 replayed the same window: %+v", runs)
	}
	if !strings.Contains(s.Meta.SeedNote, "120 s window") {
		t.Errorf("seed note %q", s.Meta.SeedNote)
	}
}

// TestTraceInspectLLM: drover trace inspect reads an LLM request trace
// when the file is no job workload: the Azure code trace's figures
// (datasets/llm TestInspectRealFiles: 8,819 requests, prompt p50 1,469
// and p99 7,436), and a request table Drover wrote.
func TestTraceInspectLLM(t *testing.T) {
	code, out, e := drover(t, "trace", "inspect", inferAzureTrace(t, "code"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	for _, want := range []string{"format    azure", "requests  8819", "1469", "7436"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	p := filepath.Join(t.TempDir(), "reqs.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := llm.WriteCSV(f, []llm.Request{{ID: 0, Arrival: 0.5, Prompt: 100, Output: 10}, {ID: 1, Arrival: 2.5, Prompt: 300, Output: 30}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out, e = drover(t, "trace", "inspect", p)
	if code != 0 || !strings.Contains(out, "requests  2") || !strings.Contains(out, "rate      0.500 req/s") {
		t.Errorf("exit %d, stderr %q:\n%s", code, e, out)
	}
}

// TestInferEvalLearned: a pd-rl checkpoint is a contender (its directory
// in --routers) on pd-rl's deployment (--cluster pd-rl). A checkpoint
// that behaviour cloning made of the speed-aware rule (policies/pdrl.Speed)
// sees the GPUs' speeds that HACK's fewest-queued-tokens rule ignores, and
// on held-out windows of the conv trace every run has a lower TTFT and
// JCT mean than HACK's (TestTrainPDRL: the gate's gain is 13%).
func TestInferEvalLearned(t *testing.T) {
	inferPerfFlag(t)
	conv := inferAzureTrace(t, "conv")
	dir := t.TempDir()
	conv, _ = filepath.Abs(conv)
	t.Chdir(filepath.Join("..", "..")) // drover train and the default --perf read ../shared from the root
	ckpt, _ := pdrlBC(t)               // TestTrainPDRL's checkpoint, trained once
	code, out, e := drover(t, "infer", "eval", "--quiet", "--cluster", "pd-rl", "--routers", "hack,"+ckpt, "--trace", conv,
		"--start", "2400", "--duration", "120", "--seeds", "1-2", "--out", dir)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, e)
	}
	if !strings.Contains(out, "pd-rl:"+ckpt) || !strings.Contains(out, "KV format chosen per request") {
		t.Errorf("output:\n%s", out)
	}
	s := readInferEvalSummary(t, dir)
	if len(s.Routers) != 2 {
		t.Fatalf("%d routers", len(s.Routers))
	}
	for i, run := range s.Routers[1].Runs {
		h := s.Routers[0].Runs[i]
		if !(run.Summary.TTFT.Mean < h.Summary.TTFT.Mean) || !(run.Summary.E2E.Mean < 0.95*h.Summary.E2E.Mean) {
			t.Errorf("seed %d: pd-rl TTFT, E2E means %v, %v; HACK %v, %v", run.Seed, run.Summary.TTFT.Mean, run.Summary.E2E.Mean, h.Summary.TTFT.Mean, h.Summary.E2E.Mean)
		}
	}
	if code, _, e := drover(t, "infer", "sim", "--router", ckpt+"+fp16"); code != 1 || !strings.Contains(e, "chooses every request's KV format itself") {
		t.Errorf("a learned router with a format: exit %d, %q", code, e)
	}
	if code, _, e := drover(t, "infer", "sim", "--cluster", "pd-rl", "--prefill", "3"); code != 1 || !strings.Contains(e, "--prefill: --cluster pd-rl is a fixed deployment") {
		t.Errorf("pool flags on pd-rl: exit %d, %q", code, e)
	}
}
