package forecast

import (
	"bytes"
	"errors"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/env/background"
)

const tol = 1e-12

func TestPinball(t *testing.T) {
	// rho_tau(u) = u(tau - 1{u < 0}) with u = y - q.
	tests := []struct {
		name      string
		tau, q, y float64
		want      float64
	}{
		{"under p90: u=0.5, 0.9x0.5", 0.9, 0.5, 1, 0.45},
		{"over p90: u=-0.5, 0.1x0.5", 0.9, 0.5, 0, 0.05},
		{"under p10: u=0.3, 0.1x0.3", 0.1, 0.2, 0.5, 0.03},
		{"over p10: u=-0.2, 0.9x0.2", 0.1, 0.4, 0.2, 0.18},
		{"median is half the absolute error", 0.5, 0.25, 0.75, 0.25},
		{"exact", 0.3, 0.7, 0.7, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Pinball(tt.tau, tt.q, tt.y); math.Abs(got-tt.want) > tol {
				t.Errorf("Pinball(%v, %v, %v) = %v, want %v", tt.tau, tt.q, tt.y, got, tt.want)
			}
		})
	}
}

func TestDistribution(t *testing.T) {
	tests := []struct {
		name      string
		levels, q []float64
		x, exceed float64 // Exceed(x)
		tau, qtau float64 // QuantileAt(tau)
	}{
		// Slope 0.4/0.5 = 0.8 per level: uniform on [0, 0.8].
		{"uniform mid", []float64{0.25, 0.75}, []float64{0.2, 0.6}, 0.4, 0.5, 0.5, 0.4},
		{"uniform upper tail: 1-0.7/0.8", []float64{0.25, 0.75}, []float64{0.2, 0.6}, 0.7, 0.125, 1, 0.8},
		{"uniform lower tail: 0.1x0.8", []float64{0.25, 0.75}, []float64{0.2, 0.6}, 0.1, 0.875, 0.1, 0.08},
		{"below the support", []float64{0.25, 0.75}, []float64{0.2, 0.6}, -0.1, 1, 0, 0},
		{"above the support", []float64{0.25, 0.75}, []float64{0.2, 0.6}, 0.9, 0, 0.75, 0.6},
		// Slope 1: the lower end -0.05 clamps to 0, so 0.1 of mass lies
		// on [0, 0.05] (slope 0.5); upper end 0.95.
		{"clamped lower tail", []float64{0.1, 0.9}, []float64{0.05, 0.85}, 0.025, 0.95, 0.05, 0.025},
		{"upper tail to 0.95", []float64{0.1, 0.9}, []float64{0.05, 0.85}, 0.9, 0.05, 0.95, 0.9},
		// A point mass at 0.3.
		{"point mass, at it", []float64{0.1, 0.9}, []float64{0.3, 0.3}, 0.3, 0, 0.5, 0.3},
		{"point mass, below it", []float64{0.1, 0.9}, []float64{0.3, 0.3}, 0.29, 1, 0.95, 0.3},
		// Three knots: 0.2 at 0.1, 0.4 at 0.5, 0.5 at 0.9; x = 0.45 is
		// half-way from 0.5 to 0.9.
		{"three knots", []float64{0.1, 0.5, 0.9}, []float64{0.2, 0.4, 0.5}, 0.45, 0.3, 0.3, 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Exceed(tt.levels, tt.q, tt.x); math.Abs(got-tt.exceed) > tol {
				t.Errorf("Exceed(%v) = %v, want %v", tt.x, got, tt.exceed)
			}
			if got := QuantileAt(tt.levels, tt.q, tt.tau); math.Abs(got-tt.qtau) > tol {
				t.Errorf("QuantileAt(%v) = %v, want %v", tt.tau, got, tt.qtau)
			}
		})
	}
}

// TestExceedInvertsQuantileAt checks the two against each other on random
// strictly increasing quantiles: Exceed(QuantileAt(tau)) = 1 - tau.
func TestExceedInvertsQuantileAt(t *testing.T) {
	f := func(seed uint64, tau float64) bool {
		rng := rand.New(rand.NewPCG(seed, 1))
		m := 2 + rng.IntN(8)
		levels := make([]float64, m)
		q := make([]float64, m)
		for i := range m {
			levels[i] = (float64(i) + 0.5 + 0.4*rng.Float64()) / float64(m+1)
			q[i] = 0.2 + 0.6*float64(i)/float64(m) + 0.05*rng.Float64()
		}
		tau = math.Abs(math.Mod(tau, 1))
		x := QuantileAt(levels, q, tau)
		return math.Abs(Exceed(levels, q, x)-(1-tau)) < 1e-9
	}
	if err := quick.Check(f, &quick.Config{Rand: mrand.New(mrand.NewSource(1)), MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

// TestQuantRegKnownAnswer fits data drawn from y = 1 + 2x + s(x)e with e
// uniform on [-1, 1], whose tau-quantile is 2tau-1: the true tau-quantile
// line is 1 + s0(2tau-1) + (2 + s1(2tau-1))x for s(x) = s0 + s1 x.
func TestQuantRegKnownAnswer(t *testing.T) {
	tests := []struct {
		name   string
		s0, s1 float64
		tau    float64
		group  int // targets per feature row
	}{
		{"homoscedastic median", 1, 0, 0.5, 1},
		{"homoscedastic p90", 1, 0, 0.9, 1},
		{"homoscedastic p10", 1, 0, 0.1, 1},
		{"heteroscedastic p90", 1, 1, 0.9, 1},
		{"heteroscedastic p25", 1, 1, 0.25, 1},
		{"grouped targets p90", 1, 1, 0.9, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 1))
			n := 20000 / tt.group
			x := make([][]float64, n)
			y := make([][]float64, n)
			for i := range x {
				xi := rng.Float64()
				x[i] = []float64{1, xi}
				for range tt.group {
					e := 2*rng.Float64() - 1
					y[i] = append(y[i], 1+2*xi+(tt.s0+tt.s1*xi)*e)
				}
			}
			got, err := quantReg(x, y, tt.tau, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := 2*tt.tau - 1
			want := []float64{1 + tt.s0*e, 2 + tt.s1*e}
			// The estimator's standard errors here are 0.01-0.02.
			if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.05)); d != "" {
				t.Errorf("coefficients (-want,+got):\n%s", d)
			}
		})
	}
}

// TestQuantRegSampleQuantile checks the intercept-only fit against the
// sample quantile, which minimises the pinball loss: with y = 1..10 and
// tau = 0.35, n*tau = 3.5 makes the 4th smallest, 4, the unique minimiser.
// It also starts from a given point, as Fit's later levels do.
func TestQuantRegSampleQuantile(t *testing.T) {
	x := make([][]float64, 10)
	y := make([][]float64, 10)
	for i := range x {
		x[i] = []float64{1}
		y[i] = []float64{float64(10 - i)}
	}
	for _, start := range [][]float64{nil, {9}} {
		got, err := quantReg(x, y, 0.35, start)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-4) > 1e-3 {
			t.Errorf("start %v: intercept %v, want 4", start, got[0])
		}
	}
}

// lastModel returns a model whose every quantile is coefficient c times
// feature k.
func lastModel(levels []float64, k int, c float64, minHist, window, horizon int) *Model {
	m := &Model{Step: 300, Horizon: horizon, Window: window, MinHistory: minHist, Levels: levels}
	for r := range m.Coef {
		for range levels {
			row := make([]float64, numFeatures)
			row[k] = c
			m.Coef[r] = append(m.Coef[r], row)
		}
	}
	return m
}

func TestPredict(t *testing.T) {
	levels := []float64{0.1, 0.5, 0.9}
	// hist 0.5 0.1 0.3 0.9 0.7, sorted 0.1 0.3 0.5 0.7 0.9: type 7 with
	// h = 4q gives P10 0.18, P50 0.5, P90 0.82. Mean 0.5, mean of the
	// last 3 0.6333..., spread 0.64.
	hist := []float64{0.5, 0.1, 0.3, 0.9, 0.7}
	tests := []struct {
		name string
		m    *Model
		hist []float64
		want []float64
	}{
		{"last", lastModel(levels, 1, 1, 1, 64, 12), hist, []float64{0.7, 0.7, 0.7}},
		{"the window's quantiles (the baseline nested)", lastModel(levels, 5, 1, 1, 64, 12), hist, []float64{0.18, 0.5, 0.82}},
		{"window of 3: 0.3 0.9 0.7", lastModel(levels, 5, 1, 1, 3, 12), hist, []float64{0.38, 0.7, 0.86}},
		{"mean3", lastModel(levels, 2, 1, 1, 64, 12), hist, []float64{1.9 / 3, 1.9 / 3, 1.9 / 3}},
		{"spread", lastModel(levels, 6, 1, 1, 64, 12), hist, []float64{0.64, 0.64, 0.64}},
		{"clamped to 1", lastModel(levels, 1, 2, 1, 64, 12), hist, []float64{1, 1, 1}},
		{"clamped to 0", lastModel(levels, 1, -1, 1, 64, 12), hist, []float64{0, 0, 0}},
		{"crossing quantiles sorted", func() *Model {
			m := lastModel(levels, 0, 1, 1, 64, 12)
			for r := range m.Coef {
				m.Coef[r][0][0], m.Coef[r][1][0], m.Coef[r][2][0] = 0.6, 0.2, 0.4
			}
			return m
		}(), hist, []float64{0.2, 0.4, 0.6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.m.Validate(); err != nil {
				t.Fatal(err)
			}
			got := tt.m.Predict(Net, tt.hist, nil, nil)
			if d := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, tol)); d != "" {
				t.Errorf("Predict (-want,+got):\n%s", d)
			}
			// The same with the sorted copy passed in.
			if len(tt.hist) <= tt.m.Window {
				sorted := slices.Sorted(slices.Values(tt.hist))
				if d := cmp.Diff(got, tt.m.Predict(Net, tt.hist, sorted, make([]float64, 1))); d != "" {
					t.Errorf("Predict with sorted (-want,+got):\n%s", d)
				}
			}
		})
	}
}

func TestFromSeries(t *testing.T) {
	// Steps of 300 s: samples at 0 and 100 in step 0, 400 in step 1,
	// none in step 2 (carried forward), 1000 in step 3.
	s := background.Series{
		Time:  []float64{0, 100, 400, 1000},
		CPU:   []float64{0.2, 0.4, 0.5, 0.1},
		MemBW: []float64{0.01, 0.03, 0.05, 0.07},
		Net:   []float64{0.3, 0.3, 0.4, 0.5},
	}
	got, err := FromSeries([]background.Series{s}, []string{"m"}, 300)
	if err != nil {
		t.Fatal(err)
	}
	want := []Trace{{
		Name: "m",
		U: [NumResources][]float64{
			{0.3, 0.5, 0.5, 0.1},
			{0.02, 0.05, 0.05, 0.07},
			{0.3, 0.4, 0.4, 0.5},
		},
		Measured: []bool{true, true, false, true},
	}}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, tol)); d != "" {
		t.Errorf("FromSeries (-want,+got):\n%s", d)
	}
	if _, err := FromSeries([]background.Series{s}, []string{"a", "b"}, 300); err == nil {
		t.Error("two names for one series: no error")
	}
	if _, err := FromSeries([]background.Series{{}}, nil, 300); !errors.Is(err, background.ErrBadSeries) {
		t.Errorf("empty series: %v, want ErrBadSeries", err)
	}
}

// TestEvaluate works one trace by hand: CPU 0 1 0 1, horizon 1, the model
// predicting the last sample at every level, the window 2 samples, and
// targets at steps 1 and 2 only (held out from step 1; step 3 is a gap).
//
//	origin 0: target 1; learned 0 0 0; window [0]: 0 0 0.
//	  losses 0.1 0.5 0.9 both, not covered.
//	origin 1: target 0; learned 1 1 1: losses 0.9 0.5 0.1, not covered;
//	  window [0 1]: 0.1 0.5 0.9 (type 7), losses 0.09 0.25 0.09, not
//	  covered (0 < 0.1).
//	origin 2: its target step 3 is not measured: skipped.
func TestEvaluate(t *testing.T) {
	tr := Trace{
		U:        [NumResources][]float64{{0, 1, 0, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}},
		Measured: []bool{true, true, true, false},
	}
	m := lastModel([]float64{0.1, 0.5, 0.9}, 1, 1, 1, 64, 1)
	rep := Evaluate(m, []Trace{tr}, []int{1}, 2)
	if rep.Origins != 2 {
		t.Errorf("origins %d, want 2", rep.Origins)
	}
	type row struct {
		Pinball [3]float64
		Cov     float64
	}
	got := map[Method]row{}
	for k := range NumMethods {
		s := rep.Scores[k][CPU]
		got[k] = row{[3]float64{s.Pinball(0), s.Pinball(1), s.Pinball(2)}, s.Coverage()}
	}
	want := map[Method]row{
		Learned:    {[3]float64{0.5, 0.5, 0.5}, 0},
		Window:     {[3]float64{0.19 / 2, 0.75 / 2, 0.99 / 2}, 0},
		WindowMean: {[3]float64{(0.1 + 0.45) / 2, (0.5 + 0.25) / 2, (0.9 + 0.05) / 2}, 0},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, tol)); d != "" {
		t.Errorf("scores (-want,+got):\n%s", d)
	}
	// A resource that never moves: every forecast exact and covered.
	if s := rep.Scores[Learned][MemBW]; s.MeanPinball() != 0 || s.Coverage() != 1 {
		t.Errorf("membw: pinball %v, coverage %v, want 0 and 1", s.MeanPinball(), s.Coverage())
	}
	if rep.Beats() {
		t.Error("Beats with equal (zero) losses on memory bandwidth")
	}
}

func TestTimeSplit(t *testing.T) {
	tr := Trace{U: [NumResources][]float64{make([]float64, 10), make([]float64, 10), make([]float64, 10)}}
	train, from := TimeSplit([]Trace{tr}, 0.7)
	if train[0].Len() != 7 || from[0] != 7 {
		t.Errorf("split of 10 steps at 0.7: %d train steps, held out from %d; want 7 and 7", train[0].Len(), from[0])
	}
}

func TestFitRecoversLinearForecaster(t *testing.T) {
	// A trace that is a deterministic function of its past: each value is
	// the mean of the last 3, plus a small alternating term, so every
	// level's forecast is about mean3 and the fit must find it. Checked
	// through Fit's pinball loss being below the window's.
	rng := rand.New(rand.NewPCG(2, 2))
	tr := Trace{}
	for r := range tr.U {
		u := []float64{0.3, 0.5, 0.4}
		for k := 3; k < 2000; k++ {
			u = append(u, min(1, max(0, (u[k-1]+u[k-2]+u[k-3])/3+0.1*(rng.Float64()-0.5))))
		}
		tr.U[r] = u
	}
	c := DefaultConfig()
	c.Horizon, c.Levels = 1, []float64{0.1, 0.5, 0.9}
	train, from := TimeSplit([]Trace{tr}, 0.7)
	m, err := Fit(train, c)
	if err != nil {
		t.Fatal(err)
	}
	rep := Evaluate(m, []Trace{tr}, from, 64)
	if !rep.Beats() {
		t.Errorf("the fit does not beat the window on an AR process: %+v", rep.Scores)
	}
	// The median's mean3 coefficient: the other features are nearly
	// collinear with nothing, so it should carry most of the weight.
	if c := m.Coef[CPU][1][2]; math.Abs(c-1) > 0.2 {
		t.Errorf("median mean3 coefficient %v, want about 1", c)
	}
}

func TestFitErrors(t *testing.T) {
	short := Trace{U: [NumResources][]float64{{0.1}, {0.1}, {0.1}}}
	if _, err := Fit([]Trace{short}, DefaultConfig()); !errors.Is(err, ErrNoData) {
		t.Errorf("one step: %v, want ErrNoData", err)
	}
	ragged := Trace{U: [NumResources][]float64{{0.1, 0.2}, {0.1}, {0.1, 0.2}}}
	if _, err := Fit([]Trace{ragged}, DefaultConfig()); err == nil || !strings.Contains(err.Error(), "membw") {
		t.Errorf("ragged trace: %v, want an error naming membw", err)
	}
	c := DefaultConfig()
	c.Levels = []float64{0.5, 0.1}
	if _, err := Fit(nil, c); !errors.Is(err, ErrBadModel) {
		t.Errorf("descending levels: %v, want ErrBadModel", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := Encode(Default())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		edit      func(string) string
		wantInErr string
	}{
		{"version", func(s string) string { return strings.Replace(s, `"version": 1`, `"version": 2`, 1) }, "version 2"},
		{"unknown field", func(s string) string { return strings.Replace(s, `"version": 1`, `"version": 1, "x": 0`, 1) }, "unknown field"},
		{"features", func(s string) string { return strings.Replace(s, `"wspread"`, `"spread"`, 1) }, "features"},
		{"horizon", func(s string) string { return strings.Replace(s, `"horizon": 12`, `"horizon": 0`, 1) }, "horizon 0"},
		{"min history above window", func(s string) string { return strings.Replace(s, `"min_history": 12`, `"min_history": 65`, 1) }, "min_history 65"},
		{"huge window", func(s string) string { return strings.Replace(s, `"window": 64`, `"window": 4097`, 1) }, "window 4097"},
		{"huge horizon", func(s string) string { return strings.Replace(s, `"horizon": 12`, `"horizon": 4097`, 1) }, "horizon 4097"},
		{"levels", func(s string) string { return strings.Replace(s, "0.05,", "0.5,", 1) }, "levels"},
		{"missing resource", func(s string) string { return strings.Replace(s, `"net":`, `"nic":`, 1) }, `"net"`},
		{"trailing data", func(s string) string { return s + "{}" }, "trailing"},
		{"not json", func(string) string { return "{" }, "decode model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.edit(string(good))))
			if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("Decode: %v, want an error containing %q", err, tt.wantInErr)
			}
		})
	}
}

// TestEmbeddedRoundTrip checks that model.json is exactly what Encode
// writes for the model it decodes to.
func TestEmbeddedRoundTrip(t *testing.T) {
	b, err := Encode(Default())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, modelJSON) {
		t.Errorf("Encode(Default()) differs from model.json:\n%s", cmp.Diff(string(modelJSON), string(b)))
	}
}

// FuzzDecode feeds Decode arbitrary bytes: it must not panic, and a model
// it accepts must encode back to itself and forecast ascending quantiles
// in [0, 1] from a history drawn from the seed.
func FuzzDecode(f *testing.F) {
	f.Add(modelJSON, uint64(1))
	small, _ := Encode(lastModel([]float64{0.1, 0.9}, 1, 1, 1, 2, 1))
	f.Add(small, uint64(2))
	f.Add([]byte(`{"version":1}`), uint64(3))
	f.Add([]byte(`{"version":1,"step":300,"horizon":1,"window":1,"min_history":1,"levels":[0.1,0.9],"features":["bias","last","mean3","mean12","mean","wq","wspread"],"coef":{"cpu":[[0,0,0,0,0,0,0],[0,0,0,0,0,0,0]],"membw":[[0,0,0,0,0,0,0],[0,0,0,0,0,0,0]],"net":[[0,0,0,0,0,0,0],[1e308,1e308,0,0,0,0,0]]}}`), uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode of a decoded model: %v", err)
		}
		m2, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode of an encoded model: %v", err)
		}
		if d := cmp.Diff(m, m2); d != "" {
			t.Fatalf("round trip (-first,+second):\n%s", d)
		}
		rng := rand.New(rand.NewPCG(seed, seed))
		hist := make([]float64, m.MinHistory+rng.IntN(8))
		for i := range hist {
			hist[i] = rng.Float64()
		}
		for r := range NumResources {
			q := m.Predict(r, hist, nil, nil)
			if len(q) != len(m.Levels) || !slices.IsSorted(q) || q[0] < 0 || q[len(q)-1] > 1 {
				t.Fatalf("%s: quantiles %v not ascending in [0, 1]", r, q)
			}
			for _, x := range []float64{-1, 0, 0.5, q[0], q[len(q)-1], 2} {
				if p := Exceed(m.Levels, q, x); !(p >= 0 && p <= 1) {
					t.Fatalf("%s: Exceed(%v) = %v", r, x, p)
				}
			}
		}
	})
}

// stepSource is a background whose CPU on node n at time t is n + the
// step index t/300, scaled to stay below 1, to check FromSource's layout.
type stepSource struct{}

func (stepSource) At(node int, t float64) background.Usage {
	return background.Usage{CPU: float64(node)/10 + t/300/100, MemBW: 0.05, Net: 0.4}
}

func (stepSource) Step() float64 { return 300 }

func TestFromSource(t *testing.T) {
	got := FromSource(stepSource{}, 2, 3, 300)
	want := []Trace{
		{Name: "node 0", U: [NumResources][]float64{{0, 0.01, 0.02}, {0.05, 0.05, 0.05}, {0.4, 0.4, 0.4}}},
		{Name: "node 1", U: [NumResources][]float64{{0.1, 0.11, 0.12}, {0.05, 0.05, 0.05}, {0.4, 0.4, 0.4}}},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, tol)); d != "" {
		t.Errorf("FromSource (-want,+got):\n%s", d)
	}
}
