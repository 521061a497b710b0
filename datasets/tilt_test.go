package datasets

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTilt(t *testing.T) {
	p := SynthParams{GPUCounts: []int{1, 4}, GPUProbs: []float64{0.5, 0.5}}
	// Worked by hand: alpha 1 weights by GPUs, 0.5*1 : 0.5*4 = 1 : 4.
	if got := p.Tilt(1).GPUProbs; math.Abs(got[0]-0.2) > 1e-15 || math.Abs(got[1]-0.8) > 1e-15 {
		t.Errorf("Tilt(1) = %v, want [0.2 0.8]", got)
	}
	// Alpha 2: 0.5 : 8 = 1 : 16.
	if got := p.Tilt(2).GPUProbs; math.Abs(got[0]-1.0/17) > 1e-15 {
		t.Errorf("Tilt(2) = %v, want [1/17 16/17]", got)
	}
	if got := p.Tilt(0).GPUProbs; got[0] != 0.5 || got[1] != 0.5 {
		t.Errorf("Tilt(0) = %v, want the mix unchanged", got)
	}
	if p.GPUProbs[1] != 0.5 {
		t.Error("Tilt modified its receiver's mix")
	}
	// On the built-in Philly fit (jobs up to 64 GPUs) the GPU-weighted mix
	// has about a quarter multi-GPU jobs (5% untilted), and the jobs
	// generated from it follow it.
	d := DefaultParams().Tilt(1)
	w := Synthetic(d, 2000, rand.NewPCG(1, 2))
	multi := 0
	for _, j := range w.Jobs {
		if j.GPUs > 1 {
			multi++
		}
	}
	want := 0.0
	for i, g := range d.GPUCounts {
		if g > 1 && g <= d.MaxGPUs {
			want += d.GPUProbs[i]
		}
	}
	kept := 0.0
	for i, g := range d.GPUCounts {
		if g <= d.MaxGPUs {
			kept += d.GPUProbs[i]
		}
	}
	want /= kept
	if got := float64(multi) / float64(len(w.Jobs)); want < 0.2 || math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/2000) {
		t.Errorf("multi-GPU share %.3f, want %.3f (the tilted mix, against 5%% untilted)", got, want)
	}
}

func TestScaleLoad(t *testing.T) {
	// Two jobs of 2 GPUs x 100 s and 1 GPU x 200 s, submitted 100 s
	// apart, on 4 GPUs: 400 GPU-s over 100 s x 4 GPUs = load 1.
	w := &Workload{Jobs: []Job{{Submit: 50, GPUs: 2, Duration: 100}, {Submit: 150, GPUs: 1, Duration: 200}}}
	if got := w.OfferedLoad(4); got != 1 {
		t.Fatalf("OfferedLoad = %v, want 1", got)
	}
	w.ScaleLoad(4, 2) // twice the load: half the span
	if w.Jobs[0].Submit != 50 || w.Jobs[1].Submit != 100 {
		t.Errorf("submits %v, %v after ScaleLoad(4, 2), want 50, 100", w.Jobs[0].Submit, w.Jobs[1].Submit)
	}
	if got := w.OfferedLoad(4); got != 2 {
		t.Errorf("OfferedLoad after scaling = %v, want 2", got)
	}
	one := &Workload{Jobs: []Job{{Submit: 5, GPUs: 1, Duration: 1}}}
	one.ScaleLoad(4, 2)
	if one.OfferedLoad(4) != 0 || one.Jobs[0].Submit != 5 {
		t.Error("a one-job workload has no load to scale")
	}
}
