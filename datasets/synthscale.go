package datasets

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Settings of ScaleParams, the generator of large workloads (drover trace
// synth --jobs N --nodes M).
const (
	// DefaultScaleLoad is the offered load a scaled workload is sized to
	// by default: the jobs' GPU-seconds over (arrival span x cluster
	// GPUs). At 0.5 the cluster is busy but its queue stays short under
	// first-fit with either straggler model (the per-worker model runs jobs
	// somewhat slower, so its effective load is higher).
	DefaultScaleLoad = 0.5
	// ScaleMaxGPUs caps a scaled workload's GPU counts (Philly's largest
	// fitted class), and further to the cluster's GPUs.
	ScaleMaxGPUs = 128
	// ScaleMaxDuration (seconds) truncates a scaled workload's run times
	// at 1000 hours, the Pollux filter's GPU-time bound for a one-GPU job
	// (the fit's lognormal tail is otherwise unbounded).
	ScaleMaxDuration = 1000 * 3600
	// scaleChunk is the jobs generated, encoded and handed on at a time.
	scaleChunk = 4096
)

// ScaleParams returns the parameters of a scaled workload for a cluster of
// gpus GPUs: DefaultSynthParams (the Philly fit) with its GPU counts capped
// at ScaleMaxGPUs and at gpus (when positive), run times truncated at
// ScaleMaxDuration, and DefaultPSShare of the multi-GPU jobs on parameter
// servers. Its RateScale is 1; ScaleSpec sets the rate.
func ScaleParams(gpus int) SynthParams {
	p := DefaultSynthParams
	p.MaxGPUs = ScaleMaxGPUs
	if gpus > 0 {
		p.MaxGPUs = min(p.MaxGPUs, gpus)
	}
	p.MaxDuration = ScaleMaxDuration
	p.PSShare = DefaultPSShare
	p.RateScale = 1
	return p
}

// ScaleSpec describes a large synthetic workload sized to a cluster: Jobs
// jobs drawn from Params whose arrival rate is scaled so that their offered
// load on a cluster of GPUs GPUs is Load. The same spec gives the same
// workload.
type ScaleSpec struct {
	// Jobs is the number of jobs, at least 1.
	Jobs int
	// GPUs is the cluster's GPU count the load is for; 0 keeps Params'
	// own rate (RateScale).
	GPUs int
	// Load is the target offered load (Workload.OfferedLoad); 0 means
	// DefaultScaleLoad.
	Load float64
	// Params is the job mix; the zero value (no GPU counts) means
	// ScaleParams(GPUs).
	Params SynthParams
	// Seed seeds the PCG source (seed, seed), as GenerateDefault does.
	Seed uint64
}

// ScaleStats says what a scaled generation produced.
type ScaleStats struct {
	// Jobs is the number of jobs generated.
	Jobs int
	// GPUSeconds is their total GPU time (GPUs x Duration).
	GPUSeconds float64
	// Span is the last submit time minus the first, in seconds.
	Span float64
	// RateScale is the arrival-rate multiplier the load asked for.
	RateScale float64
	// OfferedLoad is the load achieved on ScaleSpec.GPUs (0 without GPUs,
	// or with fewer than two distinct submit times).
	OfferedLoad float64
}

// GenerateScaled generates the workload s describes and hands its jobs to
// emit in order, a chunk at a time (the chunk's slice is reused after emit
// returns); memory does not grow with s.Jobs. The jobs are exactly those of
// Synthetic(p, s.Jobs, rand.NewPCG(s.Seed, s.Seed)), p being s.Params
// with the RateScale that meets s.Load: a first pass draws every job to
// learn the total GPU time and cumulative arrival hazard, the rate is
// solved for from them, and a second pass draws the jobs again at that
// rate. progress, when not nil, is called after each chunk with the jobs
// done so far and s.Jobs.
func GenerateScaled(s ScaleSpec, emit func(jobs []Job) error, progress func(done, total int)) (ScaleStats, error) {
	p := s.Params
	if len(p.GPUCounts) == 0 {
		p = ScaleParams(s.GPUs)
	}
	load := s.Load
	if load == 0 {
		load = DefaultScaleLoad
	}
	switch {
	case s.Jobs < 1:
		return ScaleStats{}, fmt.Errorf("datasets: scaled workload: %d jobs, want at least 1", s.Jobs)
	case s.GPUs < 0:
		return ScaleStats{}, fmt.Errorf("datasets: scaled workload: %d GPUs, want >= 0", s.GPUs)
	case !(load > 0) || math.IsInf(load, 0):
		return ScaleStats{}, fmt.Errorf("datasets: scaled workload: load %v, want > 0", load)
	}
	if err := p.Validate(); err != nil {
		return ScaleStats{}, err
	}
	// First pass: the draws alone (no names, no times).
	g := newSynthGen(p, rand.NewPCG(s.Seed, s.Seed))
	var first, hazard, gpuSec float64
	for i := 0; i < s.Jobs; i++ {
		d := g.draw()
		hazard += d.e
		if i == 0 {
			first = d.e
		}
		gpuSec += d.dur * float64(d.gpus)
	}
	psSeed := g.r.Uint64()
	if s.GPUs > 0 && s.Jobs > 1 {
		p.RateScale = rateForSpan(p, first, hazard, gpuSec/(load*float64(s.GPUs)))
	}
	// Second pass: the jobs, at the solved rate.
	g = newSynthGen(p, rand.NewPCG(s.Seed, s.Seed))
	rule := PSRule{Share: p.PSShare, WorkersPerServer: p.PSWorkersPerServer, Seed: psSeed}
	st := ScaleStats{Jobs: s.Jobs, GPUSeconds: gpuSec, RateScale: g.scale}
	chunk := make([]Job, 0, min(s.Jobs, scaleChunk))
	var t0, t1 float64
	for i := 0; i < s.Jobs; i++ {
		j := g.job(i, g.draw())
		j.Arch, j.PSShards = rule.Decide(j.Name, j.GPUs)
		if i == 0 {
			t0 = j.Submit
		}
		t1 = j.Submit
		chunk = append(chunk, j)
		if len(chunk) == cap(chunk) || i == s.Jobs-1 {
			if err := emit(chunk); err != nil {
				return st, err
			}
			chunk = chunk[:0]
			if progress != nil {
				progress(i+1, s.Jobs)
			}
		}
	}
	st.Span = t1 - t0
	if s.GPUs > 0 && st.Span > 0 {
		st.OfferedLoad = gpuSec / (st.Span * float64(s.GPUs))
	}
	return st, nil
}

// rateForSpan returns the rate scale at which the arrivals at cumulative
// hazards first and last (of the unscaled process) lie span seconds apart.
// The span shrinks as the rate grows; the diurnal rates make it not quite
// inversely proportional, so the scale is found by bisection on its
// logarithm around the constant-rate answer.
func rateForSpan(p SynthParams, first, last, span float64) float64 {
	spanAt := func(scale float64) float64 {
		return 3600 * (hazardTime(p, last, scale) - hazardTime(p, first, scale))
	}
	s0 := spanAt(1) / span
	lo, hi := math.Log(s0)-3, math.Log(s0)+3 // the day's rates differ by far less than e^3
	for range 100 {
		mid := (lo + hi) / 2
		if spanAt(math.Exp(mid)) > span {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}

// hazardTime returns the time, in hours from the start, at which the
// cumulative arrival hazard of p's hourly rates times scale reaches h: the
// arrival time of a job whose Exp(1) draws sum to h. Whole days go in one
// step.
func hazardTime(p SynthParams, h, scale float64) float64 {
	day := 0.0
	for _, r := range p.HourlyRate {
		day += r * scale
	}
	days := math.Floor(h / day)
	t, h := 24*days, h-days*day
	for {
		hod := math.Mod(p.StartHour+t, 24)
		slot := int(hod)
		rate := p.HourlyRate[slot] * scale
		left := float64(slot+1) - hod
		if rate*left >= h {
			return t + h/rate
		}
		h -= rate * left
		t += left
	}
}

// WriteScaled writes the workload s describes to w as Drover's job CSV
// (Encode's format, header first), a chunk at a time: the file Encode would
// write for the whole workload, without ever holding it.
func WriteScaled(w io.Writer, s ScaleSpec, progress func(done, total int)) (ScaleStats, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	head := true
	one := &Workload{}
	st, err := GenerateScaled(s, func(jobs []Job) error {
		one.Jobs = jobs
		buf = Encode(one, buf[:0])
		b := buf
		if !head {
			// Encode writes the header first: keep it only once.
			nl := 0
			for b[nl] != '\n' {
				nl++
			}
			b = b[nl+1:]
		}
		head = false
		_, err := bw.Write(b)
		return err
	}, progress)
	if err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	return st, nil
}
