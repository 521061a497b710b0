package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/internal/plot"
	"github.com/drover-sched/drover/internal/progress"
	"github.com/drover-sched/drover/policies/modserve"
)

// drover infer mm: the multimodal serving simulator (env/infer/mm) and
// ModServe's static ablation ladder (policies/modserve), issue 35.

const inferMMUsage = `usage: drover infer mm sim|eval [flags]

  sim   one router on one deployment over a window of the LMM 2025 week
        (datasets/llm's generator, or -trace FILE in the Azure LMM 2025
        schema): TTFT and TBT per modality, SLO attainment, GPU-hours
  eval  ModServe's static ablation ladder (monolith, Decoup, Sched,
        ModServe; and ModServe choosing the text instance once the images
        are encoded) on the paper's 16 servers over a sweep of loads, both
        models: a markdown table, the gains against the paper's, and a
        PNG of P99 and mean TTFT against load

Run "drover infer mm SUBCOMMAND -h" for its flags.`

func init() {
	cmdNumRules["drover infer mm sim"] = inferMMNumRules
	cmdNumRules["drover infer mm eval"] = inferMMNumRules
}

// inferMMNumRules are the rules of drover infer mm's numeric flags.
var inferMMNumRules = map[string]numRule{
	"scale":      above(0, 128, "a factor in (0, 128] on the week's 1M requests (15: 15M a week)"),
	"start":      within(0, llm.LMM2025Minutes-1, fmt.Sprintf("a minute of the week, 0 to %d", llm.LMM2025Minutes-1)),
	"minutes":    within(0, llm.LMM2025Minutes, fmt.Sprintf("0 (to the week's end) to %d minutes", llm.LMM2025Minutes)),
	"slo-factor": within(0, 1000, "0 (no objective) or a factor up to 1000"),
	"max-prompt": within(0, llm.MaxTokens, fmt.Sprintf("0 (no cut) or 1 to %d tokens", llm.MaxTokens)),
	"mono":       within(-1, mm.MaxInstances, fmt.Sprintf("-1 (the paper's) or 0 to %d instances", mm.MaxInstances)),
	"image":      within(-1, mm.MaxInstances, fmt.Sprintf("-1 (the paper's) or 0 to %d instances", mm.MaxInstances)),
	"text":       within(-1, mm.MaxInstances, fmt.Sprintf("-1 (the paper's) or 0 to %d instances", mm.MaxInstances)),
}

func runInferMM(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, inferMMUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, inferMMUsage)
		return flag.ErrHelp
	case "sim":
		return inferMMSim(args[1:], stdout, stderr)
	case "eval":
		return inferMMEval(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "drover infer mm: unknown subcommand %q (want sim or eval)\n", args[0])
	return errUsage
}

// mmWindow is the flags that pick the requests.
type mmWindow struct {
	start, minutes *int
	seed           *uint64
	trace          *string
	link           *string
	sloFactor      *float64
	maxPrompt      *int
	images         *string
	imageSeed      *uint64
	prompt         *string
}

func defineMMWindow(fs *flag.FlagSet) *mmWindow {
	return &mmWindow{
		start:     fs.Int("start", modserve.StaticStart, "first minute of the generated week's window (default: the busiest hour of image requests)"),
		minutes:   fs.Int("minutes", modserve.StaticMinutes, "the window's length in minutes (0: to the week's end)"),
		seed:      fs.Uint64("seed", 1, "seed of the generated week"),
		trace:     fs.String("trace", "", "replay this Azure LMM 2025 file (TIMESTAMP,NumImages,ContextTokens,GeneratedTokens; .csv or .csv.gz) instead of generating"),
		link:      fs.String("link", "rdma", "image-token link: rdma or tcp"),
		sloFactor: fs.Float64("slo-factor", 5, "SLO factor: objectives are this times the isolated latencies on the monolith"),
		maxPrompt: fs.Int("max-prompt", 0, "cut every text prompt to this many tokens (0: only to the model's context)"),
		images:    fs.String("images", "drawn", imagesUsage),
		imageSeed: fs.Uint64("image-seed", 0, "seed of the drawn image sizes"),
		prompt:    fs.String("prompt", "", promptUsage),
	}
}

// promptUsage is the -prompt flag's help.
const promptUsage = "how a request's prompt tokens (the trace's ContextTokens) are read: with-images (text plus each image's tokens in a GPT-4o-like production model, taken away; the default with -images drawn) or text (text only; the default with -images fixed)"

// imagesUsage is the -images flag's help.
const imagesUsage = "image sizes: drawn (each image's size drawn, median 500 px, P95 1100 px, tiled by the model's rule; prompts read as text plus the production model's image tokens) or fixed (every image 896x896, prompts read as text: the simulator before sizes were drawn)"

// setImages applies the -images, -image-seed and -prompt flags' values
// to c.
func setImages(c *mm.Config, images string, seed uint64, prompt string) error {
	switch images {
	case "drawn":
	case "fixed":
		*c = c.Fixed896()
	default:
		return fmt.Errorf("--images %q: want drawn or fixed", images)
	}
	c.Images.Seed = seed
	switch prompt {
	case "":
	case "with-images":
		c.PromptHasImageTokens = true
	case "text":
		c.PromptHasImageTokens = false
	default:
		return fmt.Errorf("--prompt %q: want with-images or text", prompt)
	}
	return nil
}

// requests returns the window's requests at scale x the week's rate.
func (w *mmWindow) requests(scale float64) ([]mm.Request, error) {
	if *w.trace != "" {
		data, err := inputfile.ReadFile(*w.trace, inputfile.Trace)
		if err != nil {
			return nil, err
		}
		tr, err := llm.DecodeAzure(data, llm.Options{Source: *w.trace})
		if err != nil {
			return nil, err
		}
		reqs := tr.Requests
		for i := range reqs {
			reqs[i].ID = i
		}
		return reqs, nil
	}
	n := int(math.Round(scale * llm.LMM2025Requests))
	return llm.LMMSynth{Requests: n, Start: *w.start, Minutes: *w.minutes}.Generate(rand.NewPCG(*w.seed, 1))
}

func (w *mmWindow) tune(c *mm.Config) error {
	switch *w.link {
	case "rdma":
		c.Link = mm.RDMA
	case "tcp":
		c.Link = mm.TCP
	default:
		return fmt.Errorf("--link %q: want rdma or tcp", *w.link)
	}
	c.SLO.Factor = *w.sloFactor
	c.MaxPrompt = *w.maxPrompt
	return setImages(c, *w.images, *w.imageSeed, *w.prompt)
}

func modelNames() string {
	var n []string
	for _, m := range mm.Models {
		n = append(n, m.Name)
	}
	return strings.Join(n, ", ")
}

func inferMMSim(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("infer mm sim", stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: drover infer mm sim [flags]\n\nRuns one router on one multimodal deployment over a window of the synthetic LMM 2025\nweek (or -trace FILE in the Azure LMM 2025 schema) and prints TTFT and TBT per\nmodality, SLO attainment, goodput and GPU-hours, with each stage cost's source.")
		fs.PrintDefaults()
	}
	model := fs.String("model", mm.Llama32_11BVision.Name, "model: "+modelNames())
	router := fs.String("router", modserve.Name, "router: "+strings.Join(modserve.Names, ", "))
	scale := fs.Float64("scale", 15, "load: the generated week's rate times this (1: the trace's 1M requests a week)")
	mono := fs.Int("mono", -1, "monolithic TP-4 instances (-1: the paper's 32 for the monolith router)")
	image := fs.Int("image", -1, "TP-1 image instances (-1: the paper's 48 for the decoupled routers)")
	text := fs.Int("text", -1, "TP-4 text instances (-1: the paper's 20 for the decoupled routers)")
	w := defineMMWindow(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	m, err := mm.LookupModel(*model)
	if err != nil {
		return fmt.Errorf("--model: %w", err)
	}
	r, err := modserve.New(*router)
	if err != nil {
		return fmt.Errorf("--router: %w", err)
	}
	cfg := modserve.StaticConfig(m, *router)
	for _, f := range []struct {
		v *int
		p mm.Pool
	}{{mono, mm.Mono}, {image, mm.Image}, {text, mm.Text}} {
		if *f.v >= 0 {
			cfg.Instances[f.p] = *f.v
		}
	}
	if err := w.tune(&cfg); err != nil {
		return err
	}
	reqs, err := w.requests(*scale)
	if err != nil {
		return err
	}
	s, err := mm.New(cfg, reqs)
	if err != nil {
		return err
	}
	sum, err := s.Run(r)
	if err != nil {
		return err
	}
	o := s.Objectives()
	fmt.Fprintf(stdout, "%s, %s: %v instances (mono, image, text), %d GPUs, link %s\n", m.Name, *router, cfg.Instances, cfg.GPUs(), cfg.Link.Name)
	fmt.Fprintf(stdout, "requests %d, finished %d, dropped %d; images cut %d, prompt tokens cut %d (context)\n", sum.Requests, sum.Finished, sum.Dropped, sum.CutImages, sum.CutTokens)
	for _, row := range []struct {
		name string
		st   mm.Stat
	}{{"TTFT", sum.TTFT}, {"TTFT image", sum.TTFTImage}, {"TTFT text", sum.TTFTText}, {"TBT", sum.TBT}, {"E2E", sum.E2E}} {
		fmt.Fprintf(stdout, "%-11s mean %9.4f s  P50 %9.4f  P90 %9.4f  P99 %9.4f  (%d requests)\n", row.name, row.st.Mean, row.st.P50, row.st.P90, row.st.P99, row.st.N)
	}
	fmt.Fprintf(stdout, "SLO (factor %g: TTFT text %.3f s, image %.3f s, TBT %.4f s): attainment %.4f, goodput %.2f req/s; %.1f GPU-hours\n",
		cfg.SLO.Factor, o.TTFTText, o.TTFTImage, o.TBT, sum.SLOAttainment, sum.Goodput, sum.GPUHours)
	for _, d := range sum.Derived {
		fmt.Fprintf(stdout, "cost %s\n", d)
	}
	return nil
}

// parseScales reads a comma-separated list of loads.
func parseScales(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0 && x <= 128) {
			return nil, fmt.Errorf("--scales: %q: want factors in (0, 128]", f)
		}
		out = append(out, x)
	}
	return out, nil
}

// mmPoint is one model's ladder at one load.
type mmPoint struct {
	model    mm.Model
	scale    float64
	requests int
	rungs    []modserve.Rung
	gains    []modserve.Gain
}

func inferMMEval(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("infer mm eval", stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: drover infer mm eval [flags]\n\nRuns ModServe's static ablation ladder (monolith, Decoup, Sched, ModServe,\nModServe-late) on the paper's 16 DGX-A100 servers over a sweep of loads, per model:\na markdown table with the gains against the paper's, and a PNG of P99 and mean\nTTFT against load (-out).")
		fs.PrintDefaults()
	}
	models := fs.String("models", mm.Llama32_11BVision.Name+","+mm.InternVL25_26B.Name, "models, comma-separated: "+modelNames())
	scales := fs.String("scales", "5,10,15,20,30", "loads, comma-separated: factors on the week's rate")
	out := fs.String("out", "", "write table.md and ttft.png here")
	quiet := fs.Bool("quiet", false, "no progress output")
	w := defineMMWindow(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	sc, err := parseScales(*scales)
	if err != nil {
		return err
	}
	var ms []mm.Model
	for n := range strings.SplitSeq(*models, ",") {
		m, err := mm.LookupModel(strings.TrimSpace(n))
		if err != nil {
			return fmt.Errorf("--models: %w", err)
		}
		ms = append(ms, m)
	}
	var tuneErr error
	tune := func(c *mm.Config) {
		if err := w.tune(c); err != nil {
			tuneErr = err
		}
	}
	var bar *progress.Bar
	if !*quiet {
		bar = progress.New(stderr, "infer mm eval", len(ms)*len(sc))
	}
	var pts []mmPoint
	for _, m := range ms {
		for _, x := range sc {
			reqs, err := w.requests(x)
			if err != nil {
				return err
			}
			rungs, err := modserve.StaticLadder(m, reqs, []string{modserve.Monolith, modserve.Decoup, modserve.Sched, modserve.Name, modserve.Late}, tune)
			if tuneErr != nil {
				return tuneErr
			}
			if err != nil {
				return err
			}
			gains, err := modserve.Gains(m, rungs)
			if err != nil {
				return err
			}
			pts = append(pts, mmPoint{model: m, scale: x, requests: len(reqs), rungs: rungs, gains: gains})
			if bar != nil {
				bar.Set(len(pts))
			}
		}
	}
	if bar != nil {
		bar.Finish()
	}
	table := mmTable(pts, *w.minutes)
	fmt.Fprint(stdout, table)
	if *out == "" {
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := plot.WriteFile(filepath.Join(*out, "table.md"), func(wr io.Writer) error {
		_, err := io.WriteString(wr, table)
		return err
	}); err != nil {
		return err
	}
	return plot.WriteFile(filepath.Join(*out, "ttft.png"), func(wr io.Writer) error { return mmPlot(wr, pts) })
}

// mmTable renders the sweep as markdown: per model and load, each rung's
// TTFT and SLO attainment, whether P99 TTFT is ordered, and the gains.
func mmTable(pts []mmPoint, minutes int) string {
	var b strings.Builder
	b.WriteString("| model | load (M req/week) | req/s | rung | TTFT mean (s) | TTFT P99 (s) | P99 image | P99 text | TBT mean (s) | SLO att. |\n|---|---|---|---|---|---|---|---|---|---|\n")
	span := 60.0 * float64(max(minutes, 1))
	for _, p := range pts {
		for _, r := range p.rungs {
			s := r.Summary
			fmt.Fprintf(&b, "| %s | %g | %.1f | %s | %.3f | %.3f | %.3f | %.3f | %.4f | %.3f |\n", p.model.Name, p.scale, float64(p.requests)/span, r.Name,
				s.TTFT.Mean, s.TTFT.P99, s.TTFTImage.P99, s.TTFTText.P99, s.TBT.Mean, s.SLOAttainment)
		}
	}
	b.WriteString("\n| model | load | P99 ordered (late) | Decoup vs monolith mean / P99 (paper) | Sched vs Decoup (paper 12 / 25) | ModServe vs Sched (paper 14 / 32) | ModServe-late vs Sched | gains within 10 points (late) |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range pts {
		// The ladder's P99 order, with ModServe (rung 3) or ModServe-late
		// (rung 4) at its top.
		ordered := func(top int) bool {
			ok := true
			for _, i := range []int{1, 2, top} {
				prev := i - 1
				if i == top {
					prev = 2
				}
				ok = ok && p.rungs[i].Summary.TTFT.P99 < p.rungs[prev].Summary.TTFT.P99
			}
			return ok
		}
		g := p.gains
		near := func(gs ...modserve.Gain) int {
			n := 0
			for _, x := range gs {
				for _, d := range []float64{x.Mean - x.PaperMean, x.P99 - x.PaperP99} {
					if math.Abs(d) <= 0.10 {
						n++
					}
				}
			}
			return n
		}
		fmt.Fprintf(&b, "| %s | %g | %v (%v) | %.0f%% / %.0f%% (%.0f / %.0f) | %.0f%% / %.0f%% | %.0f%% / %.0f%% | %.0f%% / %.0f%% | %d (%d) of 6 |\n", p.model.Name, p.scale, ordered(3), ordered(4),
			100*g[0].Mean, 100*g[0].P99, 100*g[0].PaperMean, 100*g[0].PaperP99, 100*g[1].Mean, 100*g[1].P99, 100*g[2].Mean, 100*g[2].P99, 100*g[3].Mean, 100*g[3].P99,
			near(g[0], g[1], g[2]), near(g[0], g[1], g[3]))
	}
	return b.String()
}

// mmPlot draws P99 and mean TTFT against load, a panel per model and
// statistic, a line per rung.
func mmPlot(w io.Writer, pts []mmPoint) error {
	var panels []plot.Panel
	for i := 0; i < len(pts); {
		j := i
		for j < len(pts) && pts[j].model.Name == pts[i].model.Name {
			j++
		}
		for _, st := range []string{"P99", "mean"} {
			var series []plot.Series
			for k := range pts[i].rungs {
				s := plot.Series{Name: pts[i].rungs[k].Name}
				for _, p := range pts[i:j] {
					v := p.rungs[k].Summary.TTFT.P99
					if st == "mean" {
						v = p.rungs[k].Summary.TTFT.Mean
					}
					s.X = append(s.X, p.scale)
					s.Y = append(s.Y, v)
				}
				series = append(series, s)
			}
			panels = append(panels, plot.Panel{YLabel: pts[i].model.Name + " TTFT " + st + " (s)", LogY: true, Series: series})
		}
		i = j
	}
	if len(panels) == 0 {
		return errors.New("drover infer mm eval: nothing to plot")
	}
	return plot.Stack(w, plot.Options{Title: "ModServe's static ladder, 128 A100s (derived costs)", XLabel: "load (million requests a week, the busiest hour's rate)", Height: 300 * len(panels)}, panels)
}
