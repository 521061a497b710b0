package hack

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// sweepEnv names the environment variable that turns on
// TestPaperDirectionSweep: a comma-separated list of request rates, or 1
// for the default list.
const sweepEnv = "DROVER_HACK_SWEEP"

// cell is one run of paperSetup per format: mean JCT (s), the mean of each
// request's transfer share of its JCT, the KV format's share of JCT
// (dequantization, or HACK's approximation), the mean transfer time (s,
// queueing on the link included), the phases of the paper's breakdown of
// JCT as means (s): prefill (its iteration on the prefill instance, the
// format's encoding included: FirstToken - PromptStart) and decode (from
// the KV's arrival to the last token, End - TransferEnd, less the format's
// work on the decode instance: the paper's breakdown counts that apart),
// and the summary line the test logs.
type cell struct {
	jct, xfer, share, xferTime map[string]float64
	prefill, decode            map[string]float64
	line                       string
}

// runCell runs reqs on c under HACK's router with each format.
func runCell(t *testing.T, c infer.Config, reqs []infer.Request, formats []kv.Format) cell {
	t.Helper()
	out := cell{jct: map[string]float64{}, xfer: map[string]float64{}, share: map[string]float64{}, xferTime: map[string]float64{},
		prefill: map[string]float64{}, decode: map[string]float64{}}
	var line strings.Builder
	pg, err := infer.LookupGPU(c.Instances[0].GPU)
	if err != nil {
		t.Fatal(err)
	}
	tp := float64(c.Instances[0].TP)
	for _, f := range formats {
		s, err := infer.New(c, reqs)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Run(New(f))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Finished != len(reqs) || len(sum.Extrapolated) != 1 || sum.Extrapolated[0] != pg.Name {
			t.Fatalf("%s: %d of %d finished, extrapolated %v", f, sum.Finished, len(reqs), sum.Extrapolated)
		}
		xfer, xt, pre, dec := 0.0, 0.0, 0.0, 0.0
		for _, r := range s.Results() {
			xfer += (r.TransferEnd - r.FirstToken) / r.E2E()
			xt += r.TransferEnd - r.FirstToken
			pre += r.FirstToken - r.PromptStart
			// The format's work in the prompt's iteration (each prompt
			// runs alone: it exceeds MaxBatchTokens) is its encoding.
			w := f.Work(c.Model.Arch, r.Prompt)
			enc := (w.Encode + w.PrefillVector) / (tp * pg.VectorOPS)
			dec += r.End - r.TransferEnd - (r.FormatTime - enc)
		}
		n, k := f.Name(), float64(len(reqs))
		out.jct[n], out.xfer[n], out.share[n], out.xferTime[n] = sum.E2E.Mean, xfer/k, sum.FormatShare, xt/k
		out.prefill[n], out.decode[n] = pre/k, dec/k
		fmt.Fprintf(&line, " | %s %.2f s (p99 %.2f, prefill %.2f s, transfer %.1f%% %.3f s, decode %.2f s, format %.1f%%)", n, sum.E2E.Mean, sum.E2E.P99, pre/k, 100*xfer/k, xt/k, dec/k, 100*sum.FormatShare)
	}
	out.line = line.String()
	return out
}

// TestPaperDirectionSweep is an opt-in finer sweep of the request rate on
// the shared 10 Gbps link with A10G prefill (paperSetup, paperRequests),
// FP16, the 2-bit baselines as the artifact runs them and HACK (Pi 64):
//
//	DROVER_HACK_SWEEP=1 go test ./policies/hack -run TestPaperDirectionSweep -v
//
// (or DROVER_HACK_SWEEP=0.2,0.25 for other rates). It prints a markdown
// row per rate: mean JCT and shares, HACK's reductions, and whether the
// direction (HACK < both 2-bit < FP16) and the paper's 17.2-30.4%
// dequantization share hold together for both baselines. It asserts
// nothing beyond the runs finishing; docs/results/inference.md holds its
// output.
func TestPaperDirectionSweep(t *testing.T) {
	v := os.Getenv(sweepEnv)
	if v == "" {
		t.Skipf("set %s=1 (or a list of rates) to run", sweepEnv)
	}
	rates := []float64{0.2, 0.225, 0.25, 0.26, 0.275, 0.3}
	if v != "1" {
		rates = nil
		for _, s := range strings.Split(v, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || r <= 0 {
				t.Fatalf("%s: bad rate %q", sweepEnv, s)
			}
			rates = append(rates, r)
		}
	}
	perf := readPerf(t)
	formats := []kv.Format{kv.FP16(), kv.KVQuantTorch(), kv.CacheGenTorch(), kv.HACKPi(64)}
	c := paperSetup(perf, "a10g", 10, true)
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	red := func(a, b float64) string { return pct(1 - a/b) }
	var out strings.Builder
	out.WriteString("| req/s | FP16 | KVQuant PyTorch | CacheGen PyTorch | HACK (Pi 64) | HACK vs FP16 / KVQuant / CacheGen | both hold |\n|---|---|---|---|---|---|---|\n")
	for _, rate := range rates {
		x := runCell(t, c, paperRequests(t, 120, rate), formats)
		j, h := x.jct, x.jct["hack-pi64"]
		both := true
		for _, b := range []string{"kvquant-torch", "cachegen-torch"} {
			both = both && h < j[b] && j[b] < j["fp16"] && x.share[b] >= 0.172 && x.share[b] <= 0.304
		}
		fmt.Fprintf(&out, "| %g | %.2f (%s) | %.2f (%s, %s) | %.2f (%s, %s) | %.2f (%s, %s) | %s / %s / %s | %v |\n", rate,
			j["fp16"], pct(x.xfer["fp16"]),
			j["kvquant-torch"], pct(x.xfer["kvquant-torch"]), pct(x.share["kvquant-torch"]),
			j["cachegen-torch"], pct(x.xfer["cachegen-torch"]), pct(x.share["cachegen-torch"]),
			h, pct(x.xfer["hack-pi64"]), pct(x.share["hack-pi64"]),
			red(h, j["fp16"]), red(h, j["kvquant-torch"]), red(h, j["cachegen-torch"]), both)
	}
	t.Log("shared 10 Gbps link, A10G prefill, 120 requests:\n" + out.String())
}
