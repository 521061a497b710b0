package background

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// testParams are moderate parameters with correlated innovations.
var testParams = Params{
	Step:         60,
	CPU:          Process{LevelMean: -1, LevelStd: 0.5, Std: 0.6, Phi: 0.8},
	MemBW:        Process{LevelMean: -3, LevelStd: 0.3, Std: 0.4, Phi: 0.5},
	Net:          Process{LevelMean: 0, LevelStd: 0.2, Std: 0.2, Phi: 0.95},
	CorrCPUMemBW: -0.6, CorrCPUNet: 0.3, CorrMemBWNet: 0,
}

func newTestStochastic(t testing.TB, p Params, nodes int, seed uint64) *Stochastic {
	t.Helper()
	s, err := NewStochastic(p, nodes, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStochasticDeterministic(t *testing.T) {
	const nodes, steps = 5, 3 * chunkLen
	a := newTestStochastic(t, testParams, nodes, 42)
	// Forward in time, node by node.
	want := make([][]Usage, nodes)
	for n := range want {
		for k := range steps {
			want[n] = append(want[n], a.At(n, float64(k)*a.Step()))
		}
	}
	// A fresh source queried in random order, at random times within each
	// step, with repeats: same answers.
	b := newTestStochastic(t, testParams, nodes, 42)
	r := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		n, k := r.IntN(nodes), r.IntN(steps)
		tt := (float64(k) + r.Float64()) * b.Step()
		if got := b.At(n, tt); got != want[n][k] {
			t.Fatalf("At(%d, %v) = %+v, want %+v", n, tt, got, want[n][k])
		}
	}
	// Going back after going forward (a, which is now at the last chunk).
	if got := a.At(3, 0); got != want[3][0] {
		t.Errorf("At(3, 0) after later steps = %+v, want %+v", got, want[3][0])
	}
	// A node's series does not depend on the number of nodes.
	c := newTestStochastic(t, testParams, 100, 42)
	for k := range steps {
		if got := c.At(4, float64(k)*c.Step()); got != want[4][k] {
			t.Fatalf("100-node source, node 4 step %d = %+v, want %+v", k, got, want[4][k])
		}
	}
	// Another seed, and another node, give other series.
	d := newTestStochastic(t, testParams, nodes, 43)
	if d.At(0, 0) == want[0][0] || want[1][0] == want[0][0] {
		t.Error("seeds 42 and 43, or nodes 0 and 1, start alike")
	}
	for n := range nodes {
		for _, u := range want[n] {
			if !(unit(u.CPU) && unit(u.MemBW) && unit(u.Net)) {
				t.Fatalf("usage %+v outside [0, 1]", u)
			}
		}
	}
}

// TestStochasticProcess checks the generated logit series against the
// parameters with a naive estimator: per-node mean removed, std, lag-1
// autocorrelation and innovation correlation, over 200 nodes x 2048 steps.
// Standard errors are below 0.01 for each, so 0.03 is a 3-sigma bound.
func TestStochasticProcess(t *testing.T) {
	p := testParams
	p.CPU.LevelStd, p.MemBW.LevelStd, p.Net.LevelStd = 0, 0, 0 // levels known exactly
	s := newTestStochastic(t, p, 200, 7)
	procs := p.processes()
	var ss, sl [3]float64
	var cov [3][3]float64
	var n float64
	for node := range 200 {
		var prev [3]float64
		for k := range 2048 {
			u := s.At(node, float64(k)*p.Step)
			x := [3]float64{logit(u.CPU) - p.CPU.LevelMean, logit(u.MemBW) - p.MemBW.LevelMean, logit(u.Net) - p.Net.LevelMean}
			for r := range 3 {
				ss[r] += x[r] * x[r]
			}
			if k > 0 {
				var e [3]float64
				for r := range 3 {
					sl[r] += x[r] * prev[r]
					e[r] = x[r] - procs[r].Phi*prev[r]
				}
				for a := range 3 {
					for b := range 3 {
						cov[a][b] += e[a] * e[b]
					}
				}
			}
			prev = x
			n++
		}
	}
	c := p.corr()
	for r := range 3 {
		std := math.Sqrt(ss[r] / n)
		phi := sl[r] / ss[r]
		if math.Abs(std/procs[r].Std-1) > 0.03 || math.Abs(phi-procs[r].Phi) > 0.03 {
			t.Errorf("%s: std %.4f phi %.4f, want %v %v", resourceNames[r], std, phi, procs[r].Std, procs[r].Phi)
		}
		for q := range r {
			if got := cov[r][q] / math.Sqrt(cov[r][r]*cov[q][q]); math.Abs(got-c[r][q]) > 0.03 {
				t.Errorf("corr(%s, %s) = %.4f, want %v", resourceNames[r], resourceNames[q], got, c[r][q])
			}
		}
	}
}

// TestFitRecoversParams fits series drawn from a Stochastic source and
// checks that the fit returns the parameters it was drawn from. Tolerances:
// the level std is estimated from 100 levels (relative standard error
// about 7%); the rest from 100 x 2048 steps.
func TestFitRecoversParams(t *testing.T) {
	const nodes, steps = 100, 2048
	s := newTestStochastic(t, testParams, nodes, 3)
	series := make([]Series, nodes)
	for n := range series {
		for k := range steps {
			tt := float64(k) * testParams.Step
			u := s.At(n, tt)
			series[n].Time = append(series[n].Time, tt)
			series[n].CPU = append(series[n].CPU, u.CPU)
			series[n].MemBW = append(series[n].MemBW, u.MemBW)
			series[n].Net = append(series[n].Net, u.Net)
		}
	}
	got, err := Fit(series, testParams.Step)
	if err != nil {
		t.Fatal(err)
	}
	want := testParams
	t.Logf("fitted %+v", got)
	for r, g := range got.processes() {
		w := want.processes()[r]
		// Level means: 3 standard errors of a mean of 100 levels.
		if math.Abs(g.LevelMean-w.LevelMean) > 3*w.LevelStd/10+0.02 {
			t.Errorf("%s: level mean %v, want %v", resourceNames[r], g.LevelMean, w.LevelMean)
		}
		if math.Abs(g.LevelStd/w.LevelStd-1) > 0.25 {
			t.Errorf("%s: level std %v, want %v", resourceNames[r], g.LevelStd, w.LevelStd)
		}
		// Std and Phi are biased low by removing each series' own mean
		// (most for Net, whose Phi of 0.95 leaves ~40 independent values
		// per 2048-step series).
		if math.Abs(g.Std/w.Std-1) > 0.06 || math.Abs(g.Phi-w.Phi) > 0.03 {
			t.Errorf("%s: std %v phi %v, want %v %v", resourceNames[r], g.Std, g.Phi, w.Std, w.Phi)
		}
	}
	for _, c := range [][2]float64{
		{got.CorrCPUMemBW, want.CorrCPUMemBW}, {got.CorrCPUNet, want.CorrCPUNet}, {got.CorrMemBWNet, want.CorrMemBWNet},
	} {
		if math.Abs(c[0]-c[1]) > 0.03 {
			t.Errorf("innovation correlation %v, want %v (got %+v)", c[0], c[1], got)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	mod := func(f func(*Params)) Params {
		p := testParams
		f(&p)
		return p
	}
	tests := []struct {
		name string
		p    Params
	}{
		{"zero step", mod(func(p *Params) { p.Step = 0 })},
		{"phi 1", mod(func(p *Params) { p.Net.Phi = 1 })},
		{"negative std", mod(func(p *Params) { p.CPU.Std = -0.1 })},
		{"negative level std", mod(func(p *Params) { p.MemBW.LevelStd = -1 })},
		{"NaN level", mod(func(p *Params) { p.CPU.LevelMean = math.NaN() })},
		{"correlation above 1", mod(func(p *Params) { p.CorrCPUNet = 1.1 })},
		{"not PSD", mod(func(p *Params) { p.CorrCPUMemBW, p.CorrCPUNet, p.CorrMemBWNet = 0.9, -0.9, 0.9 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Validate(); !errors.Is(err, ErrBadParams) {
				t.Errorf("Validate() = %v, want ErrBadParams", err)
			}
			if _, err := NewStochastic(tt.p, 1, 1); !errors.Is(err, ErrBadParams) {
				t.Errorf("NewStochastic err = %v, want ErrBadParams", err)
			}
		})
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default: %v", err)
	}
	if _, err := NewStochastic(testParams, 0, 1); err == nil {
		t.Error("NewStochastic with 0 nodes: no error")
	}
}

func TestAtPanics(t *testing.T) {
	s := newTestStochastic(t, testParams, 2, 1)
	r, err := NewReplay([]Series{{Time: []float64{0}, CPU: []float64{0}, MemBW: []float64{0}, Net: []float64{0}}}, 2, 60)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []Source{s, r, Constant{}} {
		for _, q := range []struct {
			node int
			t    float64
		}{{-1, 0}, {0, math.NaN()}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%T.At(%d, %v) did not panic", src, q.node, q.t)
					}
				}()
				src.At(q.node, q.t)
			}()
		}
	}
	// NaN after a valid query (which Stochastic remembers) too.
	s.At(0, 120)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("At(0, NaN) after At(0, 120) did not panic")
			}
		}()
		s.At(0, math.NaN())
	}()
	defer func() {
		if recover() == nil {
			t.Error("At(2, 0) on 2 nodes did not panic")
		}
	}()
	s.At(2, 0)
}

func TestStationaryIsAtZero(t *testing.T) {
	// Stationary(node) is At(node, 0) without the series, for every node,
	// before and after the series was generated.
	s, err := NewStochastic(Default(), 50, 3)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := NewStochastic(Default(), 50, 3)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 50 {
		want := fresh.At(n, 0)
		if got := s.Stationary(n); got != want {
			t.Fatalf("node %d: Stationary %+v, At(0) %+v", n, got, want)
		}
		if n%2 == 0 {
			s.At(n, 5000) // generating the series must not change it
		}
		if got := s.Stationary(n); got != want {
			t.Fatalf("node %d after At: Stationary %+v, want %+v", n, got, want)
		}
	}
}

// naiveSeries is node's series of s over steps steps, generated in one
// straight loop from the node's initial state: the reference that lazy,
// chunked, partial generation must reproduce bit for bit.
func naiveSeries(s *Stochastic, node, steps int) []Usage {
	src, level, x := s.initial(node)
	r := rand.New(src)
	out := make([]Usage, steps)
	for k := range out {
		out[k] = Usage{CPU: sigmoid(level[0] + x[0]), MemBW: sigmoid(level[1] + x[1]), Net: sigmoid(level[2] + x[2])}
		var e [3]float64
		for j := range e {
			e[j] = r.NormFloat64()
		}
		d := mulLower(&s.innov, e)
		for j := range x {
			x[j] = s.phi[j]*x[j] + d[j]
		}
	}
	return out
}

func TestStochasticPartialChunksMatchNaive(t *testing.T) {
	const nodes, steps = 3, 3*chunkLen + 17
	tests := []struct {
		name  string
		order func(r *rand.Rand) []int // the steps queried, in order
	}{
		{"forward", func(*rand.Rand) []int {
			ks := make([]int, steps)
			for k := range ks {
				ks[k] = k
			}
			return ks
		}},
		{"forward by leaps", func(*rand.Rand) []int {
			var ks []int
			for k := 0; k < steps; k += 37 {
				ks = append(ks, k)
			}
			return append(ks, 5, steps-1, chunkLen, 2*chunkLen-1)
		}},
		{"random", func(r *rand.Rand) []int {
			ks := make([]int, 4000)
			for i := range ks {
				ks[i] = r.IntN(steps)
			}
			return ks
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStochastic(t, testParams, nodes, 7)
			want := make([][]Usage, nodes)
			for n := range want {
				want[n] = naiveSeries(s, n, steps)
			}
			r := rand.New(rand.NewPCG(2, 2))
			for _, k := range tt.order(r) {
				n := r.IntN(nodes)
				if got := s.At(n, float64(k)*s.Step()); got != want[n][k] {
					t.Fatalf("At(%d, step %d) = %+v, want %+v", n, k, got, want[n][k])
				}
			}
		})
	}
}
