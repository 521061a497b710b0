package env_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
)

func TestBalancedBatches(t *testing.T) {
	tests := []struct {
		name  string
		batch int
		speed []float64
		want  []int
	}{
		// 256 x (1, 1, 0.5) / 2.5 = 102.4, 102.4, 51.2: floors 102, 102,
		// 51 (255), the one left to the first of the two largest
		// remainders. Iteration times b_i / v_i: 103, 102, 102 samples per
		// unit speed, against 85.3, 85.3, 170.7 for an even split.
		{"worked", 256, []float64{1, 1, 0.5}, []int{103, 102, 51}},
		{"even", 256, []float64{2, 2, 2, 2}, []int{64, 64, 64, 64}},
		{"one", 32, []float64{0.3}, []int{32}},
		{"zero speed", 256, []float64{1, 0}, nil},
		{"NaN speed", 256, []float64{1, math.NaN()}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := env.BalancedBatches(tt.batch, tt.speed)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("BalancedBatches(%d, %v) (-want,+got):\n%s", tt.batch, tt.speed, diff)
			}
			sum := 0
			for _, b := range got {
				sum += b
			}
			if got != nil && sum != tt.batch {
				t.Errorf("batches sum to %d, want %d", sum, tt.batch)
			}
		})
	}
}

// TestLBBSPEqualisesIterations is the worked case in the simulator: one
// BSP job on three one-GPU nodes of GPU speeds 1, 1 and 0.5, idle, no
// jitter or network noise, the Flat profile with Step 1 and Sync 0.3 (on
// three nodes: 1.6 s a step of which 0.6 s all-reduce, so 1 s of compute
// on a reference GPU), 1800 s of work at the packed reference iteration
// of 1 s (1800 iterations), no restart delay.
//
// Without LB-BSP each iteration waits for the half-speed GPU: 2 + 0.6 =
// 2.6 s, and the job ends at 1800 x 2.6 = 4680 s with a straggler in
// every iteration. LB-BSP gives the workers batch shares 3 x (1, 1, 0.5) /
// 2.5 = 1.2, 1.2, 0.6 of an even split, so each computes for 1.2 s (0.6 x
// 2 on the slow GPU) and an iteration takes 1.2 + 0.6 = 1.8 s: the job
// ends at 1800 x 1.8 = 3240 s with no straggler. The later refreshes
// (every 300 s) balance on the measured times and keep the same shares.
func TestLBBSPEqualisesIterations(t *testing.T) {
	c := env.Cluster{Nodes: []env.Node{{GPUs: 1, Speed: 1}, {GPUs: 1, Speed: 1}, {GPUs: 1, Speed: 0.5}}}
	for _, tt := range []struct {
		lbbsp              bool
		finish, stragglers float64
	}{{false, 4680, 1800}, {true, 3240, 0}} {
		wk := &env.Workers{Period: 300, BurstNoise: -1, LBBSP: tt.lbbsp}
		m := &env.Drover{Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.3, PerEpoch: 1, Epochs: 1}), Workers: wk}
		job := envtest.MakeJob("a").GPUs(3).Duration(1800).Obj()
		s, err := env.New(env.Config{Cluster: c, Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(spreadWith{}, nil); err != nil {
			t.Fatal(err)
		}
		j := s.Jobs()[0]
		if math.Abs(j.Finish-tt.finish) > 1e-9*tt.finish || math.Abs(j.Iterations-1800) > 1e-6 ||
			math.Abs(j.StragglerIterations-tt.stragglers) > 1e-6 {
			t.Errorf("LBBSP %v: finish %v, %v iterations, %v with a straggler; want %v, 1800, %v",
				tt.lbbsp, j.Finish, j.Iterations, j.StragglerIterations, tt.finish, tt.stragglers)
		}
	}
}
