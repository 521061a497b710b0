package background

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"testing/quick"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func cpu(x float64) Usage { return Usage{CPU: x} }

// TestRecordedAt: the last reading at or before the step's start, the
// first before any, the fallback for a node without readings.
func TestRecordedAt(t *testing.T) {
	r, err := NewRecorded([][]Reading{
		{{T: 120, Usage: cpu(0.3)}, {T: 0, Usage: cpu(0.1)}, {T: 50, Usage: cpu(0.2)}}, // unsorted on purpose
		{{T: 75, Usage: cpu(0.6)}},
		nil,
	}, 50, Constant{Usage: cpu(0.05)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		node int
		t    float64
		want float64
	}{
		{"before 0 reads 0", 0, -5, 0.1},
		{"inside the first step", 0, 49.9, 0.1},
		{"at a reading on a boundary", 0, 50, 0.2},
		{"the step's start decides", 0, 100, 0.2}, // the reading at 120 is inside step [100, 150)
		{"next step", 0, 150, 0.3},
		{"long after", 0, 1e6, 0.3},
		{"before the first reading", 1, 10, 0.6},
		{"no readings: fallback", 2, 500, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.At(tt.node, tt.t).CPU; got != tt.want {
				t.Errorf("At(%d, %v) = %v, want %v", tt.node, tt.t, got, tt.want)
			}
		})
	}
	if r.Step() != 50 {
		t.Errorf("Step() = %v, want 50", r.Step())
	}
	// Without fallback a node without readings is idle.
	r, err = NewRecorded([][]Reading{nil}, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := r.At(0, 10); u != (Usage{}) {
		t.Errorf("no readings, no fallback: %+v, want zero", u)
	}
}

// TestRecordedContract: At is constant on every step and a pure function
// of (node, t), however the readings fall.
func TestRecordedContract(t *testing.T) {
	var rs []Reading
	for i := range 40 {
		rs = append(rs, Reading{T: 7.3 * float64(i), Usage: cpu(float64(i) / 40)})
	}
	r, err := NewRecorded([][]Reading{rs}, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 20 {
		start := r.At(0, float64(k)*20)
		for _, d := range []float64{0.001, 5, 13.7, 19.999} {
			if got := r.At(0, float64(k)*20+d); got != start {
				t.Fatalf("step %d: At(+%v) = %v, want %v (the step's start)", k, d, got, start)
			}
		}
	}
}

func TestNewRecordedErrors(t *testing.T) {
	tests := []struct {
		name     string
		readings [][]Reading
		step     float64
		fallback Source
	}{
		{"no nodes", nil, 50, nil},
		{"zero step", [][]Reading{nil}, 0, nil},
		{"NaN time", [][]Reading{{{T: math.NaN()}}}, 50, nil},
		{"usage above 1", [][]Reading{{{T: 1, Usage: Usage{Net: 1.5}}}}, 50, nil},
		{"fallback step not a multiple", [][]Reading{nil}, 200, Constant{}}, // 300 / 200
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewRecorded(tt.readings, tt.step, tt.fallback); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestSubtract checks the subtraction against numbers worked by hand, in
// binary fractions so that every difference is exact. Per worker: CPU
// 1/16, MemBW 1/8; a flow at duty 1: half the NIC. Jobs: A, 2 workers on
// node 0 and 2 on node 1 over [10, 100), BSP (duty 1); B, 1 worker on
// node 0 over [50, 200); C, 1 worker on node 0 and 1 on node 2 over
// [85, 95), duty 1/2; D, 1 worker on node 1 and 1 on node 2 over
// [120, 200), duty unknown (NaN). Inexact readings (saturated, or under
// an unknown duty) take the nearest exact estimate, at least their bound.
func TestSubtract(t *testing.T) {
	load := WorkerLoad{CPU: 1.0 / 16, MemBW: 1.0 / 8, NetPerFlow: 0.5}
	occ := []Occupant{
		{Start: 10, End: 100, Nodes: []int{0, 0, 1, 1}, Duty: 1},
		{Start: 50, End: 200, Nodes: []int{0}, Duty: 1},
		{Start: 85, End: 95, Nodes: []int{0, 2}, Duty: 0.5},
		{Start: 120, End: 200, Nodes: []int{1, 2}, Duty: math.NaN()},
	}
	measured := [][]Reading{
		{
			{T: 0, Usage: Usage{CPU: 0.25, MemBW: 0.125, Net: 0.25}},     // nothing runs
			{T: 60, Usage: Usage{CPU: 0.4375, MemBW: 0.5, Net: 0.75}},    // A (2) + B (1): 3 workers, A's flow
			{T: 70, Usage: Usage{CPU: 0.5, MemBW: 0.5, Net: 1}},          // Net saturated: bound 1 - 0.5 = 0.5 > 0.25 (T=60, nearest)
			{T: 90, Usage: Usage{CPU: 0.5, MemBW: 1, Net: 1}},            // + C: 4 workers, flows 1.5: Net bound 0.25 < 0.5 kept; MemBW bound 0.5 > 0.125
			{T: 100, Usage: Usage{CPU: 0.3125, MemBW: 0.25, Net: 0.125}}, // A gone at its End: B alone, no flow
		},
		{
			{T: 60, Usage: Usage{CPU: 0.25, MemBW: 0.25, Net: 0.5}}, // A's 2 workers and flow: CPU 0.125 left, the rest 0
		},
		{
			{T: 90, Usage: Usage{CPU: 0.0625, MemBW: 0.125, Net: 0.5}},  // C's worker, half a flow: Net 0.25 left
			{T: 150, Usage: Usage{CPU: 0.125, MemBW: 0.25, Net: 0.375}}, // D, duty unknown: Net bound 0 < 0.25 (T=90)
		},
	}
	want := [][]Reading{
		{
			{T: 0, Usage: Usage{CPU: 0.25, MemBW: 0.125, Net: 0.25}},
			{T: 60, Usage: Usage{CPU: 0.25, MemBW: 0.125, Net: 0.25}},
			{T: 70, Usage: Usage{CPU: 0.3125, MemBW: 0.125, Net: 0.5}},
			{T: 90, Usage: Usage{CPU: 0.25, MemBW: 0.5, Net: 0.25}},
			{T: 100, Usage: Usage{CPU: 0.25, MemBW: 0.125, Net: 0.125}},
		},
		{
			{T: 60, Usage: Usage{CPU: 0.125, MemBW: 0, Net: 0}},
		},
		{
			{T: 90, Usage: Usage{CPU: 0, MemBW: 0, Net: 0.25}},
			{T: 150, Usage: Usage{CPU: 0.0625, MemBW: 0.125, Net: 0.25}},
		},
	}
	if diff := cmp.Diff(want, Subtract(measured, occ, load)); diff != "" {
		t.Errorf("Subtract (-want,+got):\n%s", diff)
	}
}

// naiveSubtract is Subtract written the obvious way: every occupant
// checked at every reading, every reading searched for the nearest exact
// one.
func naiveSubtract(measured [][]Reading, occupants []Occupant, load WorkerLoad) [][]Reading {
	out := make([][]Reading, len(measured))
	for n, rs := range measured {
		type est struct {
			v     [3]float64
			exact [3]bool
		}
		es := make([]est, len(rs))
		for i, x := range rs {
			w, flows, unknown := 0.0, 0.0, false
			for _, o := range occupants {
				if !(o.Start < x.T && x.T < o.End) {
					continue
				}
				here, nodes := 0, map[int]bool{}
				for _, m := range o.Nodes {
					nodes[m] = true
					if m == n {
						here++
					}
				}
				if here == 0 {
					continue
				}
				w += float64(here)
				if len(nodes) > 1 {
					if math.IsNaN(o.Duty) {
						flows++
						unknown = true
					} else {
						flows += o.Duty
					}
				}
			}
			u := x.Usage
			es[i].v = [3]float64{max(0, u.CPU-load.CPU*w), max(0, u.MemBW-load.MemBW*w), max(0, u.Net-load.NetPerFlow*flows)}
			es[i].exact = [3]bool{u.CPU < 1, u.MemBW < 1, u.Net < 1 && !unknown}
		}
		out[n] = make([]Reading, len(rs))
		for i := range rs {
			var v [3]float64
			for r := range 3 {
				v[r] = es[i].v[r]
				if es[i].exact[r] {
					continue
				}
				// The nearest in time; on ties the last one before i, else
				// the first one after it.
				best := -1
				for k := range rs {
					if !es[k].exact[r] {
						continue
					}
					d, bd := math.Abs(rs[k].T-rs[i].T), math.Inf(1)
					if best >= 0 {
						bd = math.Abs(rs[best].T - rs[i].T)
					}
					if d < bd || d == bd && k < i {
						best = k
					}
				}
				if best >= 0 {
					v[r] = max(v[r], es[best].v[r])
				}
			}
			out[n][i] = Reading{T: rs[i].T, Usage: Usage{CPU: v[0], MemBW: v[1], Net: v[2]}}
		}
	}
	return out
}

// readingsOpts is how TestSubtractNaive compares Subtract with
// naiveSubtract: floats to 1e-12, NaNs and infinities exactly, a nil list
// equal to an empty one.
var readingsOpts = []cmp.Option{cmpopts.EquateApprox(0, 1e-12), cmpopts.EquateEmpty()}

// sameReadings is cmp.Equal(a, b, readingsOpts...) written out:
// cmp's reflection over 500 random cases was half of TestSubtractNaive's
// time under -race, so cmp.Diff runs only to report a difference.
// TestSameReadingsIsCmpEqual holds the two together.
func sameReadings(a, b [][]Reading) bool {
	near := func(x, y float64) bool { // cmpopts.EquateApprox(0, 1e-12)
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return x == y
		}
		return math.Abs(x-y) <= 1e-12
	}
	return slices.EqualFunc(a, b, func(x, y []Reading) bool { // lengths only: EquateEmpty
		return slices.EqualFunc(x, y, func(p, q Reading) bool {
			return near(p.T, q.T) && near(p.Usage.CPU, q.Usage.CPU) && near(p.Usage.MemBW, q.Usage.MemBW) && near(p.Usage.Net, q.Usage.Net)
		})
	})
}

// TestSameReadingsIsCmpEqual: sameReadings agrees with cmp.Equal under
// readingsOpts on equal lists, on nil against empty ones and on each field
// moved by less and by more than 1e-12 or made NaN or infinite, and
// Reading and Usage have the fields it compares.
func TestSameReadingsIsCmpEqual(t *testing.T) {
	if a, b := reflect.TypeFor[Reading]().NumField(), reflect.TypeFor[Usage]().NumField(); a != 2 || b != 3 {
		t.Fatalf("Reading has %d fields and Usage %d; sameReadings compares 2 and 3", a, b)
	}
	base := func() [][]Reading {
		return [][]Reading{{{T: 0, Usage: Usage{CPU: 0.5, MemBW: 0.25, Net: 1}}, {T: 50, Usage: Usage{CPU: 1, MemBW: math.Inf(1), Net: 0}}}, nil, {}}
	}
	fields := []func(r *Reading) *float64{
		func(r *Reading) *float64 { return &r.T },
		func(r *Reading) *float64 { return &r.Usage.CPU },
		func(r *Reading) *float64 { return &r.Usage.MemBW },
		func(r *Reading) *float64 { return &r.Usage.Net },
	}
	check := func(name string, a, b [][]Reading) {
		if got, want := sameReadings(a, b), cmp.Equal(a, b, readingsOpts...); got != want {
			t.Errorf("%s: sameReadings %v, cmp.Equal %v", name, got, want)
		}
	}
	check("equal", base(), base())
	b := base()
	b[1], b[2] = []Reading{}, nil
	check("nil and empty swapped", base(), b)
	check("a node less", base(), base()[:2])
	b = base()
	b[0] = b[0][:1]
	check("a reading less", base(), b)
	for i, f := range fields {
		for _, at := range []int{0, 1} {
			for _, set := range []func(float64) float64{
				func(x float64) float64 { return x + 0.5e-12 },
				func(x float64) float64 { return x + 2e-12 },
				func(float64) float64 { return math.NaN() },
				func(float64) float64 { return math.Inf(-1) },
			} {
				b := base()
				p := f(&b[0][at])
				*p = set(*p)
				check(fmt.Sprintf("field %d of reading %d set to %v", i, at, *p), base(), b)
			}
		}
	}
}

// TestSubtractNaive checks Subtract against naiveSubtract on random nodes,
// readings (some saturated) and occupants (some of unknown duty), the
// randomness from quick's seed.
func TestSubtractNaive(t *testing.T) {
	f := func(seed uint64) bool {
		r := rand.New(rand.NewPCG(seed, 2))
		nodes := 1 + r.IntN(4)
		measured := make([][]Reading, nodes)
		for n := range measured {
			tm := 0.0
			for range r.IntN(30) {
				tm += float64(r.IntN(3)) * 50 // repeated times too
				u := func() float64 {
					if r.IntN(5) == 0 {
						return 1
					}
					return r.Float64()
				}
				measured[n] = append(measured[n], Reading{T: tm, Usage: Usage{CPU: u(), MemBW: u(), Net: u()}})
			}
		}
		var occ []Occupant
		for range r.IntN(12) {
			start := float64(r.IntN(40)) * 25
			o := Occupant{Start: start, End: start + float64(1+r.IntN(30))*25, Duty: r.Float64()}
			if r.IntN(4) == 0 {
				o.End = math.Inf(1)
			}
			if r.IntN(4) == 0 {
				o.Duty = math.NaN()
			}
			for range 1 + r.IntN(6) {
				o.Nodes = append(o.Nodes, r.IntN(nodes))
			}
			occ = append(occ, o)
		}
		load := WorkerLoad{CPU: 1.0 / 16, MemBW: 0.08, NetPerFlow: 0.5}
		got, want := Subtract(measured, occ, load), naiveSubtract(measured, occ, load)
		if sameReadings(want, got) {
			return true
		}
		if diff := cmp.Diff(want, got, readingsOpts...); diff != "" {
			t.Logf("seed %d (-naive,+Subtract):\n%s", seed, diff)
			return false
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Error(err)
	}
}
