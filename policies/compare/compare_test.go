package compare

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/google/go-cmp/cmp"
)

// tinyJobs is the number of jobs in tiny's workload.
const tinyJobs = 24

// tiny returns a comparison of two heuristics on the first 24 jobs of the
// built-in workload with 2 to 8 GPUs (so workers straggle), on 4 nodes x 4
// GPUs with the per-worker model.
func tiny(t *testing.T, parallel int) Config {
	t.Helper()
	w := datasets.Builtin()
	jobs := w.Jobs[:0:0]
	for _, j := range w.Jobs {
		if j.GPUs >= 2 && j.GPUs <= 8 && len(jobs) < tinyJobs {
			jobs = append(jobs, j)
		}
	}
	w.Jobs = jobs
	ps, err := Heuristics(builtin.Registry(), []string{"first-fit", "strn"}, env.Sync{})
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Policies: ps,
		Seeds:    []uint64{1, 2},
		Parallel: parallel,
		Options: func(seed uint64) (trace.Options, error) {
			profiles, _, err := trace.Profiles("", "")
			return trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Nodes: 4, GPUsPerNode: 4,
				Interval: -1, RestartDelay: -1, Stragglers: &trace.Stragglers{Background: "builtin", Seed: seed, Regime: trace.RegimeShared}}, err
		},
	}
}

func TestCompare(t *testing.T) {
	one, err := Compare(tiny(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	four, err := Compare(tiny(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	// Parallelism changes nothing.
	if diff := cmp.Diff(one, four, cmp.Comparer(func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) })); diff != "" {
		t.Fatalf("Parallel 1 vs 4 (-1,+4):\n%s", diff)
	}
	if got := len(one.Policies); got != 2 {
		t.Fatalf("%d policies", got)
	}
	for _, p := range one.Policies {
		if len(p.Runs) != 2 || p.Runs[0].Seed != 1 || p.Runs[1].Seed != 2 {
			t.Fatalf("%s: runs %+v", p.Name, p.Runs)
		}
		for _, r := range p.Runs {
			s := r.Summary
			if s.Finished != tinyJobs || len(r.JCTs) != tinyJobs {
				t.Errorf("%s seed %d: %d finished, %d JCTs, want %d", p.Name, r.Seed, s.Finished, len(r.JCTs), tinyJobs)
			}
			// The series ends at the run's total and never decreases.
			st := r.Stragglers
			if st.Y[len(st.Y)-1] != s.Stragglers || s.Stragglers <= 0 {
				t.Errorf("%s seed %d: series ends at %v, summary %v", p.Name, r.Seed, st.Y[len(st.Y)-1], s.Stragglers)
			}
			for i := 1; i < len(st.Y); i++ {
				if st.Y[i] < st.Y[i-1] || st.T[i] < st.T[i-1] {
					t.Fatalf("%s seed %d: series decreases at %d", p.Name, r.Seed, i)
				}
			}
			// The mean of the JCTs is the summary's.
			sum := 0.0
			for _, x := range r.JCTs {
				sum += x
			}
			if math.Abs(sum/tinyJobs-s.AvgJCT) > 1e-6*s.AvgJCT {
				t.Errorf("%s seed %d: mean JCT %v, summary %v", p.Name, r.Seed, sum/tinyJobs, s.AvgJCT)
			}
		}
		// Seeds differ (background and jitter), and the estimate is their mean.
		a, b := p.Runs[0].Summary.AvgJCT, p.Runs[1].Summary.AvgJCT
		if a == b {
			t.Errorf("%s: seeds 1 and 2 give the same avg JCT %v", p.Name, a)
		}
		if want := MeanCI([]float64{a, b}, 0.95); p.AvgJCT != want {
			t.Errorf("%s: AvgJCT %+v, want %+v", p.Name, p.AvgJCT, want)
		}
	}
}

// deviator is a heuristic that says it deviated on every other choice.
type deviator struct {
	policies.Policy
	n int
}

func (d *deviator) Schedule(v *env.View) ([]env.Decision, error) {
	d.n++
	return d.Policy.Schedule(v)
}

func (d *deviator) Deviations() (int, int) { return d.n / 2, d.n }

// A policies.Deviator's share of deviations is reported per run and over
// seeds; other policies have none.
func TestDeviation(t *testing.T) {
	cfg := tiny(t, 2)
	ff := cfg.Policies[0].New
	cfg.Policies = append(cfg.Policies, Policy{Name: "half", New: func(seed uint64) (policies.Policy, error) {
		p, err := ff(seed)
		return &deviator{Policy: p}, err
	}})
	res, err := Compare(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Policies[:2] {
		if p.Deviation != nil || p.Runs[0].Deviator {
			t.Errorf("%s: deviation %v reported for a heuristic", p.Name, p.Deviation)
		}
	}
	half := res.Policies[2]
	if half.Deviation == nil {
		t.Fatal("no deviation reported for a Deviator")
	}
	want := 0.0
	for _, r := range half.Runs {
		if !r.Deviator || r.Choices == 0 || r.Deviated != r.Choices/2 {
			t.Errorf("run %d: deviator %v, %d of %d", r.Seed, r.Deviator, r.Deviated, r.Choices)
		}
		want += float64(r.Choices/2) / float64(r.Choices) / float64(len(half.Runs))
	}
	if math.Abs(half.Deviation.Mean-want) > 1e-12 {
		t.Errorf("mean deviation %v, want %v", half.Deviation.Mean, want)
	}
	var table, js bytes.Buffer
	if err := WriteTable(&table, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "half chose other than its heuristic's own candidate in") {
		t.Errorf("table does not report the deviation:\n%s", table.String())
	}
	if err := WriteJSON(&js, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(js.String(), `"deviation"`); n != 1 {
		t.Errorf("JSON has %d deviation fields, want 1 (the Deviator's)", n)
	}
}

func TestCompareErrors(t *testing.T) {
	if _, err := Heuristics(builtin.Registry(), []string{"nope"}, env.Sync{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown policy: %v", err)
	}
	if _, err := Heuristics(builtin.Registry(), []string{"strn", "strn"}, env.Sync{}); err == nil {
		t.Error("duplicate policy: no error")
	}
	if _, err := Compare(Config{}); err == nil {
		t.Error("empty config: no error")
	}
	cfg := tiny(t, 2)
	cfg.Options = func(seed uint64) (trace.Options, error) { return trace.Options{}, nil }
	if _, err := Compare(cfg); err == nil || !strings.Contains(err.Error(), "seed 1") {
		t.Errorf("failing runs: %v, want an error naming the policy and seed", err)
	}
	// A contender's mitigation needs the per-worker model.
	cfg = tiny(t, 1)
	cfg.Policies[0].Mitigation = env.MitigationLBBSP
	jobLevel := cfg.Options
	cfg.Options = func(seed uint64) (trace.Options, error) {
		o, err := jobLevel(seed)
		o.Stragglers = nil
		return o, err
	}
	if _, err := Compare(cfg); err == nil || !strings.Contains(err.Error(), "per-worker model") {
		t.Errorf("mitigation under the job-level model: %v", err)
	}
}

// fixed is a hand-made result: policy a with seeds 1 and 2, policy b with
// one run of NaN JCTs (nothing finished).
func fixed() *Result {
	a := []Run{
		{Seed: 1, Summary: env.Summary{Jobs: 2, Finished: 2, AvgJCT: 100, P99JCT: 190, AvgTTA: 50, Missed: 1, AvgAccuracy: 0.9, Stragglers: 1000, StragglerFrac: 0.25, GPUHours: 2},
			JCTs: []float64{10, 190}, Stragglers: Series{T: []float64{0, 3600, 7200}, Y: []float64{0, 600, 1000}}},
		{Seed: 2, Summary: env.Summary{Jobs: 2, Finished: 2, AvgJCT: 200, P99JCT: 290, AvgTTA: 70, AvgAccuracy: 0.8, Stragglers: 3000, StragglerFrac: 0.35, GPUHours: 4},
			JCTs: []float64{110, 290}, Stragglers: Series{T: []float64{0, 1800, 7200}, Y: []float64{0, 3000, 3000}}},
	}
	b := []Run{{Seed: 1, Summary: env.Summary{Jobs: 2, AvgJCT: math.NaN(), P99JCT: math.NaN(), AvgTTA: math.NaN()},
		Stragglers: Series{T: []float64{3600}, Y: []float64{0}}}}
	return &Result{Seeds: []uint64{1, 2}, Policies: []PolicyResult{summarize("a", a), summarize("b", b)}}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, fixed()); err != nil {
		t.Fatal(err)
	}
	// a: avg JCT 150 ± t(0.975,1) * 70.7107/sqrt(2) = 12.7062 * 50 = 635.3;
	// accuracy 85% ± 12.7062 * 5 = 63.53, missed 0.5 ± 12.7062 * 0.5 =
	// 6.35. b: no accuracy (every run 0: no convergence model).
	want := "| policy | avg JCT (s) | p99 JCT (s) | avg TTA (s) | final accuracy (%) | missed target | straggling worker-iterations | iterations with a straggler | GPU-hours | finished |\n" +
		"|---|---|---|---|---|---|---|---|---|---|\n" +
		"| a | 150 ± 635 | 240 ± 635 | 60 ± 127 | 85.00 ± 63.53 | 0.5 ± 6.4 | 2e+03 ± 1.27e+04 | 30.00 ± 63.53% | 3.0 ± 12.7 | 2 ± 0 |\n" +
		"| b | - | - | - | - | 0.0 | 0 | 0.00% | 0.0 | 0 |\n" +
		"\n" + AccuracyNote + "\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want,+got):\n%s", diff)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, fixed(), Meta{Workload: "w", Model: "drover", Command: "drover eval"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version  int      `json:"version"`
		Workload string   `json:"workload"`
		Seeds    []uint64 `json:"seeds"`
		Policies []struct {
			Name   string `json:"name"`
			AvgJCT struct {
				Mean *float64 `json:"mean"`
				CI   *float64 `json:"ci95"`
				N    int      `json:"n"`
			} `json:"avg_jct_s"`
			Accuracy struct {
				Mean *float64 `json:"mean"`
			} `json:"avg_accuracy"`
			Missed struct {
				Mean *float64 `json:"mean"`
			} `json:"missed"`
			Runs []struct {
				Seed     uint64   `json:"seed"`
				AvgJCT   *float64 `json:"avg_jct_s"`
				Accuracy *float64 `json:"avg_accuracy"`
				Missed   int      `json:"missed"`
			} `json:"runs"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	a, bb := got.Policies[0], got.Policies[1]
	if got.Version != SummaryVersion || got.Workload != "w" || len(got.Seeds) != 2 || a.Name != "a" ||
		*a.AvgJCT.Mean != 150 || math.Abs(*a.AvgJCT.CI-635.31) > 0.01 || a.AvgJCT.N != 2 || *a.Runs[1].AvgJCT != 200 {
		t.Errorf("summary of a wrong:\n%s", b.String())
	}
	if math.Abs(*a.Accuracy.Mean-0.85) > 1e-12 || *a.Missed.Mean != 0.5 || *a.Runs[0].Accuracy != 0.9 || a.Runs[0].Missed != 1 {
		t.Errorf("accuracy or missed targets of a wrong:\n%s", b.String())
	}
	if bb.AvgJCT.Mean != nil || bb.AvgJCT.CI != nil || bb.Runs[0].AvgJCT != nil || bb.Accuracy.Mean != nil || bb.Runs[0].Accuracy != nil {
		t.Errorf("NaN (and accuracy without a convergence model) should be null:\n%s", b.String())
	}
}

func TestStragglerRates(t *testing.T) {
	// End 7200 s, 2 bins of one hour. Seed 1: 600 in the first hour, 400
	// in the second; seed 2: 3000 in the first (sampled at 1800 s), 0 in
	// the second. Mean rates: 1800/h and 200/h. Policy b: nothing.
	got := StragglerRates(fixed(), 2)
	if diff := cmp.Diff([]float64{0.5, 1.5}, got[0].X); diff != "" {
		t.Errorf("X (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{1800, 200}, got[0].Y); diff != "" {
		t.Errorf("a (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{0, 0}, got[1].Y); diff != "" {
		t.Errorf("b (-want,+got):\n%s", diff)
	}
}

func TestPlots(t *testing.T) {
	for name, draw := range map[string]func(*bytes.Buffer) error{
		"cdf":        func(b *bytes.Buffer) error { return JCTCDF(b, fixed(), "JCT") },
		"stragglers": func(b *bytes.Buffer) error { return StragglersPlot(b, fixed(), 2, "stragglers") },
	} {
		var b bytes.Buffer
		if err := draw(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := png.Decode(&b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
