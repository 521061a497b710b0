package datasets

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
)

// Settings of ScaleParams, the generator of large workloads (drover trace
// synth --jobs N --nodes M).
const (
	// DefaultScaleLoad is the load a scaled workload is sized to by
	// default (ScaleSpec.Load: the share of the cluster's GPUs its jobs
	// keep busy by the end of their arrivals if none waits). Under
	// first-fit, job-level model, 100k jobs on 10k GPUs wait 0 s on average
	// at 0.85 to 0.95 and 3 s at 1, 2,900 s (a quarter of their mean JCT)
	// at 1.3; on 1k GPUs, whose window is long enough for the load to be
	// the classic offered load and whose 125 nodes fragment under jobs of
	// up to 128 GPUs, they wait 6,900 s at 0.85 and 35,000 s at 0.95.
	DefaultScaleLoad = 0.8
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
	p := DefaultSynthParams()
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
// jobs drawn from Params whose arrival rate is scaled so that they load a
// cluster of GPUs GPUs to Load. The same spec gives the same workload.
//
// The load is the window load: the jobs' GPU-seconds within the arrival
// span (each job's GPUs x min(duration, span)) over span x GPUs, which is
// the expected share of the GPUs busy at the end of the arrivals if no job
// waits. The classic offered load (Workload.OfferedLoad: whole durations)
// overstates how busy a short window of heavy-tailed jobs keeps the
// cluster: a 40-day job arriving in a 4-day window adds ten times what it
// occupies of the window, so at an offered load of 0.85 on 10k GPUs
// nothing ever waits under first-fit.
type ScaleSpec struct {
	// Jobs is the number of jobs, at least 1.
	Jobs int
	// GPUs is the cluster's GPU count the load is for; 0 keeps Params'
	// own rate (RateScale).
	GPUs int
	// Load is the target window load (see above); 0 means
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
	// WindowLoad is the window load achieved on ScaleSpec.GPUs and
	// OfferedLoad the classic offered load (Workload.OfferedLoad); both 0
	// without GPUs or with fewer than two distinct submit times.
	WindowLoad, OfferedLoad float64
}

// GenerateScaled generates the workload s describes and hands its jobs to
// emit in order, a chunk at a time (the chunk's slice is reused after emit
// returns). The jobs are exactly those of Synthetic(p, s.Jobs,
// rand.NewPCG(s.Seed, s.Seed)), p being s.Params with the RateScale that
// meets s.Load: a first pass draws every job to learn its GPUs and
// duration (24 bytes a job, the only memory that grows with s.Jobs) and
// the cumulative arrival hazard, the rate is solved for from them, and a
// second pass draws the jobs again at that rate. progress, when not nil,
// is called after each chunk with the jobs done so far and s.Jobs.
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
	var first, hazard float64
	w := make(windowLoad, 0, s.Jobs)
	for i := 0; i < s.Jobs; i++ {
		d := g.draw()
		hazard += d.e
		if i == 0 {
			first = d.e
		}
		w = append(w, [3]float64{d.dur, float64(d.gpus), 0})
	}
	psSeed := g.r.Uint64()
	w.prepare()
	if s.GPUs > 0 && w.gpus() < load*float64(s.GPUs) {
		return ScaleStats{}, fmt.Errorf("datasets: scaled workload: %d jobs ask for %.0f GPUs in all, fewer than a load of %v on %d GPUs keeps busy: more jobs or a lower load", s.Jobs, w.gpus(), load, s.GPUs)
	}
	if s.GPUs > 0 && s.Jobs > 1 {
		p.RateScale = rateForLoad(p, first, hazard, w, load*float64(s.GPUs))
	}
	// Second pass: the jobs, at the solved rate.
	g = newSynthGen(p, rand.NewPCG(s.Seed, s.Seed))
	rule := PSRule{Share: p.PSShare, WorkersPerServer: p.PSWorkersPerServer, Seed: psSeed}
	st := ScaleStats{Jobs: s.Jobs, GPUSeconds: w.upTo(math.Inf(1)), RateScale: g.scale}
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
		st.OfferedLoad = st.GPUSeconds / (st.Span * float64(s.GPUs))
		st.WindowLoad = w.upTo(st.Span) / (st.Span * float64(s.GPUs))
	}
	return st, nil
}

// windowLoad holds each job's duration and GPUs, then, after prepare,
// sorted by duration with running sums, so that the GPU-seconds within a
// window of any length are a binary search away.
type windowLoad [][3]float64 // (duration, GPUs, 0), then (duration, GPU-seconds of the shorter jobs, GPUs of it and the longer ones)

// prepare sorts by duration and fills in the running sums.
func (w windowLoad) prepare() {
	slices.SortFunc(w, func(a, b [3]float64) int { return cmp.Compare(a[0], b[0]) })
	gs := 0.0
	for i := range w {
		d, g := w[i][0], w[i][1]
		w[i][2] = g
		w[i][1] = gs
		gs += d * g
	}
	for i := len(w) - 2; i >= 0; i-- {
		w[i][2] += w[i+1][2]
	}
}

// upTo returns the GPU-seconds within a window of t seconds: each job's
// GPUs x min(duration, t). The jobs shorter than t count whole, the others
// t each.
func (w windowLoad) upTo(t float64) float64 {
	k, _ := slices.BinarySearchFunc(w, t, func(e [3]float64, t float64) int { return cmp.Compare(e[0], t) })
	if k == len(w) {
		last := w[len(w)-1]
		return last[1] + last[0]*(last[2])
	}
	return w[k][1] + w[k][2]*t
}

// gpus returns the jobs' GPUs: the most they can hold at once.
func (w windowLoad) gpus() float64 { return w[0][2] }

// rateForLoad returns the rate scale at which the arrivals at cumulative
// hazards first and last (of the unscaled process) lie a span apart such
// that the jobs' GPU-seconds within it are busy x span: busy GPUs on
// average. The window's load grows with the rate (a shorter span and
// more of each job inside it), so the scale is found by bisection on its
// logarithm.
func rateForLoad(p SynthParams, first, last float64, w windowLoad, busy float64) float64 {
	loadAt := func(scale float64) float64 {
		span := 3600 * (hazardTime(p, last, scale) - hazardTime(p, first, scale))
		return w.upTo(span) / span
	}
	lo, hi := math.Log(1e-6), math.Log(1e9)
	for range 100 {
		mid := (lo + hi) / 2
		if loadAt(math.Exp(mid)) < busy {
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
