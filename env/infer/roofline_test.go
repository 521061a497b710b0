package infer

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestRooflineTable: the built-in table holds every shape of
// rooflineShapes with SplitwiseSim's 9 batch-token knots, positive and
// non-decreasing in the batch's tokens, and is marked derived; a parsed
// table is not.
func TestRooflineTable(t *testing.T) {
	tab := RooflinePerfTable()
	if !tab.Derived() {
		t.Error("RooflinePerfTable().Derived() = false")
	}
	if len(tab.curves) != len(rooflineShapes) {
		t.Errorf("%d curves, want %d", len(tab.curves), len(rooflineShapes))
	}
	wantX := []float64{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}
	for _, s := range rooflineShapes {
		c, ok := tab.curves[perfKey{s.model, s.gpu, s.tp}]
		if !ok {
			t.Errorf("%v: no curve", s)
			continue
		}
		if !slices.Equal(c.x, wantX) {
			t.Errorf("%v: knots %v, want %v", s, c.x, wantX)
		}
		for i := range c.x {
			if !(c.prompt[i] > 0 && c.token[i] > 0) {
				t.Errorf("%v at %v tokens: prompt %v s, token %v s, want positive", s, c.x[i], c.prompt[i], c.token[i])
			}
			if i > 0 && (c.prompt[i] < c.prompt[i-1] || c.token[i] < c.token[i-1]) {
				t.Errorf("%v: falls from %v to %v tokens: prompt %v -> %v, token %v -> %v", s, c.x[i-1], c.x[i], c.prompt[i-1], c.prompt[i], c.token[i-1], c.token[i])
			}
		}
	}
	if perf, err := ParsePerfTable([]byte("model,hardware,tensor_parallel,prompt_size,batch_size,prompt_time,token_time\nm,g,1,1,1,1,1\nm,g,1,2,1,2,2\n")); err != nil || perf.Derived() {
		t.Errorf("ParsePerfTable: Derived %v, err %v; want false, nil", perf.Derived(), err)
	}
}

// TestRooflineMonotone: the roofline's times grow with the prompt's
// tokens, the batch and the context, and fall (or stay) with more GPUs'
// compute and bandwidth per token, for every shape.
func TestRooflineMonotone(t *testing.T) {
	r := BuiltinRoofline
	for _, s := range rooflineShapes {
		a, _ := kv.Lookup(s.model)
		g, _ := LookupGPU(s.gpu)
		for _, b := range []int{1, 2, 3, 8, 64, 256} {
			prevP, prevT := 0.0, 0.0
			for n := 1; n <= 1<<15; n *= 2 {
				p, d := r.PromptTime(a, g, s.tp, n, b), r.TokenTime(a, g, s.tp, n, b)
				if !(p > prevP && d >= prevT) {
					t.Errorf("%v batch %d, %d tokens: prompt %v (before %v), token %v (before %v): want growing", s, b, n, p, prevP, d, prevT)
				}
				if p2, d2 := r.PromptTime(a, g, s.tp, n, b+1), r.TokenTime(a, g, s.tp, n, b+1); !(p2 > p && d2 >= d) {
					t.Errorf("%v %d tokens: batch %d -> %d: prompt %v -> %v, token %v -> %v: want growing", s, n, b, b+1, p, p2, d, d2)
				}
				prevP, prevT = p, d
			}
		}
	}
}

// TestRooflineByHand works one prompt time and one token time out by hand
// from the datasheets and the architecture: llama2-70b (68,976,648,192
// weights, 80 layers, hidden 8192, 327,680 B of KV a token) on 2 A100s.
func TestRooflineByHand(t *testing.T) {
	r := Roofline{PrefillEfficiency: 0.5, DecodeEfficiency: 0.5, CollectiveLatency: 10e-6}
	a, _ := kv.Lookup("llama2-70b")
	g, _ := LookupGPU("a100-80gb")
	// Prefill of 1 x 1,000 tokens: 2 x 68,976,648,192 x 1000 + 2 x 80 x
	// 8192 x 1000^2 = 1.392640e14 FLOP over 2 x 312e12 x 0.5 = 4.452e-1 s
	// (the weights' 137.95 GB at 2 x 2.039e12 x 0.5 take 6.77e-2 s);
	// all-reduces: 160 x (2 x 10 us + 1/1 x 1000 x 8192 x 2 B / 300e9)
	// = 160 x 7.4613e-5 = 1.19381e-2 s.
	wantP := (2*68976648192.0*1000+2*80*8192*1e6)/(2*312e12*0.5) + 160*(2*10e-6+1000*8192*2/300e9)
	// Decode of 4 requests at 1,000 tokens of context: weights
	// 137,953,296,384 B + 4 x 1000 x 327,680 B over 2 x 2.039e12 x 0.5;
	// its FLOPs (5.5e11 + 1.0e10) are far under; all-reduces 160 x
	// (20 us + 4 x 8192 x 2 / 300e9).
	wantT := (137953296384.0+4*1000*327680)/(2*2.039e12*0.5) + 160*(2*10e-6+4*8192*2/300e9)
	if got := r.PromptTime(a, g, 2, 1000, 1); math.Abs(got-wantP) > 1e-12*wantP {
		t.Errorf("PromptTime = %v, want %v", got, wantP)
	}
	if got := r.TokenTime(a, g, 2, 1000, 4); math.Abs(got-wantT) > 1e-12*wantT {
		t.Errorf("TokenTime = %v, want %v", got, wantT)
	}
}

// measuredRow is one point of SplitwiseSim's grid: the medians of its
// repetitions.
type measuredRow struct {
	model, gpu            string
	tp, prompt, batch     int
	promptTime, tokenTime float64
}

// readMeasuredRows reads SplitwiseSim's table's A100 and H100 rows,
// each point's median times (s) over its repetitions.
func readMeasuredRows(t *testing.T) []measuredRow {
	f, err := os.Open(sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	type key struct {
		model, gpu        string
		tp, prompt, batch int
	}
	times := map[key][2][]float64{}
	var order []key
	for _, rec := range recs[1:] {
		k := key{model: rec[col["model"]], gpu: rec[col["hardware"]]}
		if k.gpu != "a100-80gb" && k.gpu != "h100-80gb" {
			continue
		}
		k.tp, _ = strconv.Atoi(rec[col["tensor_parallel"]])
		k.prompt, _ = strconv.Atoi(rec[col["prompt_size"]])
		k.batch, _ = strconv.Atoi(rec[col["batch_size"]])
		p, _ := strconv.ParseFloat(rec[col["prompt_time"]], 64)
		d, _ := strconv.ParseFloat(rec[col["token_time"]], 64)
		v, seen := times[k]
		if !seen {
			order = append(order, k)
		}
		v[0], v[1] = append(v[0], p/1000), append(v[1], d/1000)
		times[k] = v
	}
	var rows []measuredRow
	for _, k := range order {
		v := times[k]
		rows = append(rows, measuredRow{k.model, k.gpu, k.tp, k.prompt, k.batch, median(v[0]), median(v[1])})
	}
	return rows
}

// rooflineErrors is r's relative error against each row, prompt and token
// times; a prompt time measured faster than the datasheet's peak compute
// allows (a prefill at 100% of FP16FLOPS) is left out (NaN).
func rooflineErrors(r Roofline, rows []measuredRow) (prompt, token []float64) {
	peak := Roofline{PrefillEfficiency: 1, DecodeEfficiency: 1}
	for _, m := range rows {
		a, _ := kv.Lookup(m.model)
		g, _ := LookupGPU(m.gpu)
		pe := math.NaN()
		if m.promptTime >= peak.PromptTime(a, g, m.tp, m.prompt, m.batch) {
			pe = r.PromptTime(a, g, m.tp, m.prompt, m.batch)/m.promptTime - 1
		}
		prompt = append(prompt, pe)
		token = append(token, r.TokenTime(a, g, m.tp, rooflineContext(m.prompt), m.batch)/m.tokenTime-1)
	}
	return prompt, token
}

// absStats is the median and the largest of |e| over e's non-NaN values.
func absStats(e []float64) (med, worst float64) {
	var a []float64
	for _, x := range e {
		if !math.IsNaN(x) {
			a = append(a, math.Abs(x))
		}
	}
	return median(a), slices.Max(a)
}

// fitObjective is what BuiltinRoofline's constants minimise: the median
// relative error of the prompt times plus that of the token times.
func fitObjective(r Roofline, rows []measuredRow) float64 {
	p, d := rooflineErrors(r, rows)
	mp, _ := absStats(p)
	md, _ := absStats(d)
	return mp + md
}

// TestRooflineFit checks BuiltinRoofline against SplitwiseSim's measured
// A100 and H100 rows (../shared/traces; skipped without them): its
// constants are a minimum of fitObjective on the fit's grid (0.02 for the
// efficiencies, 2 us for the latency), and its errors are within the
// bounds its doc states (median 15% for prompts and 10% for tokens, worst
// 60%). It logs the errors per (model, GPU, TP) class (go test -v).
func TestRooflineFit(t *testing.T) {
	rows := readMeasuredRows(t)
	if len(rows) != 104 {
		t.Fatalf("%d measured points, want 104 (8 shapes x 13 grid points)", len(rows))
	}
	r := BuiltinRoofline
	best := fitObjective(r, rows)
	for _, n := range []Roofline{
		{r.PrefillEfficiency - 0.02, r.DecodeEfficiency, r.CollectiveLatency},
		{r.PrefillEfficiency + 0.02, r.DecodeEfficiency, r.CollectiveLatency},
		{r.PrefillEfficiency, r.DecodeEfficiency - 0.02, r.CollectiveLatency},
		{r.PrefillEfficiency, r.DecodeEfficiency + 0.02, r.CollectiveLatency},
		{r.PrefillEfficiency, r.DecodeEfficiency, r.CollectiveLatency - 2e-6},
		{r.PrefillEfficiency, r.DecodeEfficiency, r.CollectiveLatency + 2e-6},
	} {
		if o := fitObjective(n, rows); o < best {
			t.Errorf("%+v fits better than BuiltinRoofline: %.4f < %.4f", n, o, best)
		}
	}
	p, d := rooflineErrors(r, rows)
	excluded := 0
	for _, e := range p {
		if math.IsNaN(e) {
			excluded++
		}
	}
	if excluded != 2 {
		t.Errorf("%d prompt rows faster than the datasheet's peak, want 2 (llama2-70b TP2 512 x 64)", excluded)
	}
	mp, wp := absStats(p)
	md, wd := absStats(d)
	t.Logf("all %d rows: prompt median %.1f%% worst %.1f%% (%d left out); token median %.1f%% worst %.1f%%", len(rows), 100*mp, 100*wp, excluded, 100*md, 100*wd)
	if mp > 0.15 || md > 0.10 || wp > 0.60 || wd > 0.60 {
		t.Errorf("fit: prompt median %.3f worst %.3f, token median %.3f worst %.3f; want within 0.15, 0.60, 0.10, 0.60", mp, wp, md, wd)
	}
	for _, s := range rooflineShapes {
		var cp, cd []float64
		for i, m := range rows {
			if m.model == s.model && m.gpu == s.gpu && m.tp == s.tp {
				cp, cd = append(cp, p[i]), append(cd, d[i])
			}
		}
		mp, wp := absStats(cp)
		md, wd := absStats(cd)
		t.Logf("%s", fmt.Sprintf("%-10s %-9s TP%d: prompt median %4.1f%% worst %4.1f%%, token median %4.1f%% worst %4.1f%%", s.model, s.gpu, s.tp, 100*mp, 100*wp, 100*md, 100*wd))
	}
}
