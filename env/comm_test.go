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
