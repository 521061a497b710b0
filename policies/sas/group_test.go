package sas

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/env"
)

func TestGroupCount(t *testing.T) {
	for _, tt := range []struct{ nodes, want int }{{1, 1}, {2, 1}, {8, 2}, {16, 3}, {22, 3}, {50, 5}, {128, 8}, {1000, MaxGroups}} {
		if got := GroupCount(tt.nodes); got != tt.want {
			t.Errorf("GroupCount(%d) = %d, want %d", tt.nodes, got, tt.want)
		}
	}
}

// steady returns a steady forecast of CPU load c (no spread) and Net n.
func steady(c, n float64) Forecast {
	u := env.Usage{CPU: c, MemBW: 0.03, Net: n}
	return Forecast{P10: u, P50: u, P90: u}
}

func TestGroup(t *testing.T) {
	idle, busy := steady(0.2, 0.3), steady(0.75, 0.3)
	jumpy := Forecast{P10: env.Usage{CPU: 0.1}, P50: env.Usage{CPU: 0.2}, P90: env.Usage{CPU: 0.9}}
	tests := []struct {
		name  string
		nodes []Forecast
		speed []float64
		k     int
		want  [][]int
	}{
		{
			name:  "loaded and idle sets, idle first",
			nodes: []Forecast{busy, idle, busy, idle, idle, busy},
			k:     2,
			want:  [][]int{{1, 3, 4}, {0, 2, 5}},
		},
		{
			name:  "identical nodes make one group whatever k",
			nodes: []Forecast{idle, idle, idle, idle},
			k:     3,
			want:  [][]int{{0, 1, 2, 3}},
		},
		{
			name:  "same median, wide spread apart",
			nodes: []Forecast{idle, jumpy, idle, jumpy},
			k:     2,
			want:  [][]int{{0, 2}, {1, 3}},
		},
		{
			name:  "slow GPUs apart without telemetry",
			nodes: []Forecast{{}, {}, {}, {}},
			speed: []float64{1, 0.5, 1, 0.5},
			k:     3,
			want:  [][]int{{0, 2}, {1, 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts := make([][]float64, len(tt.nodes))
			for i, f := range tt.nodes {
				sp := 1.0
				if tt.speed != nil {
					sp = tt.speed[i]
				}
				pts[i] = Features(f, sp)
			}
			if got := Group(pts, tt.k); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Group = %v, want %v", got, tt.want)
			}
		})
	}
}

// dist2's unrolled form for Features' seven values sums in the loop's
// order: the same bits.
func TestDist2Unrolled(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		a, b := make([]float64, 7), make([]float64, 7)
		for i := range a {
			a[i], b[i] = r.NormFloat64()*math.Pow(10, float64(r.IntN(9)-4)), r.NormFloat64()
		}
		want := 0.0
		for i := range a {
			want += (a[i] - b[i]) * (a[i] - b[i])
		}
		if got := dist2(a, b); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("dist2(%v, %v) = %v, the loop gives %v", a, b, got, want)
		}
	}
}

// Group's bounded Lloyd iterations give plain Lloyd's groups: on random
// clouds, clustered ones, ones with duplicate points and ties, a NaN
// feature, and the seven-value points SAS groups.
func TestGroupBoundsMatchPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 400 {
		n, dim := 1+r.IntN(300), []int{7, 2, 3}[trial%3]
		k := 1 + r.IntN(9)
		centres := make([][]float64, 1+r.IntN(6))
		for c := range centres {
			centres[c] = make([]float64, dim)
			for d := range centres[c] {
				centres[c][d] = r.Float64()
			}
		}
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, dim)
			base := centres[r.IntN(len(centres))]
			for d := range pts[i] {
				switch trial % 4 {
				case 0: // uniform
					pts[i][d] = r.Float64()
				case 1: // clustered
					pts[i][d] = base[d] + 0.05*r.NormFloat64()
				case 2: // a coarse grid: duplicates and ties
					pts[i][d] = float64(r.IntN(3)) / 2
				default: // far apart scales
					pts[i][d] = base[d] * math.Pow(10, float64(r.IntN(4)))
				}
			}
		}
		if trial%50 == 7 {
			pts[r.IntN(n)][0] = math.NaN()
		}
		want := group(pts, k, false)
		if got := group(pts, k, true); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d (n %d, k %d): bounded %v, plain %v", trial, n, k, got, want)
		}
	}
}
