package env_test

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
)

func TestRingAllReduceTime(t *testing.T) {
	// 100 MB over 10 GB/s among 4 workers: 2 * 3/4 * 0.01 s = 0.015 s.
	tests := []struct {
		name     string
		size, bw float64
		w        int
		want     float64
	}{
		{"four workers", 100e6, 10e9, 4, 0.015},
		{"two workers", 100e6, 10e9, 2, 0.01},
		{"one worker", 100e6, 10e9, 1, 0},
		{"many workers tend to 2x", 1e9, 1e9, 1000, 2 * 999.0 / 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := env.RingAllReduceTime(tt.size, tt.bw, tt.w); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPSTime(t *testing.T) {
	// 100 MB gradient, 10 GB/s links. A worker moves 2 x 100 MB = 0.02 s.
	// k servers each move 2 x w x 100 MB / k.
	tests := []struct {
		name string
		w, k int
		want float64
	}{
		{"8 workers, 1 PS: the server is the bottleneck", 8, 1, 0.16},
		{"8 workers, 4 PS", 8, 4, 0.04},
		{"8 workers, 8 PS: balanced", 8, 8, 0.02},
		{"8 workers, 16 PS: the workers are", 8, 16, 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := env.PSTime(100e6, 10e9, tt.w, tt.k); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCountStragglers(t *testing.T) {
	tests := []struct {
		name  string
		times []float64
		want  int
	}{
		{"none", []float64{1, 1, 1.1, 1.19}, 0},
		// median of {1,1,1,1.5,2} is 1; 1.5 and 2 exceed 1.2.
		{"two", []float64{1, 2, 1, 1.5, 1}, 2},
		// even count: median (1+1.1)/2 = 1.05; 1.27 > 1.26 is one.
		{"even count", []float64{1, 1.1, 1.27, 0.9}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := env.CountStragglers(tt.times, 0.2); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCountStragglersMatchesSort(t *testing.T) {
	// The quickselect median against a sorted reference, on random inputs
	// of odd and even length with ties.
	var x uint64 = 7
	rnd := func() float64 { x = x*6364136223846793005 + 1442695040888963407; return float64(x>>40%16) / 8 }
	for n := 1; n < 40; n++ {
		for range 50 {
			times := make([]float64, n)
			for i := range times {
				times[i] = rnd()
			}
			sorted := append([]float64(nil), times...)
			for i := 1; i < len(sorted); i++ {
				for k := i; k > 0 && sorted[k] < sorted[k-1]; k-- {
					sorted[k], sorted[k-1] = sorted[k-1], sorted[k]
				}
			}
			med := sorted[n/2]
			if n%2 == 0 {
				med = (sorted[n/2-1] + sorted[n/2]) / 2
			}
			want := 0
			for _, v := range times {
				if v > med*1.2 {
					want++
				}
			}
			if got := env.CountStragglers(times, 0.2); got != want {
				t.Fatalf("%v: %d stragglers, want %d (median %v)", times, got, want, med)
			}
		}
	}
}
