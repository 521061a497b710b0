package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/serve/routelog"
)

// defaultRouteContenders are the routers drover eval --log compares a
// route log's answers with by default.
const defaultRouteContenders = "hack,disagg-fp16,token_jsq"

// servedRouteName is the row of the logged answers.
const servedRouteName = "served (log)"

// routeLogPath returns --log's value in args when it names a route log: a
// file (a decision log is a directory), or a directory holding
// routelog.FileName.
func routeLogPath(args []string) (string, bool) {
	var p string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		switch {
		case a == "-log" || a == "--log":
			if i+1 < len(args) {
				p = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "-log="), strings.HasPrefix(a, "--log="):
			_, p, _ = strings.Cut(a, "=")
		}
	}
	if p == "" {
		return "", false
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	if !fi.IsDir() {
		return p, true
	}
	if _, err := os.Stat(filepath.Join(p, routelog.FileName)); err == nil {
		return filepath.Join(p, routelog.FileName), true
	}
	return "", false
}

// evalRouteLog is drover eval --log on a route log (serve/routelog): it
// replays the logged request stream on the logged deployment in env/infer
// under the logged answers (the row "served (log)") and under each
// contender router, over seeds, and prints the comparison as drover infer
// eval does (TTFT, TPOT, JCT, SLO, cost, KV moved; means with their 95%
// t-intervals), with how closely the logged answers' replay meets the
// logged instance states.
func evalRouteLog(path string, args []string, stdout, stderr io.Writer) error {
	e, err := parseRouteEval(path, args, stderr)
	if err != nil {
		return err
	}
	if err := e.load(stderr); err != nil {
		return err
	}
	// The whole log under its answers: how closely the replay meets the
	// logged states.
	whole := e.rp.Logged()
	if _, err := inferEvalRouted(e.dep.cfg, whole, e.rp.Requests); err != nil {
		return fmt.Errorf("the logged answers: %w", err)
	}
	printRouteLogHead(stdout, e, whole)
	dir, err := evalOutDir(*e.out, "eval-routes")
	if err != nil {
		return err
	}
	start := time.Now()
	if err := e.run(); err != nil {
		return err
	}
	wall := time.Since(start)
	fmt.Fprintln(stdout)
	if err := writeInferTable(stdout, e.rows, e.dep.cfg.Model.Name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nmean ± half-width of the 95%% t-interval over %d seeds; %d simulations in %s\n", len(e.seeds), len(e.rows)*len(e.seeds), wall.Round(time.Millisecond))
	e.printGate(stdout)
	m := e.dep.cfg.Model
	meta := inferEvalMeta{Command: "drover eval " + strings.Join(args, " "), Trace: "route log " + path, Seeds: e.seeds,
		SeedNote: routeSeedNote(*e.sf.duration, e.rp.Span()), Model: m.Name, KVBytesPerToken: m.KVBytesPerToken,
		KVSize: e.kvSize, SLO: sloText(e.dep.cfg.SLO), Perf: *e.sf.perf}
	return writeInferEvalFiles(stdout, dir, e.rows, meta, fmt.Sprintf("%s, %d seeds", filepath.Base(path), len(e.seeds)))
}

// routeEval is a re-scoring of a route log: its flags, then what they
// and the log give.
type routeEval struct {
	path                    string
	sf                      *inferSetupFlags
	given                   map[string]bool
	policies, kvFormat, out *string
	seeds                   []uint64
	rp                      *routelog.Replay
	partial                 int
	dep                     inferDeployment
	kvSize                  string
	served                  *inferEvalRow
	rows                    []*inferEvalRow
}

// parseRouteEval parses drover eval's flags for a route log.
func parseRouteEval(path string, args []string, stderr io.Writer) (*routeEval, error) {
	fs := newFlags("eval routes", stderr)
	e := &routeEval{path: path, sf: defineInferSetupFlags(fs), given: map[string]bool{}}
	fs.String("log", "", "a route log (drover serve -route ... -log-dir DIR writes DIR/routes.jsonl; docs/format/route-log.md), or a directory holding one")
	e.policies = fs.String("policies", defaultRouteContenders, fmt.Sprintf("comma-separated routers to re-score the log with, ROUTER[+FORMAT]: %v, or a pd-rl checkpoint directory (drover infer eval -h)", routerNames()))
	e.kvFormat = fs.String("kv-format", "", "KV format of the routers that name none (empty: each router's own)")
	seeds := fs.String("seeds", "1", "seeds: with --duration D each replays a D-second window of the log starting at a time drawn uniformly from [0, last arrival - D]; without it every seed replays the whole log (zero-width intervals)")
	e.out = fs.String("out", "", "directory for table.md, summary.json and the CDF plots (default: a new runs/eval-routes-TIME)")
	fs.Bool("quiet", false, "accepted for drover eval's sake; the replays print no progress")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: drover eval --log ROUTES.jsonl [flags]\n\nRe-scores a policy server's route log: replays the logged request stream on the\nlogged deployment (env/infer) under the logged answers and under each router of\n--policies, and reports TTFT, TPOT, JCT, SLO attainment, GPU cost and KV bytes\nmoved per router, each a mean over seeds with its 95% t-interval. The deployment\nis the log's (-route-deployment of drover serve) unless --cluster is given; the\nother deployment flags of drover infer apply. The trace flags do not: the log is\nthe trace.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	fs.Visit(func(fl *flag.Flag) { e.given[fl.Name] = true })
	for _, name := range []string{"trace", "format", "start", "gap-scale", "shift", "arrivals", "rate", "cv", "requests", "min-prompt", "max-tokens", "skip-bad"} {
		if e.given[name] {
			return nil, fmt.Errorf("--%s: not with a route log (the log is the trace)", name)
		}
	}
	var err error
	if e.seeds, err = parseSeeds(*seeds); err != nil {
		return nil, fmt.Errorf("--seeds: %w", err)
	}
	return e, nil
}

// load reads the log and builds the deployment and the rows; a note on
// the latency table goes to note.
func (e *routeEval) load(note io.Writer) error {
	recs, partial, err := routelog.ReadFile(e.path)
	if err != nil {
		return err
	}
	if e.rp, err = routelog.NewReplay(recs, 0); err != nil {
		return fmt.Errorf("%s: %w", e.path, err)
	}
	e.partial = partial
	sf, first := e.sf, e.rp.Records[0]
	if !e.given["cluster"] {
		if _, ok := inferPresets[first.Deployment]; !ok {
			return fmt.Errorf("%s names deployment %q, no drover infer preset: give --cluster (one of %v)", e.path, first.Deployment, presetNames())
		}
		*sf.cluster = first.Deployment
	}
	if !e.given["model"] {
		*sf.model = first.Model
	}
	if err := e.contenders(); err != nil {
		return err
	}
	perf, err := readPerf(*sf.perf, e.given["perf"], note)
	if err != nil {
		return err
	}
	if e.dep, err = sf.deployment(*sf.cluster, perf, e.given); err != nil {
		return err
	}
	e.dep.cfg.Model = inferModel(*sf.model, e.kvSize)
	if err := e.rp.Check(e.dep.cfg); err != nil {
		return fmt.Errorf("%s: %w (give the deployment the server's clients listed with --cluster and the pool flags)", e.path, err)
	}
	for _, r := range e.rows {
		r.cluster = e.dep.desc
		if r != e.served {
			if err := r.c.load(e.dep.cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// contenders reads --policies into the rows, after the logged answers',
// and resolves --kv-size for them and the logged formats.
func (e *routeEval) contenders() error {
	sf := e.sf
	var defFormat *kv.Format
	if e.given["kv-format"] {
		f, err := kv.Parse(*e.kvFormat)
		if err != nil {
			return fmt.Errorf("--kv-format: %w", err)
		}
		defFormat = &f
	}
	// The logged answers' row: ckpt (the log) marks its formats as chosen
	// per request; it is routed by the log, never by newRouter.
	e.served = &inferEvalRow{c: inferContender{name: servedRouteName, router: "logged", cluster: *sf.cluster, ckpt: e.path}}
	e.rows = []*inferEvalRow{e.served}
	var cs []inferContender
	for _, s := range strings.Split(*e.policies, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if strings.Contains(s, "@") {
			return fmt.Errorf("--policies %q: a route log is replayed on its one deployment (give --cluster instead)", s)
		}
		c, err := parseContender(s, *sf.cluster, defFormat)
		if err != nil {
			return fmt.Errorf("--policies: %w", err)
		}
		e.rows = append(e.rows, &inferEvalRow{c: c})
		cs = append(cs, c)
	}
	var err error
	if e.kvSize, err = resolveKVSize(*sf.kvSize, cs); err != nil {
		return err
	}
	if *sf.kvSize == "auto" && slices.ContainsFunc(e.rp.Records, func(r routelog.Record) bool { return r.Format != kv.FP16().Name() }) {
		e.kvSize = "arch" // the logged answers compress
	}
	return nil
}

// run replays every row on every seed's window.
func (e *routeEval) run() error {
	for _, r := range e.rows {
		r.runs = make([]inferEvalRun, len(e.seeds))
		for k, seed := range e.seeds {
			from, reqs := e.rp.SeedWindow(seed, *e.sf.duration)
			what := fmt.Sprintf("%d requests of %s", len(reqs), e.path)
			if d := *e.sf.duration; d > 0 && d < e.rp.Span() {
				what = fmt.Sprintf("%d requests of %s in [%.1f, %.1f) s", len(reqs), e.path, from, from+d)
			}
			var router infer.Router
			if r == e.served {
				router = e.rp.Logged()
			} else {
				router = r.c.newRouter()
			}
			run, err := inferEvalRouted(e.dep.cfg, router, reqs)
			if err != nil {
				return fmt.Errorf("%s, seed %d: %w", r.c.name, seed, err)
			}
			run.Seed, run.Trace = seed, what
			r.runs[k] = run
		}
		r.estimate()
	}
	return nil
}

// printGate prints, for each learned router, the gate's verdict against
// HACK's row on the seeds' paired replays (policies/gate: 2% margin, 95%
// confidence, on mean JCT), as drover serve's route gate judges it on
// live traffic; nothing without a hack row or with fewer than 2 seeds.
func (e *routeEval) printGate(w io.Writer) {
	i := slices.IndexFunc(e.rows, func(r *inferEvalRow) bool { return r != e.served && r.c.ckpt == "" && r.c.router == "hack" })
	if i < 0 || len(e.seeds) < 2 {
		return
	}
	jct := func(r *inferEvalRow) []float64 {
		out := make([]float64, len(r.runs))
		for k, run := range r.runs {
			out[k] = run.Summary.E2E.Mean
		}
		return out
	}
	for _, r := range e.rows {
		if r == e.served || r.c.ckpt == "" {
			continue
		}
		v := gate.Judge(jct(r), jct(e.rows[i]), gate.Config{Seed: 1})
		fmt.Fprintf(w, "gate       %s vs %s on %d paired replays (mean JCT): %v\n", r.c.name, e.rows[i].c.name, len(e.seeds), v)
	}
}

// inferEvalRouted simulates router on cfg serving reqs.
func inferEvalRouted(cfg infer.Config, router infer.Router, reqs []infer.Request) (inferEvalRun, error) {
	s, err := infer.New(cfg, reqs)
	if err != nil {
		return inferEvalRun{}, err
	}
	sum, err := s.Run(router)
	run := inferEvalRun{Summary: sum}
	if err != nil {
		return run, err
	}
	for _, r := range s.Results() {
		run.ttft = append(run.ttft, r.TTFT())
		run.tpot = append(run.tpot, r.TPOT())
		run.e2e = append(run.e2e, r.E2E())
	}
	return run, nil
}

func routeSeedNote(duration, span float64) string {
	if duration > 0 && duration < span {
		return fmt.Sprintf("each seed replays a %g s window of the log starting at a time drawn uniformly from [0, %.1f s], the deployment idle at its start", duration, span-duration)
	}
	return "every seed replays the whole log, so every seed gives the same run (zero-width intervals); give --duration for random windows"
}

// printRouteLogHead prints what the re-scoring read and compares.
func printRouteLogHead(w io.Writer, e *routeEval, whole *routelog.LoggedRouter) {
	rp := e.rp
	fmt.Fprintf(w, "log        %s: %d route decisions over %.1f s", e.path, len(rp.Records), rp.Span())
	if e.partial > 0 {
		fmt.Fprintf(w, " (%d cut-short last line left out)", e.partial)
	}
	fmt.Fprintln(w)
	policies, fallbacks, shadows := map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range rp.Records {
		policies[r.Policy]++
		if r.Fallback != "" {
			fallbacks[r.Fallback]++
		}
		if r.Shadow != nil {
			shadows[r.Shadow.Policy]++
		}
	}
	fmt.Fprintf(w, "served     %s", countText(policies))
	if len(fallbacks) > 0 {
		fmt.Fprintf(w, "; fallbacks %s", countText(fallbacks))
	}
	if len(shadows) > 0 {
		fmt.Fprintf(w, "; in shadow %s", countText(shadows))
	}
	fmt.Fprintln(w)
	m := e.dep.cfg.Model
	fmt.Fprintf(w, "cluster    %s\nmodel      %s, KV %s\nSLO        %s\n", e.dep.desc, m.Name, kvSizeText(m, e.kvSize), sloText(e.dep.cfg.SLO))
	match := "every one"
	if whole.Matched != whole.Compared {
		match = fmt.Sprintf("%d of %d (first differing: decision %s)", whole.Matched, whole.Compared, whole.FirstMismatch)
	}
	fmt.Fprintf(w, "match      the logged answers replayed on the whole log meet the logged instance states at %s of its %d arrivals\n", match, whole.Compared)
	names := make([]string, len(e.rows))
	for i, r := range e.rows {
		names[i] = r.c.name
	}
	fmt.Fprintf(w, "routers    %s\nseeds      %v: %s\n", strings.Join(names, ", "), e.seeds, routeSeedNote(*e.sf.duration, rp.Span()))
}

// countText prints counts as "a 3, b 1" (most first, then by name).
func countText(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
