package datasets

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/drover-sched/drover/internal/longtest"
)

// pollux returns the Pollux-filtered Philly trace that DefaultSynthParams
// was fitted to (read once).
func pollux(t *testing.T) *Workload {
	t.Helper()
	path := trace(t, "philly/pollux_philly.csv.gz")
	polluxOnce.Do(func() { polluxW, polluxErr = ReadFile(path, FormatPhilly, Options{}.WithPolluxFilter()) })
	if polluxErr != nil {
		t.Fatal(polluxErr)
	}
	return polluxW
}

var (
	polluxOnce sync.Once
	polluxW    *Workload
	polluxErr  error
)

// TestDefaultSynthParams refits the Philly trace and checks the embedded
// parameters (with -update, rewrites builtin/synth_params.json and
// builtin/default.csv instead). The fit is a long test (make test-long;
// 38 s of the race run, issue 31); -update runs it without DROVER_LONG.
func TestDefaultSynthParams(t *testing.T) {
	if !*update {
		longtest.Skip(t, "refits the Philly trace")
	}
	if testing.Short() {
		t.Skip("fitting takes a few seconds")
	}
	p := FitPhilly(pollux(t))
	if *update {
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("builtin/synth_params.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		defaultSynthParams = func() SynthParams { return p }
		if err := os.WriteFile("builtin/default.csv", Encode(GenerateDefault(DefaultSeed), nil), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote builtin/synth_params.json and builtin/default.csv")
		return
	}
	// Floating-point results may differ in the last bits across
	// architectures (fused multiply-add), so compare with a tolerance.
	got, want := flattenParams(p), flattenParams(DefaultSynthParams())
	if len(got) != len(want) {
		t.Fatalf("fit has %d numbers, embedded %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Errorf("parameter %d: fit %v, embedded %v", i, got[i], want[i])
		}
	}
}

func flattenParams(p SynthParams) []float64 {
	out := append([]float64{p.StartHour, p.RateScale, p.MinDuration, p.MaxDuration, float64(p.MaxGPUs)}, p.HourlyRate[:]...)
	for i, g := range p.GPUCounts {
		out = append(out, float64(g), p.GPUProbs[i])
	}
	for _, c := range p.Durations {
		out = append(out, float64(c.MinGPUs), float64(c.MaxGPUs), float64(c.Jobs))
		out = append(out, c.Weight...)
		out = append(out, c.Mu...)
		out = append(out, c.Sigma...)
	}
	return out
}

// TestBuiltinReproducible regenerates the default workload with the
// documented seed and compares it byte for byte with the embedded file.
func TestBuiltinReproducible(t *testing.T) {
	got := Encode(GenerateDefault(DefaultSeed), nil)
	if !bytes.Equal(got, builtinCSV) {
		t.Fatalf("GenerateDefault(%d) differs from builtin/default.csv (run go test -run TestDefaultSynthParams -update)", DefaultSeed)
	}
}

func TestBuiltin(t *testing.T) {
	w := Builtin()
	checkInvariants(t, w)
	if len(w.Jobs) != DefaultJobs {
		t.Errorf("Builtin has %d jobs, want %d", len(w.Jobs), DefaultJobs)
	}
	s := Inspect(w)
	for _, g := range s.GPUHist {
		if g.GPUs > DefaultMaxGPUs {
			t.Errorf("job with %d GPUs exceeds DefaultMaxGPUs", g.GPUs)
		}
	}
	// Sized for a 16-node x 4-GPU cluster: arrivals over a few hours, and
	// enough work to keep 64 GPUs busy for at least as long.
	if s.Span < 1*3600 || s.Span > 8*3600 {
		t.Errorf("arrival span %v s, want 1-8 h", s.Span)
	}
	if busy := s.GPUHours / 64; busy < 2 || busy > 12 {
		t.Errorf("work = %.1f h on 64 GPUs, want 2-12 h", busy)
	}
	// Builtin returns copies.
	w.Jobs[0].Name = "changed"
	if Builtin().Jobs[0].Name == "changed" {
		t.Error("Builtin shares its job slice between calls")
	}
	l, err := Load(BuiltinSpec, FormatAuto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l, Builtin()) {
		t.Error("Load(\"builtin\") differs from Builtin()")
	}
}

// TestSyntheticDeterministic checks that one seed gives one workload and
// that another seed gives another.
func TestSyntheticDeterministic(t *testing.T) {
	p := DefaultParams()
	a := Synthetic(p, 500, rand.NewPCG(7, 7))
	b := Synthetic(p, 500, rand.NewPCG(7, 7))
	c := Synthetic(p, 500, rand.NewPCG(8, 8))
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different workloads")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds, same workload")
	}
	checkInvariants(t, a)
	for _, j := range a.Jobs {
		if j.Duration < p.MinDuration || j.Duration > p.MaxDuration || j.GPUs > p.MaxGPUs {
			t.Fatalf("job %+v outside the truncation bounds", j)
		}
	}
}

// TestSyntheticFit measures how well the fitted run-time model, the
// embedded DefaultSynthParams (TestDefaultSynthParams checks that fitting
// Philly gives it), matches Philly: the KS distance between the trace's
// durations and the fitted lognormal-mixture CDF, and between the trace
// and 20,000 synthetic jobs. The arrival rate is checked against the
// trace's mean daily rate.
func TestSyntheticFit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the Philly trace")
	}
	p, w := DefaultSynthParams(), pollux(t)
	var real []float64
	for _, j := range w.Jobs {
		real = append(real, j.Duration)
	}
	ks := KSDistance(real, p.DurationCDF)
	s := Synthetic(p, 20000, rand.NewPCG(1, 1))
	var synth []float64
	for _, j := range s.Jobs {
		synth = append(synth, j.Duration)
	}
	ks2 := KSTwoSample(real, synth)
	t.Logf("KS(trace, fitted CDF) = %.4f; KS(trace, 20000 synthetic) = %.4f", ks, ks2)
	// With n = 74,428 and m = 20,000 the 5%% two-sample critical value is
	// 1.36*sqrt((n+m)/(n*m)) ~ 0.011; the fit is not exact, so we bound the
	// distance at 0.05, a few times that.
	if ks > 0.05 || ks2 > 0.05 {
		t.Errorf("KS distances %.4f, %.4f exceed 0.05", ks, ks2)
	}
	for i, c := range p.Durations {
		var sub []float64
		for _, j := range w.Jobs {
			if j.GPUs >= c.MinGPUs && j.GPUs <= c.MaxGPUs {
				sub = append(sub, j.Duration)
			}
		}
		t.Logf("class %d (%d-%d GPUs, %d jobs): KS = %.4f", i, c.MinGPUs, c.MaxGPUs, c.Jobs, KSDistance(sub, c.CDF))
	}
	// Mean arrivals per day: trace vs. parameters.
	span := w.Jobs[len(w.Jobs)-1].Submit - w.Jobs[0].Submit
	perDay := float64(len(w.Jobs)) / span * 86400
	sum := 0.0
	for _, r := range p.HourlyRate {
		sum += r
	}
	if math.Abs(sum-perDay)/perDay > 0.02 {
		t.Errorf("fitted %.1f arrivals/day, trace %.1f", sum, perDay)
	}
}

func TestKSDistance(t *testing.T) {
	// Worked by hand: sample {1,2,3,4} against U(0,4): F_n - F is 0 at every
	// point and 1/4 just before each, so D = 0.25.
	u := func(x float64) float64 { return math.Min(1, math.Max(0, x/4)) }
	if d := KSDistance([]float64{1, 2, 3, 4}, u); math.Abs(d-0.25) > 1e-12 {
		t.Errorf("KSDistance = %v, want 0.25", d)
	}
	// {1,2} vs {3,4}: disjoint, D = 1. {1,2,3} vs {1,2,3}: D = 0.
	if d := KSTwoSample([]float64{1, 2}, []float64{3, 4}); d != 1 {
		t.Errorf("KSTwoSample disjoint = %v, want 1", d)
	}
	if d := KSTwoSample([]float64{3, 1, 2}, []float64{1, 2, 3}); d != 0 {
		t.Errorf("KSTwoSample equal = %v, want 0", d)
	}
	// Naive check: evaluate sup |F_a - F_b| on the pooled points.
	r := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 50; trial++ {
		a, b := make([]float64, 1+r.IntN(30)), make([]float64, 1+r.IntN(30))
		for i := range a {
			a[i] = float64(r.IntN(10))
		}
		for i := range b {
			b[i] = float64(r.IntN(10))
		}
		naive := 0.0
		for _, x := range append(append([]float64{}, a...), b...) {
			naive = math.Max(naive, math.Abs(ecdf(a, x)-ecdf(b, x)))
		}
		if got := KSTwoSample(a, b); math.Abs(got-naive) > 1e-12 {
			t.Fatalf("KSTwoSample(%v, %v) = %v, naive %v", a, b, got, naive)
		}
	}
}

func ecdf(s []float64, x float64) float64 {
	n := 0
	for _, v := range s {
		if v <= x {
			n++
		}
	}
	return float64(n) / float64(len(s))
}
