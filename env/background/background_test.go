package background

import (
	"errors"
	"math"
	"testing"
)

func TestResampleHandWorked(t *testing.T) {
	// Step 100: samples at 0 and 50 average in step 0, 120 is step 1, steps
	// 2 and 3 have no samples and carry step 1 forward, 410 is step 4.
	time := []float64{1000, 1050, 1120, 1410}
	cpu := []float64{0.2, 0.4, 0.6, 0.8}
	membw := []float64{0.1, 0.3, 0.5, 0.7}
	net := []float64{0, 1, 0.5, 0.25}
	got := resample(time, cpu, membw, net, 100)
	want := []Usage{
		{CPU: 0.30000000000000004, MemBW: 0.2, Net: 0.5}, // (0.2+0.4)/2 in float64
		{CPU: 0.6, MemBW: 0.5, Net: 0.5},
		{CPU: 0.6, MemBW: 0.5, Net: 0.5},
		{CPU: 0.6, MemBW: 0.5, Net: 0.5},
		{CPU: 0.8, MemBW: 0.7, Net: 0.25},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d steps, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReplayMapping(t *testing.T) {
	// The series of TestResampleHandWorked (5 steps: 0.3, 0.6, 0.6, 0.6,
	// 0.8 CPU) on three nodes. Node 0 starts at the first step; node 1, the
	// first reuse, is offset by floor(0.618*5) = 3 steps; node 2 by
	// floor(frac(2*0.618)*5) = floor(0.236*5) = 1.
	s := Series{
		Time:  []float64{1000, 1050, 1120, 1410},
		CPU:   []float64{0.2, 0.4, 0.6, 0.8},
		MemBW: []float64{0.1, 0.3, 0.5, 0.7},
		Net:   []float64{0, 1, 0.5, 0.25},
	}
	r, err := NewReplay([]Series{s}, 3, 100)
	if err != nil {
		t.Fatal(err)
	}
	a := 0.30000000000000004
	tests := []struct {
		name string
		node int
		t    float64
		cpu  float64
	}{
		{"node 0 start", 0, 0, a},
		{"node 0 end of step 0", 0, 99.999, a},
		{"node 0 step 1", 0, 100, 0.6},
		{"node 0 gap", 0, 350, 0.6},
		{"node 0 last step", 0, 499, 0.8},
		{"node 0 wraps", 0, 500, a},
		{"node 0 wraps twice", 0, 1450, 0.8},
		{"negative time reads as 0", 0, -5, a},
		{"node 1 offset 3", 1, 0, 0.6},
		{"node 1 step 1", 1, 100, 0.8},
		{"node 1 step 2 wraps", 1, 200, a},
		{"node 2 offset 1", 2, 0, 0.6},
		{"node 2 step 3", 2, 300, 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.At(tt.node, tt.t).CPU; got != tt.cpu {
				t.Errorf("At(%d, %v).CPU = %v, want %v", tt.node, tt.t, got, tt.cpu)
			}
		})
	}
	if r.Step() != 100 {
		t.Errorf("Step() = %v, want 100", r.Step())
	}
}

func TestFillMemBW(t *testing.T) {
	nan := math.NaN()
	// Machine 0 has 30 samples on MemBW = 0.5 - 0.5*CPU (its own line);
	// machine 1 has 2 samples (too few), so it uses the pooled line through
	// all 32 samples, and machine 2 has none.
	var own Series
	for i := range 30 {
		c := float64(i) / 30
		own.Time = append(own.Time, float64(i))
		own.CPU = append(own.CPU, c)
		own.MemBW = append(own.MemBW, 0.5-0.5*c)
		own.Net = append(own.Net, 0)
	}
	own.Time = append(own.Time, 30, 31)
	own.CPU = append(own.CPU, 0.5, 1)
	own.MemBW = append(own.MemBW, nan, nan)
	own.Net = append(own.Net, 0, 0)
	few := Series{Time: []float64{0, 1, 2}, CPU: []float64{0, 1, 0.5}, MemBW: []float64{0.5, 0.5, nan}, Net: []float64{0, 0, 0}}
	none := Series{Time: []float64{0}, CPU: []float64{0.5}, MemBW: []float64{nan}, Net: []float64{0}}
	got := fillMemBW([]Series{own, few, none})
	// Machine 0: 0.5 - 0.5*0.5 = 0.25; at CPU 1 the line gives 0, clamped
	// to the smallest fitted value 0.5 - 0.5*29/30 = 1/60.
	if g := got[0][30]; math.Abs(g-0.25) > 1e-12 {
		t.Errorf("own line at CPU 0.5 = %v, want 0.25", g)
	}
	if g, w := got[0][31], 0.5-0.5*29.0/30; math.Abs(g-w) > 1e-12 {
		t.Errorf("own line at CPU 1 = %v, want clamp %v", g, w)
	}
	// Pooled line: recompute by the normal equations.
	var xs, ys []float64
	for i, y := range append(append([]float64{}, own.MemBW...), few.MemBW...) {
		if !math.IsNaN(y) {
			xs = append(xs, append(append([]float64{}, own.CPU...), few.CPU...)[i])
			ys = append(ys, y)
		}
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	n := float64(len(xs))
	b := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	a := (sy - b*sx) / n
	if g, w := got[1][2], a+b*0.5; math.Abs(g-w) > 1e-12 {
		t.Errorf("pooled line at CPU 0.5 = %v, want %v", g, w)
	}
	if g, w := got[2][0], a+b*0.5; math.Abs(g-w) > 1e-12 {
		t.Errorf("machine without MemBW = %v, want pooled %v", g, w)
	}
	// Measured values are kept.
	if got[1][0] != 0.5 || got[0][3] != own.MemBW[3] {
		t.Errorf("measured values changed: %v, %v", got[1][0], got[0][3])
	}
	// Nothing measured anywhere: zero.
	if g := fillMemBW([]Series{none}); g[0][0] != 0 {
		t.Errorf("no MemBW anywhere = %v, want 0", g[0][0])
	}
}

func TestNewReplayErrors(t *testing.T) {
	ok := Series{Time: []float64{0}, CPU: []float64{0}, MemBW: []float64{0}, Net: []float64{0}}
	tests := []struct {
		name   string
		series []Series
		nodes  int
		step   float64
		bad    bool // wraps ErrBadSeries
	}{
		{"no series", nil, 1, 300, true},
		{"empty series", []Series{{}}, 1, 300, true},
		{"ragged", []Series{{Time: []float64{0}, CPU: []float64{0, 1}, MemBW: []float64{0}, Net: []float64{0}}}, 1, 300, true},
		{"unsorted", []Series{{Time: []float64{1, 0}, CPU: []float64{0, 0}, MemBW: []float64{0, 0}, Net: []float64{0, 0}}}, 1, 300, true},
		{"cpu above 1", []Series{{Time: []float64{0}, CPU: []float64{1.5}, MemBW: []float64{0}, Net: []float64{0}}}, 1, 300, true},
		{"net NaN", []Series{{Time: []float64{0}, CPU: []float64{0}, MemBW: []float64{0}, Net: []float64{math.NaN()}}}, 1, 300, true},
		{"time Inf", []Series{{Time: []float64{math.Inf(1)}, CPU: []float64{0}, MemBW: []float64{0}, Net: []float64{0}}}, 1, 300, true},
		{"zero nodes", []Series{ok}, 0, 300, false},
		{"zero step", []Series{ok}, 1, 0, false},
		{"NaN step", []Series{ok}, 1, math.NaN(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReplay(tt.series, tt.nodes, tt.step)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrBadSeries) != tt.bad {
				t.Errorf("err = %v; wraps ErrBadSeries = %v, want %v", err, !tt.bad, tt.bad)
			}
		})
	}
}

func TestConstantAndScaled(t *testing.T) {
	c := Constant{Usage{CPU: 0.2, MemBW: 0.5, Net: 0.9}}
	if got := c.At(7, 1e6); got != c.Usage {
		t.Errorf("Constant.At = %+v, want %+v", got, c.Usage)
	}
	s := Scaled(c, 2)
	if got, want := s.At(0, 0), (Usage{CPU: 0.4, MemBW: 1, Net: 1}); got != want {
		t.Errorf("Scaled(2).At = %+v, want %+v", got, want)
	}
	if got := Scaled(c, 0).At(0, 0); got != (Usage{}) {
		t.Errorf("Scaled(0).At = %+v, want zero", got)
	}
	if s.Step() != DefaultStep {
		t.Errorf("Scaled step %v, want %v", s.Step(), DefaultStep)
	}
	for _, f := range []float64{-1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Scaled(%v) did not panic", f)
				}
			}()
			Scaled(c, f)
		}()
	}
}

func TestCholesky(t *testing.T) {
	tests := []struct {
		name string
		a    [3][3]float64
		ok   bool
	}{
		{"identity", [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, true},
		{"correlated", [3][3]float64{{1, -0.7, 0.1}, {-0.7, 1, 0}, {0.1, 0, 1}}, true},
		{"singular", [3][3]float64{{1, 1, 0}, {1, 1, 0}, {0, 0, 1}}, true},
		{"zero variance", [3][3]float64{{0, 0, 0}, {0, 1, 0.5}, {0, 0.5, 1}}, true},
		{"indefinite", [3][3]float64{{1, 0.9, -0.9}, {0.9, 1, 0.9}, {-0.9, 0.9, 1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := cholesky(tt.a)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			for i := range 3 {
				for j := range 3 {
					var s float64
					for k := range 3 {
						s += l[i][k] * l[j][k]
					}
					if math.Abs(s-tt.a[i][j]) > 1e-12 {
						t.Errorf("(L L')[%d][%d] = %v, want %v", i, j, s, tt.a[i][j])
					}
				}
			}
		})
	}
}
