package sas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

const tol = 1e-12

// cpuHistory records the CPU loads xs on node 0 of a one-node predictor,
// one sample per period.
func cpuHistory(capacity int, xs ...float64) *Predictor {
	p := NewPredictor(1, capacity, 300)
	for i, x := range xs {
		if !p.Observe(float64(i)*300, []env.Usage{{CPU: x, Net: 1 - x}}) {
			panic("sample refused")
		}
	}
	return p
}

func TestPredictorQuantiles(t *testing.T) {
	// Sorted history 0.1 0.3 0.5 0.7 0.9 (n = 5). Type 7: h = 4q.
	p := cpuHistory(8, 0.5, 0.1, 0.3, 0.9, 0.7)
	tests := []struct {
		name string
		r    Resource
		q    float64
		want float64
	}{
		{"min", CPU, 0, 0.1},
		{"p10: h=0.4, 0.1+0.4x0.2", CPU, 0.1, 0.18},
		{"p25: h=1", CPU, 0.25, 0.3},
		{"p50: h=2", CPU, 0.5, 0.5},
		{"p90: h=3.6, 0.7+0.6x0.2", CPU, 0.9, 0.82},
		{"max", CPU, 1, 0.9},
		{"net p10 of 1-x: 0.1 0.3 0.5 0.7 0.9", Net, 0.1, 0.18},
		{"membw all zero", MemBW, 0.9, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Quantile(0, tt.r, tt.q); math.Abs(got-tt.want) > tol {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.r, tt.q, got, tt.want)
			}
		})
	}
	f := p.Forecast(0)
	if math.Abs(f.P10.CPU-0.18) > tol || math.Abs(f.P50.CPU-0.5) > tol || math.Abs(f.P90.CPU-0.82) > tol {
		t.Errorf("Forecast CPU = %v %v %v, want 0.18 0.5 0.82", f.P10.CPU, f.P50.CPU, f.P90.CPU)
	}
}

func TestPredictorRing(t *testing.T) {
	// Capacity 3 keeps the last three of five samples.
	p := cpuHistory(3, 0.1, 0.2, 0.3, 0.4, 0.5)
	got := []float64{}
	for _, u := range p.History(0) {
		got = append(got, u.CPU)
	}
	want := []float64{0.3, 0.4, 0.5}
	if len(got) != len(want) {
		t.Fatalf("History = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("History = %v, want %v (-want,+got)", got, want)
		}
	}
	if m := p.Quantile(0, CPU, 0.5); math.Abs(m-0.4) > tol {
		t.Errorf("median after wrap = %v, want 0.4", m)
	}
}

func TestPredictorPeriod(t *testing.T) {
	p := NewPredictor(2, 4, 300)
	loads := []env.Usage{{CPU: 0.1}, {CPU: 0.2}}
	steps := []struct {
		now  float64
		want bool
	}{{0, true}, {100, false}, {299, false}, {300, true}, {500, false}, {900, true}}
	for _, s := range steps {
		if got := p.Observe(s.now, loads); got != s.want {
			t.Errorf("Observe(%v) = %v, want %v", s.now, got, s.want)
		}
	}
	if p.Len(0) != 3 || p.Len(1) != 3 {
		t.Errorf("Len = %d, %d, want 3, 3", p.Len(0), p.Len(1))
	}
}

func TestOverloadProb(t *testing.T) {
	// Samples 0.1 0.3 0.5 0.7 0.9, Beta(1,1) prior: (k+1)/(5+2).
	p := cpuHistory(8, 0.5, 0.1, 0.3, 0.9, 0.7)
	tests := []struct {
		name      string
		add, want float64
	}{
		{"one sample above 0.8", 0, 2.0 / 7},
		{"+0.2: 0.7 and 0.9 above", 0.2, 3.0 / 7},
		{"+0.8: all above", 0.8, 6.0 / 7},
		{"-0.2: none above", -0.2, 1.0 / 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.OverloadProb(0, CPU, tt.add, 0.8); math.Abs(got-tt.want) > tol {
				t.Errorf("OverloadProb(add %v) = %v, want %v", tt.add, got, tt.want)
			}
		})
	}
	unseen := NewPredictor(1, 4, 300)
	if got := unseen.OverloadProb(0, CPU, 0, 0.8); got != 0.5 {
		t.Errorf("unseen node: OverloadProb = %v, want 0.5", got)
	}
}

// The sorted copies push keeps in step equal a sort of the history after
// every sample: with ties, zeros of both signs, a full ring evicting, and
// NaN samples (which fall back to sorting afresh).
func TestPredictorSortedInStep(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	p := NewPredictor(3, 7, 0)
	pick := func() float64 {
		switch r.IntN(10) {
		case 0:
			return math.Copysign(0, -1)
		case 1:
			return 0
		case 2:
			return math.NaN()
		case 3, 4:
			return float64(r.IntN(3)) / 2 // ties
		}
		return r.Float64() * 1.5
	}
	for step := range 2000 {
		loads := make([]env.Usage, 3)
		for n := range loads {
			loads[n] = env.Usage{CPU: pick(), MemBW: pick(), Net: pick()}
			if step > 1000 { // no NaN: once the ring holds none, the incremental path alone
				for _, x := range []*float64{&loads[n].CPU, &loads[n].MemBW, &loads[n].Net} {
					if math.IsNaN(*x) {
						*x = 1
					}
				}
			}
		}
		p.Observe(float64(step), loads)
		for n := range 3 {
			for _, q := range []Resource{CPU, MemBW, Net} {
				var want []float64
				for _, u := range p.History(n) {
					want = append(want, q.of(u))
				}
				sort.Float64s(want)
				got := p.values(n, q)
				if len(got) != len(want) {
					t.Fatalf("step %d node %d %v: %d values, want %d", step, n, q, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
						t.Fatalf("step %d node %d %v: sorted %v, want %v", step, n, q, got, want)
					}
				}
			}
		}
	}
}

// searchFloat agrees with sort.SearchFloat64s.
func TestSearchFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := make([]float64, r.IntN(12))
		for i := range s {
			s[i] = float64(r.IntN(5))
		}
		sort.Float64s(s)
		x := float64(r.IntN(7)) - 1
		if got, want := searchFloat(s, x), sort.SearchFloat64s(s, x); got != want {
			t.Fatalf("searchFloat(%v, %v) = %d, want %d", s, x, got, want)
		}
	}
}

// TestForecastKeptMatchesFresh feeds random histories with long constant
// stretches (an idle node's zeros, a NaN now and then, -0 against +0) to
// one predictor, whose forecasts survive a sample that leaves a constant
// history unchanged, and to a fresh predictor rebuilt from the same
// history at every step, switching the model once, and wants the same
// quantiles and overload probabilities, to the bit, and the same forecast
// as at the last step whenever the node's version stayed.
func TestForecastKeptMatchesFresh(t *testing.T) {
	other := *forecast.Default() // another model: every coefficient 10% larger
	for r := range other.Coef {
		other.Coef[r] = nil
		for _, row := range forecast.Default().Coef[r] {
			row2 := make([]float64, len(row))
			for i, c := range row {
				row2[i] = c * 1.1
			}
			other.Coef[r] = append(other.Coef[r], row2)
		}
	}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 3))
		capacity := 12 + r.IntN(20)
		p := NewPredictor(3, capacity, 300)
		p.Model = forecast.Default()
		hist := make([][]env.Usage, 3)
		prevVer := []uint64{math.MaxUint64, math.MaxUint64, math.MaxUint64}
		prev := make([]Forecast, 3)
		vals := []float64{0, 0, 0, math.Copysign(0, -1), 0.3, 0.9, math.NaN()}
		for step := range 200 {
			if step == 120 {
				p.Model = &other // a model switch drops every kept forecast
			}
			loads := make([]env.Usage, 3)
			for n := range loads {
				loads[n] = hist0(hist[n])
				if r.IntN(8) == 0 {
					loads[n] = env.Usage{CPU: vals[r.IntN(len(vals))], MemBW: vals[r.IntN(len(vals)-1)], Net: r.Float64()}
				}
				hist[n] = append(hist[n], loads[n])
			}
			p.Observe(float64(step)*300, loads)
			fresh := NewPredictor(3, capacity, 300)
			fresh.Model = p.Model
			for i := max(0, len(hist[0])-capacity); i < len(hist[0]); i++ {
				fresh.Observe(float64(i)*300, []env.Usage{hist[0][i], hist[1][i], hist[2][i]})
			}
			for n := range 3 {
				// An unchanged version promises unchanged forecasts.
				f := fresh.Forecast(n)
				if p.version(n) == prevVer[n] && fmt.Sprint(f) != fmt.Sprint(prev[n]) {
					t.Fatalf("seed %d step %d node %d: version kept, forecast %v, was %v", seed, step, n, f, prev[n])
				}
				prevVer[n], prev[n] = p.version(n), f
				for r := range numResources {
					for _, q := range []float64{0.1, 0.5, 0.9} {
						if a, b := p.Quantile(n, r, q), fresh.Quantile(n, r, q); math.Float64bits(a) != math.Float64bits(b) {
							t.Fatalf("seed %d step %d node %d %v: quantile %v = %v, fresh %v", seed, step, n, r, q, a, b)
						}
					}
					if a, b := p.OverloadProb(n, r, 0.25, 0.8), fresh.OverloadProb(n, r, 0.25, 0.8); math.Float64bits(a) != math.Float64bits(b) {
						t.Fatalf("seed %d step %d node %d %v: overload %v, fresh %v", seed, step, n, r, a, b)
					}
				}
			}
		}
	}
}

// hist0 returns the last of h, or an idle sample.
func hist0(h []env.Usage) env.Usage {
	if len(h) == 0 {
		return env.Usage{}
	}
	return h[len(h)-1]
}
