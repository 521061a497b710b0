package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/atomicfile"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies/compare"
)

// defaultInferContenders are what drover infer eval compares by default:
// issue 34's two SplitwiseSim deployments, the colocated baseline under
// token_jsq and Splitwise-HA under mixed_pool.
const defaultInferContenders = "token_jsq@splitwise-baseline,mixed_pool@splitwise-ha"

// inferEvalFlags are drover infer eval's flags.
type inferEvalFlags struct {
	*inferSetupFlags
	routers, kvFormat, seeds, out *string
	parallel                      *int
	quiet                         *bool
}

// inferMetric is one column of the comparison: a figure of each run.
type inferMetric struct {
	key, header string
	of          func(infer.Summary) float64
	format      string
}

// inferMetrics are the figures drover infer eval reports, each a mean
// over seeds with its 95% interval.
var inferMetrics = []inferMetric{
	{"ttft_mean_s", "TTFT mean (s)", func(s infer.Summary) float64 { return s.TTFT.Mean }, "%.3f"},
	{"ttft_p99_s", "TTFT p99 (s)", func(s infer.Summary) float64 { return s.TTFT.P99 }, "%.3f"},
	{"tpot_mean_s", "TPOT mean (s)", func(s infer.Summary) float64 { return s.TPOT.Mean }, "%.4f"},
	{"tpot_p99_s", "TPOT p99 (s)", func(s infer.Summary) float64 { return s.TPOT.P99 }, "%.4f"},
	{"e2e_mean_s", "JCT mean (s)", func(s infer.Summary) float64 { return s.E2E.Mean }, "%.3f"},
	{"e2e_p99_s", "JCT p99 (s)", func(s infer.Summary) float64 { return s.E2E.P99 }, "%.3f"},
	{"slo_attainment_pct", "SLO (%)", func(s infer.Summary) float64 { return 100 * s.SLOAttainment }, "%.1f"},
	{"gpu_cost_usd", "GPU cost ($)", func(s infer.Summary) float64 { return s.GPUCost }, "%.2f"},
	{"kv_moved_gb", "KV moved (GB)", func(s infer.Summary) float64 { return float64(s.KVBytesMoved) / 1e9 }, "%.2f"},
	{"format_share_pct", "KV format (% of JCT)", func(s infer.Summary) float64 { return 100 * s.FormatShare }, "%.2f"},
	{rejectedKey, "rejected", func(s infer.Summary) float64 { return float64(s.Rejected) }, "%.1f"},
}

// rejectedKey is the metric of the requests rejected a run (their KV
// cache never fits), a column of the table only when some run rejected
// some.
const rejectedKey = "rejected"

// inferEvalRun is one simulation of a comparison.
type inferEvalRun struct {
	Seed    uint64
	Trace   string
	Summary infer.Summary
	// ttft, tpot, e2e are the finished requests' latencies, for the CDFs.
	ttft, tpot, e2e []float64
	// unserved is the run's end when it left requests unserved
	// (incompleteRun: rejected, or never finished), nil otherwise.
	unserved error
}

// inferEvalRow is one contender's runs and estimates.
type inferEvalRow struct {
	c            inferContender
	cluster      string
	runs         []inferEvalRun
	est          []compare.Estimate
	extrapolated []string
	derived      bool // a run's latencies came from the built-in roofline
}

func inferEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("infer eval", stderr)
	f := defineInferEvalFlags(fs)
	given, defFormat, err := f.parse(fs, args, f.kvFormat)
	if err != nil {
		return err
	}
	rows, cs, err := f.contenders(defFormat)
	if err != nil {
		return err
	}
	seeds, err := parseSeeds(*f.seeds)
	if err != nil {
		return fmt.Errorf("--seeds: %w", err)
	}
	kvSize, err := resolveKVSize(*f.kvSize, cs)
	if err != nil {
		return err
	}
	perf, err := readPerf(*f.perf, given["perf"], stderr)
	if err != nil {
		return err
	}
	model := inferModel(*f.model, kvSize)
	deps := map[string]inferDeployment{}
	for _, r := range rows {
		d, ok := deps[r.c.cluster]
		if !ok {
			if d, err = f.deployment(r.c.cluster, perf, given); err != nil {
				return err
			}
			d.cfg.Model = model
			deps[r.c.cluster] = d
		}
		r.cluster = d.desc
		if err := r.c.load(d.cfg); err != nil {
			return err
		}
	}
	w, err := f.loadWorkload()
	if err != nil {
		return err
	}
	reqs := make([][]llm.Request, len(seeds))
	whats := make([]string, len(seeds))
	for i, s := range seeds {
		if reqs[i], whats[i], err = w.requests(s, true); err != nil {
			return err
		}
	}
	meta := inferEvalMeta{Command: "drover infer eval " + strings.Join(args, " "), Trace: inferTraceText(w, whats[0], seeds[0], *f.duration),
		Seeds: seeds, SeedNote: inferSeedNote(w, *f.duration), Model: model.Name, KVBytesPerToken: model.KVBytesPerToken, KVSize: kvSize,
		SLO: sloText(infer.SLO{TTFT: *f.sloTTFT, TPOT: *f.sloTPOT, E2E: *f.sloE2E}), Perf: *f.perf}
	printInferEvalHead(stdout, meta, *f.seeds, model, deps, rows)
	dir, err := evalOutDir(*f.out, "infer-eval-"+strings.TrimSuffix(filepath.Base(w.name), filepath.Ext(w.name)))
	if err != nil {
		return err
	}
	start := time.Now()
	if err := runInferEval(rows, deps, seeds, reqs, whats, *f.parallel, *f.quiet, stderr); err != nil {
		return err
	}
	wall := time.Since(start)
	for _, r := range rows {
		r.estimate()
	}
	fmt.Fprintln(stdout)
	if err := writeInferTable(stdout, rows, model.Name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nmean ± half-width of the 95%% t-interval over %d seeds; %d simulations in %s\n", len(seeds), len(rows)*len(seeds), wall.Round(time.Millisecond))
	if err := writeInferEvalFiles(stdout, dir, rows, meta, fmt.Sprintf("%s, %d seeds", w.name, len(seeds))); err != nil {
		return err
	}
	return unservedRunsErr(rows)
}

// unservedRunsErr is the error an eval ends with, after its table and
// files, when some of its runs left requests unserved: how many runs and
// requests, and the first run's reason. The figures count the requests
// that ran.
func unservedRunsErr(rows []*inferEvalRow) error {
	runs, total, rejected := 0, 0, 0
	var first error
	for _, r := range rows {
		for _, run := range r.runs {
			total++
			if run.unserved == nil {
				continue
			}
			runs++
			rejected += run.Summary.Rejected
			if first == nil {
				first = fmt.Errorf("%s, seed %d: %w", r.c.name, run.Seed, run.unserved)
			}
		}
	}
	if first == nil {
		return nil
	}
	return fmt.Errorf("%d of %d runs left requests unserved, %d rejected in all (a request is rejected when its KV cache is larger than its instances' memory less the model's weights); the table and files count the requests that ran; the first: %w",
		runs, total, rejected, first)
}

// defineInferEvalFlags defines drover infer eval's flags on fs.
func defineInferEvalFlags(fs *flag.FlagSet) *inferEvalFlags {
	f := &inferEvalFlags{inferSetupFlags: defineInferSetupFlags(fs)}
	f.routers = fs.String("routers", defaultInferContenders, fmt.Sprintf("comma-separated contenders ROUTER[+FORMAT][@PRESET]: a router (%v, auto for the preset's, or a pd-rl checkpoint directory; drover infer sim -h describes them), a KV format for its requests (fp16, int8, kvquant, cachegen, hack-pi32|64|128; default --kv-format) and a deployment preset (%v; default --cluster, with the pool flags' overrides)", routerNames(), presetNames()))
	f.kvFormat = fs.String("kv-format", "", "KV format of the contenders that name none (empty: each router's own, hack-pi64 for hack, fp16 for the others)")
	f.seeds = fs.String("seeds", "1-5", "seeds: numbers and ranges, e.g. 1-5 or 1,3,7-9. A seed draws the built-in workload (lengths and arrivals) or a lengths table's arrivals, or, for a replayed trace with --duration, the window's start")
	f.parallel = fs.Int("parallel", 0, "simulations at a time (0 = GOMAXPROCS)")
	f.out = fs.String("out", "", "directory for table.md, summary.json and the CDF plots (default: a new runs/infer-eval-TRACE-TIME)")
	f.quiet = fs.Bool("quiet", false, "no progress output")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: drover infer eval [flags]\n\nReplays one request trace under several routers, each with a KV format and a\ndeployment, over seeds, and reports each figure as a mean over seeds with its 95%\nStudent-t interval: a table (stdout and table.md), summary.json, and the CDFs of\nTTFT, TPOT and JCT per router, pooled over seeds (PNG).")
		fs.PrintDefaults()
	}
	return f
}

// contenders reads --routers, each contender naming no format taking
// defFormat when not nil (--kv-format given): one row per contender, and
// the contenders.
func (f *inferEvalFlags) contenders(defFormat *kv.Format) ([]*inferEvalRow, []inferContender, error) {
	var rows []*inferEvalRow
	var cs []inferContender
	seen := map[string]bool{}
	for _, s := range strings.Split(*f.routers, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		c, err := parseContender(s, *f.cluster, defFormat)
		if err != nil {
			return nil, nil, fmt.Errorf("--routers: %w", err)
		}
		if seen[c.name] {
			return nil, nil, fmt.Errorf("--routers: %s listed twice", c.name)
		}
		seen[c.name] = true
		rows = append(rows, &inferEvalRow{c: c})
		cs = append(cs, c)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("--routers: empty list")
	}
	return rows, cs, nil
}

// printInferEvalHead prints what an eval compares, before it runs.
func printInferEvalHead(stdout io.Writer, meta inferEvalMeta, seeds string, model infer.Model, deps map[string]inferDeployment, rows []*inferEvalRow) {
	fmt.Fprintf(stdout, "trace      %s\n", meta.Trace)
	fmt.Fprintf(stdout, "seeds      %s (%d): %s\n", seeds, len(meta.Seeds), meta.SeedNote)
	fmt.Fprintf(stdout, "model      %s, KV %s\n", model.Name, kvSizeText(model, meta.KVSize))
	for _, name := range presetNames() {
		if d, ok := deps[name]; ok {
			fmt.Fprintf(stdout, "cluster    %s\n", d.desc)
		}
	}
	fmt.Fprintf(stdout, "SLO        %s\n", meta.SLO)
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.c.name
	}
	fmt.Fprintf(stdout, "routers    %s\n", strings.Join(names, ", "))
}

// estimate computes the row's estimates over its runs and collects its
// extrapolated GPU types.
func (r *inferEvalRow) estimate() {
	r.est = make([]compare.Estimate, len(inferMetrics))
	for m, met := range inferMetrics {
		xs := make([]float64, len(r.runs))
		for k, run := range r.runs {
			xs[k] = met.of(run.Summary)
		}
		r.est[m] = compare.MeanCI(xs, 0.95)
	}
	for _, run := range r.runs {
		r.derived = r.derived || run.Summary.Derived
		for _, g := range run.Summary.Extrapolated {
			if !slices.Contains(r.extrapolated, g) {
				r.extrapolated = append(r.extrapolated, g)
			}
		}
	}
}

// inferTraceText describes the workload of an eval by its first seed's
// requests, named as such when the seeds' requests differ.
func inferTraceText(w *inferWorkload, first string, seed uint64, duration float64) string {
	if w.trace != nil && duration == 0 {
		return first
	}
	return fmt.Sprintf("%s (seed %d's)", first, seed)
}

// inferSeedNote says what a seed changes in w's requests.
func inferSeedNote(w *inferWorkload, duration float64) string {
	switch {
	case w.trace == nil && w.lengths == nil:
		return "each seed draws the built-in workload's lengths and arrivals"
	case w.trace == nil:
		return "each seed shuffles the lengths table's rows and draws their arrivals"
	case duration > 0:
		return fmt.Sprintf("each seed replays a %g s window of the trace starting at a time drawn uniformly from [--start, last arrival - %g s]", duration, duration)
	}
	return "the trace replays whole, so every seed gives the same run (zero-width intervals); give --duration for random windows"
}

// runInferEval runs every contender on every seed's requests, parallel at
// a time (0: GOMAXPROCS), each run deterministic; a progress bar on
// stderr unless quiet.
func runInferEval(rows []*inferEvalRow, deps map[string]inferDeployment, seeds []uint64, reqs [][]llm.Request, whats []string, parallel int, quiet bool, stderr io.Writer) error {
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	for _, r := range rows {
		r.runs = make([]inferEvalRun, len(seeds))
	}
	total := len(rows) * len(seeds)
	var bar *progress.Bar
	if !quiet {
		bar = progress.New(stderr, "infer eval", total)
	}
	var (
		mu    sync.Mutex
		done  int
		first error
		wg    sync.WaitGroup
	)
	jobs := make(chan [2]int)
	for range min(parallel, total) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, k := rows[j[0]], j[1]
				run, err := inferEvalOne(deps[r.c.cluster].cfg, r.c, reqs[k])
				run.Seed, run.Trace = seeds[k], whats[k]
				if incompleteRun(err) {
					run.unserved, err = err, nil
				}
				mu.Lock()
				r.runs[k] = run
				if err != nil && first == nil {
					first = fmt.Errorf("%s, seed %d: %w", r.c.name, seeds[k], err)
				}
				done++
				if bar != nil {
					bar.Set(done)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range rows {
		for k := range seeds {
			jobs <- [2]int{i, k}
		}
	}
	close(jobs)
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	return first
}

// inferEvalOne simulates contender c on cfg serving reqs. A run that
// leaves requests unserved (incompleteRun) returns its error with the
// run of the requests that finished.
func inferEvalOne(cfg infer.Config, c inferContender, reqs []llm.Request) (inferEvalRun, error) {
	s, err := infer.New(cfg, reqs)
	if err != nil {
		return inferEvalRun{}, err
	}
	sum, err := s.Run(c.newRouter())
	run := inferEvalRun{Summary: sum}
	if err != nil && !incompleteRun(err) {
		return run, err
	}
	for _, r := range s.Results() {
		if math.IsNaN(r.End) {
			continue // rejected, or never finished
		}
		run.ttft = append(run.ttft, r.TTFT())
		run.tpot = append(run.tpot, r.TPOT())
		run.e2e = append(run.e2e, r.E2E())
	}
	return run, err
}

// writeInferTable writes the comparison as a Markdown table; its column
// of rejected requests (a mean over seeds) only when some run rejected
// some.
func writeInferTable(w io.Writer, rows []*inferEvalRow, model string) error {
	rejected := false
	for _, r := range rows {
		for _, run := range r.runs {
			rejected = rejected || run.Summary.Rejected > 0
		}
	}
	shown := func(m int) bool { return rejected || inferMetrics[m].key != rejectedKey }
	var b strings.Builder
	b.WriteString("| router |")
	for m, met := range inferMetrics {
		if shown(m) {
			b.WriteString(" " + met.header + " |")
		}
	}
	b.WriteString("\n|---|")
	for m := range inferMetrics {
		if shown(m) {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + r.c.name + " |")
		for m, e := range r.est {
			if shown(m) {
				b.WriteString(" " + estText(e, inferMetrics[m].format) + " |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, r := range rows {
		acc := accuracyNote(r.c.format, model)
		if r.c.ckpt != "" {
			acc = "per the formats chosen"
		}
		lat := ""
		if r.derived {
			lat = "; latencies " + builtinPerfNote
		}
		fmt.Fprintf(&b, "- %s on %s; KV format %s, accuracy loss %s; extrapolated GPUs: %s%s\n", r.c.name, r.cluster,
			r.c.formatName(), acc, extrapolatedNote(r.extrapolated, r.derived), lat)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// estText prints e as "mean ± half-width" in format.
func estText(e compare.Estimate, format string) string {
	if e.N < 2 || e.HalfWidth != e.HalfWidth {
		return fmt.Sprintf(format, e.Mean)
	}
	return fmt.Sprintf(format+" ± "+format, e.Mean, e.HalfWidth)
}

// inferEvalMeta is the setting of an eval, in summary.json.
type inferEvalMeta struct {
	Command         string   `json:"command"`
	Trace           string   `json:"trace"`
	Seeds           []uint64 `json:"seeds"`
	SeedNote        string   `json:"seed_note"`
	Model           string   `json:"model"`
	KVBytesPerToken int64    `json:"kv_bytes_per_token"`
	KVSize          string   `json:"kv_size"`
	SLO             string   `json:"slo"`
	Perf            string   `json:"perf_table"`
}

// writeInferEvalFiles writes table.md, summary.json and the CDFs into
// dir, naming each on stdout.
func writeInferEvalFiles(stdout io.Writer, dir string, rows []*inferEvalRow, meta inferEvalMeta, title string) error {
	cdf := func(name string, of func(inferEvalRun) []float64) func(io.Writer) error {
		return func(w io.Writer) error {
			samples := make([]plot.Sample, len(rows))
			for i, r := range rows {
				samples[i].Name = r.c.name
				for _, run := range r.runs {
					samples[i].Values = append(samples[i].Values, of(run)...)
				}
			}
			return plot.CDF(w, plot.Options{Title: name + " CDF: " + title + " (pooled over seeds)", XLabel: name + " (s, log scale)", LogX: true}, samples)
		}
	}
	outputs := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"table.md", func(w io.Writer) error { return writeInferTable(w, rows, meta.Model) }},
		{"summary.json", func(w io.Writer) error { return writeInferSummary(w, rows, meta) }},
		{"ttft_cdf.png", cdf("TTFT", func(r inferEvalRun) []float64 { return r.ttft })},
		{"tpot_cdf.png", cdf("TPOT", func(r inferEvalRun) []float64 { return r.tpot })},
		{"jct_cdf.png", cdf("JCT", func(r inferEvalRun) []float64 { return r.e2e })},
	}
	for _, o := range outputs {
		p := filepath.Join(dir, o.name)
		if err := atomicfile.Write(p, o.write); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		fmt.Fprintf(stdout, "wrote      %s\n", p)
	}
	return nil
}

// writeInferSummary writes the comparison as JSON: the setting, and per
// contender its estimates and every run's summary.
func writeInferSummary(w io.Writer, rows []*inferEvalRow, meta inferEvalMeta) error {
	type runJSON struct {
		Seed    uint64           `json:"seed"`
		Trace   string           `json:"trace"`
		Summary inferSummaryJSON `json:"summary"`
	}
	type rowJSON struct {
		Name         string                      `json:"name"`
		Router       string                      `json:"router"`
		Format       string                      `json:"kv_format"`
		Cluster      string                      `json:"cluster"`
		Accuracy     string                      `json:"accuracy_loss"`
		Extrapolated []string                    `json:"extrapolated_gpus"`
		Latencies    string                      `json:"latencies"`
		Metrics      map[string]compare.Estimate `json:"metrics"`
		Runs         []runJSON                   `json:"runs"`
	}
	out := struct {
		Meta    inferEvalMeta `json:"meta"`
		Routers []rowJSON     `json:"routers"`
	}{Meta: meta}
	for _, r := range rows {
		row := rowJSON{Name: r.c.name, Router: r.c.router, Format: r.c.formatName(), Cluster: r.cluster,
			Accuracy: accuracyNote(r.c.format, meta.Model), Extrapolated: r.extrapolated,
			Latencies: latencyNote(r.derived), Metrics: map[string]compare.Estimate{}}
		if row.Extrapolated == nil {
			row.Extrapolated = []string{}
		}
		for m, e := range r.est {
			row.Metrics[inferMetrics[m].key] = e
		}
		for _, run := range r.runs {
			row.Runs = append(row.Runs, runJSON{run.Seed, run.Trace, summaryJSON(run.Summary)})
		}
		out.Routers = append(out.Routers, row)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
