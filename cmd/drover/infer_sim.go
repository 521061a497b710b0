package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/atomicfile"
)

// inferSimFlags are drover infer sim's flags.
type inferSimFlags struct {
	*inferSetupFlags
	router, kvFormat *string
	seed             *uint64
	asJSON           *bool
	resultsOut       *string
	remote           *string
}

// defineInferSimFlags defines drover infer sim's flags on fs.
func defineInferSimFlags(fs *flag.FlagSet) *inferSimFlags {
	f := &inferSimFlags{inferSetupFlags: defineInferSetupFlags(fs)}
	f.router = fs.String("router", "auto", "router: "+routerHelp()+"; auto (the preset's: mixed_pool for splitwise-ha, token_jsq for splitwise-baseline, hack for pd-rl); or the directory of a pd-rl checkpoint (drover train --env pd-rl), which chooses each request's KV format. ROUTER+FORMAT gives its requests a KV format")
	f.kvFormat = fs.String("kv-format", "", "KV-cache format of every request: fp16 (dense), int8, kvquant, cachegen, hack (Pi 64) or hack-pi32|64|128; empty: the router's own (hack-pi64 for hack, fp16 for the others)")
	f.seed = fs.Uint64("seed", 1, "seed of the built-in workload's lengths and of synthetic arrivals")
	f.asJSON = fs.Bool("json", false, "print the summary as JSON")
	f.resultsOut = fs.String("results", "", "write every request's outcome to this CSV file (times in seconds)")
	f.remote = fs.String("remote", "", "ask the policy server at this address (drover serve -route, plaintext) for every routing decision instead of --router: its route log then records the run, for drover eval --log (inferremote.go)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: drover infer sim [flags]\n\nReplays a request trace on a deployment of prefill, decode or colocated instances\nunder a router (env/infer) and prints TTFT, TPOT, end-to-end latency, SLO\nattainment, GPU cost and KV bytes moved. Without flags: the built-in synthetic\nworkload on splitwise-ha under mixed_pool.")
		fs.PrintDefaults()
	}
	return f
}

func inferSim(args []string, stdout, stderr io.Writer) error {
	// A run's memory is nearly all live to its end (the simulator's
	// per-request state and results), as drover sim's is: the default
	// pacing's collections at 4 and 8 MB would free little of it.
	deferGC(simGCFloor)
	fs := newFlags("infer sim", stderr)
	f := defineInferSimFlags(fs)
	given, format, err := f.parse(fs, args, f.kvFormat)
	if err != nil {
		return err
	}
	c, err := parseContender(*f.router, *f.cluster, format)
	if err != nil {
		return fmt.Errorf("--router %w", err)
	}
	perf, err := readPerfSource(*f.perf, given["perf"], stderr)
	if err != nil {
		return err
	}
	dep, err := f.deployment(c.cluster, nil, given)
	if err != nil {
		return err
	}
	kvSize, err := resolveKVSize(*f.kvSize, []inferContender{c})
	if err != nil {
		return err
	}
	dep.cfg.Model = inferModel(*f.model, kvSize)
	// Only the rows of the table that the deployment reads are parsed.
	if dep.cfg.Perf, err = perf.table(&dep.cfg); err != nil {
		return err
	}
	if err := c.load(dep.cfg); err != nil {
		return err
	}
	w, err := f.loadWorkload()
	if err != nil {
		return err
	}
	reqs, what, err := w.requests(*f.seed, false)
	if err != nil {
		return err
	}
	s, err := infer.New(dep.cfg, reqs)
	if err != nil {
		return err
	}
	start := time.Now()
	router := newSimRouter(c, *f.remote)
	sum, runErr := s.Run(router.Router)
	c.name = router.finish()
	wall := time.Since(start)
	if runErr != nil && !incompleteRun(runErr) {
		return runErr
	}
	if *f.resultsOut != "" {
		if err := writeInferResults(*f.resultsOut, s.Results()); err != nil {
			return err
		}
	}
	run := inferRun{Trace: what, Skipped: w.skipped, Cluster: dep.desc, Model: dep.cfg.Model, KVSize: kvSize,
		Router: c.name, Format: c.format, Learned: c.ckpt != "" || *f.remote != "", SLO: dep.cfg.SLO, Summary: sum, Wall: wall}
	if *f.asJSON {
		if err := run.writeJSON(stdout); err != nil {
			return err
		}
	} else {
		run.writeText(stdout)
	}
	// ErrRejected, ErrStalled: the summary of what ran is printed.
	return unservedErr(sum, runErr)
}

// incompleteRun says whether err, from infer.Sim.Run, ends a run that went
// to its end with requests left unserved (rejected, or never finished):
// its summary of the requests that ran stands.
func incompleteRun(err error) bool {
	return errors.Is(err, infer.ErrRejected) || errors.Is(err, infer.ErrStalled)
}

// unservedErr is the error a command ends with after printing the
// summary sum of a run that ended with err (incompleteRun): how many
// requests were not served and why; err itself otherwise.
func unservedErr(sum infer.Summary, err error) error {
	if !errors.Is(err, infer.ErrRejected) {
		return err
	}
	return fmt.Errorf("%w; the summary is of the %d requests that ran (a request is rejected when its KV cache is larger than its instances' memory less the model's weights: more memory, --tp or a larger GPU, or a compressed --kv-format would take it)",
		err, sum.Finished)
}

// inferRun is one simulation's setting and outcome, as drover infer sim
// prints it.
type inferRun struct {
	Trace   string
	Skipped int
	Cluster string
	Model   infer.Model
	KVSize  string
	Router  string
	Format  kv.Format
	Learned bool // the router chooses the formats
	SLO     infer.SLO
	Summary infer.Summary
	Wall    time.Duration
}

// sloText says what the objectives are.
func sloText(slo infer.SLO) string {
	var parts []string
	if slo.TTFT > 0 {
		parts = append(parts, fmt.Sprintf("TTFT <= %g s", slo.TTFT))
	}
	if slo.TPOT > 0 {
		parts = append(parts, fmt.Sprintf("TPOT <= %g s", slo.TPOT))
	}
	if slo.E2E > 0 {
		parts = append(parts, fmt.Sprintf("E2E <= %g s", slo.E2E))
	}
	if len(parts) == 0 {
		return "no objective: finished"
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += ", " + p
	}
	return out
}

// kvSizeText describes the KV bytes per token.
func kvSizeText(m infer.Model, kvSize string) string {
	if kvSize == "splitwise" {
		return fmt.Sprintf("%d B/token (SplitwiseSim's count)", m.KVBytesPerToken)
	}
	return fmt.Sprintf("%d B/token (the architecture's)", m.KVBytesPerToken)
}

func (r inferRun) writeText(w io.Writer) {
	sum := r.Summary
	fmt.Fprintf(w, "trace      %s\n", r.Trace)
	if r.Skipped > 0 {
		fmt.Fprintf(w, "skipped    %d bad rows\n", r.Skipped)
	}
	fmt.Fprintf(w, "cluster    %s\n", r.Cluster)
	fmt.Fprintf(w, "model      %s, KV %s\n", r.Model.Name, kvSizeText(r.Model, r.KVSize))
	if r.Learned {
		fmt.Fprintf(w, "router     %s, KV format chosen per request\n", r.Router)
	} else {
		fmt.Fprintf(w, "router     %s, KV format %s (accuracy loss: %s)\n", r.Router, r.Format.Name(), accuracyNote(r.Format, r.Model.Name))
	}
	fmt.Fprintf(w, "requests   %d finished of %d", sum.Finished, sum.Requests)
	if sum.Rejected > 0 {
		fmt.Fprintf(w, ", %d rejected (a KV cache that never fits its instances)", sum.Rejected)
	}
	if left := sum.Requests - sum.Finished - sum.Rejected; left > 0 {
		fmt.Fprintf(w, ", %d never finished", left)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "seconds\tmean\tp50\tp90\tp99\tmax\t")
	for _, m := range []struct {
		name string
		s    infer.Stat
	}{{"TTFT", sum.TTFT}, {"TPOT", sum.TPOT}, {"E2E (JCT)", sum.E2E}, {"queue", sum.Queue}} {
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t\n", m.name, m.s.Mean, m.s.P50, m.s.P90, m.s.P99, m.s.Max)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nSLO        %.2f%% of requests (%s)\n", 100*sum.SLOAttainment, sloText(r.SLO))
	fmt.Fprintf(w, "GPU        %.3f GPU-hours, $%.2f at list prices, utilization %.1f%%, makespan %.1f s\n", sum.GPUHours, sum.GPUCost, 100*sum.Utilization, sum.Makespan)
	fmt.Fprintf(w, "KV moved   %s in %d transfers\n", byteText(sum.KVBytesMoved), sum.Transfers)
	fmt.Fprintf(w, "KV format  %.2f%% of latency spent on format work\n", 100*sum.FormatShare)
	fmt.Fprintf(w, "extrapolated  %s\n", extrapolatedNote(sum.Extrapolated, sum.Derived))
	fmt.Fprintf(w, "latencies  %s\n", latencyNote(sum.Derived))
	fmt.Fprintf(w, "simulated  %d iterations in %s\n", sum.Iterations, r.Wall.Round(time.Microsecond))
}

// byteText prints n bytes in decimal units.
func byteText(n int64) string {
	switch x := float64(n); {
	case x >= 1e12:
		return fmt.Sprintf("%.3f TB", x/1e12)
	case x >= 1e9:
		return fmt.Sprintf("%.3f GB", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.3f MB", x/1e6)
	}
	return fmt.Sprintf("%d B", n)
}

// jsonStat is a Stat with NaN written as null.
type jsonStat struct {
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P99  *float64 `json:"p99"`
	Max  *float64 `json:"max"`
}

func statJSON(s infer.Stat) jsonStat {
	return jsonStat{num(s.Mean), num(s.P50), num(s.P90), num(s.P99), num(s.Max)}
}

// num is x, or nil for NaN and infinities (JSON has neither).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// inferSummaryJSON is a Summary as JSON.
type inferSummaryJSON struct {
	Requests      int      `json:"requests"`
	Finished      int      `json:"finished"`
	Rejected      int      `json:"rejected"`
	TTFT          jsonStat `json:"ttft_s"`
	TPOT          jsonStat `json:"tpot_s"`
	E2E           jsonStat `json:"e2e_s"`
	Queue         jsonStat `json:"queue_s"`
	SLOAttainment float64  `json:"slo_attainment"`
	Makespan      float64  `json:"makespan_s"`
	GPUHours      float64  `json:"gpu_hours"`
	GPUCost       float64  `json:"gpu_cost_usd"`
	Utilization   float64  `json:"utilization"`
	KVBytesMoved  int64    `json:"kv_bytes_moved"`
	Transfers     int      `json:"transfers"`
	Iterations    int64    `json:"iterations"`
	FormatShare   float64  `json:"format_share"`
	Extrapolated  []string `json:"extrapolated_gpus"`
	Latencies     string   `json:"latencies"`
}

func summaryJSON(s infer.Summary) inferSummaryJSON {
	ex := s.Extrapolated
	if ex == nil {
		ex = []string{}
	}
	return inferSummaryJSON{Requests: s.Requests, Finished: s.Finished, Rejected: s.Rejected, TTFT: statJSON(s.TTFT), TPOT: statJSON(s.TPOT),
		E2E: statJSON(s.E2E), Queue: statJSON(s.Queue), SLOAttainment: s.SLOAttainment, Makespan: s.Makespan,
		GPUHours: s.GPUHours, GPUCost: s.GPUCost, Utilization: s.Utilization, KVBytesMoved: s.KVBytesMoved,
		Transfers: s.Transfers, Iterations: s.Iterations, FormatShare: s.FormatShare, Extrapolated: ex,
		Latencies: latencyNote(s.Derived)}
}

func (r inferRun) writeJSON(w io.Writer) error {
	out := struct {
		Trace    string           `json:"trace"`
		Skipped  int              `json:"skipped_rows"`
		Cluster  string           `json:"cluster"`
		Model    string           `json:"model"`
		KVBytes  int64            `json:"kv_bytes_per_token"`
		Router   string           `json:"router"`
		Format   string           `json:"kv_format"`
		Accuracy string           `json:"accuracy_loss"`
		SLO      string           `json:"slo"`
		Summary  inferSummaryJSON `json:"summary"`
		WallS    float64          `json:"wall_s"`
	}{r.Trace, r.Skipped, r.Cluster, r.Model.Name, r.Model.KVBytesPerToken, r.Router, r.Format.Name(),
		accuracyNote(r.Format, r.Model.Name), sloText(r.SLO), summaryJSON(r.Summary), r.Wall.Seconds()}
	if r.Learned {
		out.Format, out.Accuracy = "chosen per request", "per the formats chosen"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// inferResultsHeader is the first line of drover infer sim --results.
const inferResultsHeader = "id,arrival,prompt_tokens,output_tokens,prefill,decode,ttft,tpot,e2e,queue,transfer_bytes,kv_format,format_time,rejected\n"

// writeInferResults writes the per-request outcomes to path as CSV
// (atomicfile.Write: the whole file or none), the rows encoded by
// appendInferResult into one 64 KiB buffer that is written out each time
// it fills, so that no row allocates.
func writeInferResults(path string, res []infer.Result) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		const maxRow = 512 // a row's most bytes but its KV format's name
		b := append(make([]byte, 0, 64<<10), inferResultsHeader...)
		for _, r := range res {
			if len(b)+maxRow+2*len(r.Format) > cap(b) && len(b) > 0 {
				if _, err := w.Write(b); err != nil {
					return err
				}
				b = b[:0]
			}
			b = appendInferResult(b, r)
		}
		_, err := w.Write(b)
		return err
	})
}

// appendInferResult appends r's row of drover infer sim --results to b
// and returns it: the fields as encoding/csv writes them (integers in
// decimal, times in seconds as strconv's shortest 'g' form, the KV
// format's name quoted where CSV needs it), ending in a newline.
func appendInferResult(b []byte, r infer.Result) []byte {
	b = strconv.AppendInt(b, int64(r.ID), 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.Arrival, 'g', -1, 64)
	for _, n := range [...]int{r.Prompt, r.Output, r.Prefill, r.Decode} {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	for _, x := range [...]float64{r.TTFT(), r.TPOT(), r.E2E(), r.Queue()} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, r.TransferBytes, 10)
	b = append(b, ',')
	b = appendCSVField(b, r.Format)
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.FormatTime, 'g', -1, 64)
	b = append(b, ',')
	b = strconv.AppendBool(b, r.Rejected)
	return append(b, '\n')
}

// appendCSVField appends s to b as encoding/csv's Writer writes a field
// (comma ',', no CRLF): as it is, or between double quotes with its
// quotes doubled when it holds a comma, a quote, a carriage return or a
// newline, begins with a space, or is \. (which csv quotes too).
func appendCSVField(b []byte, s string) []byte {
	if s == "" || !(s == `\.` || strings.ContainsAny(s, ",\"\r\n") || unicode.IsSpace(firstRune(s))) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// firstRune is the first rune of s (utf8.RuneError for an invalid or
// empty s).
func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}
