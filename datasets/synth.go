package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// SynthParams describe a synthetic workload generator: a diurnal Poisson
// arrival process, an empirical GPU-count mix and, per GPU-count class, a
// lognormal mixture of run times. FitPhilly estimates them from a trace;
// DefaultSynthParams holds the fit to Pollux's Philly trace.
type SynthParams struct {
	// HourlyRate[h] is the mean number of arrivals per hour during hour h of
	// the day (trace-local time), averaged over the days the trace covers.
	HourlyRate [24]float64 `json:"hourly_rate"`
	// StartHour is the time of day, in hours in [0, 24), at which the
	// generated workload's time 0 falls.
	StartHour float64 `json:"start_hour"`
	// RateScale multiplies every HourlyRate (2 = twice as many arrivals per
	// hour). 0 means 1.
	RateScale float64 `json:"rate_scale,omitempty"`
	// GPUCounts lists the requested GPU counts, ascending, and GPUProbs their
	// probabilities (summing to 1).
	GPUCounts []int     `json:"gpu_counts"`
	GPUProbs  []float64 `json:"gpu_probs"`
	// Durations holds the run-time model of each GPU-count class; the
	// classes' [MinGPUs, MaxGPUs] ranges must cover every GPUCounts entry.
	Durations []DurationClass `json:"durations"`
	// MinDuration and MaxDuration (seconds) truncate the run-time
	// distribution: draws outside [MinDuration, MaxDuration] are redrawn.
	// MaxDuration 0 means no upper bound.
	MinDuration float64 `json:"min_duration"`
	MaxDuration float64 `json:"max_duration,omitempty"`
	// MaxGPUs, when > 0, removes GPU counts above it from the mix (the
	// remaining probabilities are renormalised) instead of clamping them.
	MaxGPUs int `json:"max_gpus,omitempty"`
	// PSShare is the probability that a job with two or more GPUs uses
	// parameter servers, in [0, 1] (see PSRule); FitPhilly leaves it 0
	// (Philly records no architecture) and DefaultParams sets
	// DefaultPSShare.
	PSShare float64 `json:"ps_share,omitempty"`
	// PSWorkersPerServer is the workers per parameter server of a PS job
	// (PSRule's WorkersPerServer; 0: DefaultWorkersPerServer).
	PSWorkersPerServer int `json:"ps_workers_per_server,omitempty"`
}

// DurationClass is the run-time model for jobs whose GPU count lies in
// [MinGPUs, MaxGPUs]: ln(duration in seconds) follows a Gaussian mixture
// with the given weights, means and standard deviations.
type DurationClass struct {
	MinGPUs int       `json:"min_gpus"`
	MaxGPUs int       `json:"max_gpus"`
	Jobs    int       `json:"jobs"` // trace jobs the class was fitted on (informational)
	Weight  []float64 `json:"weight"`
	Mu      []float64 `json:"mu"`
	Sigma   []float64 `json:"sigma"`
}

// CDF returns P(duration <= x) under the class's lognormal mixture.
func (c DurationClass) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	lx := math.Log(x)
	p := 0.0
	for k, w := range c.Weight {
		p += w * 0.5 * math.Erfc(-(lx-c.Mu[k])/(c.Sigma[k]*math.Sqrt2))
	}
	return p
}

// DurationCDF returns the fitted marginal P(duration <= x), mixing the
// duration classes by the GPU mix (ignoring MinDuration/MaxDuration).
func (p SynthParams) DurationCDF(x float64) float64 {
	f := 0.0
	for i, g := range p.GPUCounts {
		if c := p.class(g); c != nil {
			f += p.GPUProbs[i] * c.CDF(x)
		}
	}
	return f
}

// class returns the duration class covering g GPUs, or nil.
func (p SynthParams) class(g int) *DurationClass {
	for i := range p.Durations {
		if c := &p.Durations[i]; g >= c.MinGPUs && g <= c.MaxGPUs {
			return c
		}
	}
	return nil
}

// Validate reports whether p can generate jobs.
func (p SynthParams) Validate() error {
	total := 0.0
	for _, r := range p.HourlyRate {
		if !(r >= 0) || math.IsInf(r, 0) {
			return errors.New("datasets: SynthParams: hourly rates must be finite and >= 0")
		}
		total += r
	}
	if total <= 0 || p.RateScale < 0 || math.IsNaN(p.RateScale) {
		return errors.New("datasets: SynthParams: no arrivals (all rates 0 or negative RateScale)")
	}
	if !(p.StartHour >= 0 && p.StartHour < 24) {
		return errors.New("datasets: SynthParams: StartHour must be in [0, 24)")
	}
	if len(p.GPUCounts) == 0 || len(p.GPUCounts) != len(p.GPUProbs) {
		return errors.New("datasets: SynthParams: GPUCounts and GPUProbs must be non-empty and the same length")
	}
	mass := 0.0
	for i, g := range p.GPUCounts {
		if g < 1 || !(p.GPUProbs[i] >= 0) {
			return fmt.Errorf("datasets: SynthParams: bad GPU count %d or probability %v", g, p.GPUProbs[i])
		}
		if p.MaxGPUs > 0 && g > p.MaxGPUs {
			continue
		}
		c := p.class(g)
		if c == nil {
			return fmt.Errorf("datasets: SynthParams: no duration class covers %d GPUs", g)
		}
		if len(c.Weight) == 0 || len(c.Mu) != len(c.Weight) || len(c.Sigma) != len(c.Weight) {
			return fmt.Errorf("datasets: SynthParams: duration class %d-%d is malformed", c.MinGPUs, c.MaxGPUs)
		}
		mass += p.GPUProbs[i]
	}
	if mass <= 0 {
		return errors.New("datasets: SynthParams: no GPU count left under MaxGPUs")
	}
	if p.MaxDuration > 0 && p.MaxDuration < p.MinDuration {
		return errors.New("datasets: SynthParams: MaxDuration < MinDuration")
	}
	if !(p.PSShare >= 0 && p.PSShare <= 1) || p.PSWorkersPerServer < 0 {
		return fmt.Errorf("datasets: SynthParams: PS share %v, %d workers per server: want a share in [0, 1] and >= 0", p.PSShare, p.PSWorkersPerServer)
	}
	return nil
}

// Tilt returns p with its GPU-count mix tilted toward large jobs: each
// count's probability is multiplied by count^alpha and the mix
// renormalised. Alpha 0 leaves the mix as it is; alpha 1 gives the
// GPU-weighted mix, the sizes of the jobs that a randomly chosen GPU
// (rather than a randomly chosen job) belongs to. Durations, arrivals
// and everything else stay p's. Training on tilted mixes exposes a policy
// to the multi-GPU jobs that dominate other clusters' GPU time while the
// jobs stay fitted to p's trace.
func (p SynthParams) Tilt(alpha float64) SynthParams {
	probs := make([]float64, len(p.GPUProbs))
	total := 0.0
	for i, g := range p.GPUCounts {
		probs[i] = p.GPUProbs[i] * math.Pow(float64(g), alpha)
		total += probs[i]
	}
	if total > 0 {
		for i := range probs {
			probs[i] /= total
		}
	}
	p.GPUProbs = probs
	return p
}

// OfferedLoad returns the workload's offered load on a cluster of gpus
// GPUs: its GPU-seconds over the span of its arrivals times gpus (1: the
// jobs' GPU time, run as the trace measured it, equals the cluster's
// capacity over the arrival window). It is 0 when the workload has fewer
// than two distinct submit times.
func (w *Workload) OfferedLoad(gpus int) float64 {
	if len(w.Jobs) < 2 || gpus <= 0 {
		return 0
	}
	span := w.Jobs[len(w.Jobs)-1].Submit - w.Jobs[0].Submit
	if span <= 0 {
		return 0
	}
	gs := 0.0
	for _, j := range w.Jobs {
		gs += j.GPUTime()
	}
	return gs / (span * float64(gpus))
}

// ScaleLoad stretches or compresses the submit times (about the first
// one) so that OfferedLoad(gpus) becomes rho. It does nothing when the
// load is undefined (see OfferedLoad) or rho is not positive.
func (w *Workload) ScaleLoad(gpus int, rho float64) {
	cur := w.OfferedLoad(gpus)
	if cur <= 0 || !(rho > 0) {
		return
	}
	f, t0 := cur/rho, w.Jobs[0].Submit
	for i := range w.Jobs {
		w.Jobs[i].Submit = t0 + (w.Jobs[i].Submit-t0)*f
	}
}

// Synthetic generates n jobs from p using src as the only source of
// randomness: the same p, n and seed give the same workload. Arrivals are a
// non-homogeneous Poisson process with the piecewise-constant hourly rate;
// submit times and durations are rounded to whole seconds (durations to at
// least 1 s). Models follow the Pollux GPU-time rule (see AssignModel), with
// the choice inside a pair drawn from src; jobs are named "<model>-<idx>".
// Architectures follow PSRule{p.PSShare, p.PSWorkersPerServer, seed} with the
// seed drawn from src after the last job, so the jobs themselves do not
// depend on p.PSShare, and a job that is PS at one share is PS at every
// larger one. Synthetic panics if p.Validate fails.
func Synthetic(p SynthParams, n int, src rand.Source) *Workload {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	g := newSynthGen(p, src)
	w := &Workload{Name: "synthetic", Format: FormatJobs, Jobs: make([]Job, 0, n)}
	for i := 0; i < n; i++ {
		w.Jobs = append(w.Jobs, g.job(i, g.draw()))
	}
	PSRule{Share: p.PSShare, WorkersPerServer: p.PSWorkersPerServer, Seed: g.r.Uint64()}.Assign(w.Jobs)
	return w
}

// synthGen is Synthetic's generator: one job's draws at a time, in the
// order Synthetic has always made them (an arrival gap, a GPU count, a
// duration, a model), so that a workload streamed in chunks is the one
// Synthetic returns.
type synthGen struct {
	p     SynthParams
	r     *rand.Rand
	scale float64   // the rate scale (RateScale, 0 read as 1)
	cum   []float64 // the cumulative GPU mix after the MaxGPUs cut
	acc   float64   // its total
	t     float64   // hours since the start: the last arrival
}

// synthDraw is one job's random draws: the Exp(1) cumulative hazard before
// its arrival, its GPU count, duration and model.
type synthDraw struct {
	e     float64
	gpus  int
	dur   float64
	model string
}

func newSynthGen(p SynthParams, src rand.Source) *synthGen {
	g := &synthGen{p: p, r: rand.New(src), scale: p.RateScale}
	if g.scale == 0 {
		g.scale = 1
	}
	g.cum = make([]float64, len(p.GPUCounts))
	for i, c := range p.GPUCounts {
		if p.MaxGPUs <= 0 || c <= p.MaxGPUs {
			g.acc += p.GPUProbs[i]
		}
		g.cum[i] = g.acc
	}
	return g
}

// draw makes the next job's draws, without its arrival time.
func (g *synthGen) draw() synthDraw {
	r, p := g.r, &g.p
	e := r.ExpFloat64()
	u := r.Float64() * g.acc
	gi := 0
	for gi < len(g.cum)-1 && u >= g.cum[gi] {
		gi++
	}
	n := p.GPUCounts[gi]
	d := sampleDuration(r, *p, p.class(n))
	gt := d * float64(n)
	var model string
	switch {
	case gt < 1*3600:
		model = [2]string{"cifar10", "ncf"}[r.IntN(2)]
	case gt < 10*3600:
		model = [2]string{"deepspeech2", "bert"}[r.IntN(2)]
	case gt < 100*3600:
		model = "yolov3"
	default:
		model = "imagenet"
	}
	return synthDraw{e: e, gpus: n, dur: d, model: model}
}

// arrive consumes an Exp(1) amount e of cumulative hazard hour-slot by
// slot from the last arrival and returns the new arrival time in hours.
func (g *synthGen) arrive(e float64) float64 {
	for {
		hod := math.Mod(g.p.StartHour+g.t, 24)
		slot := int(hod)
		rate := g.p.HourlyRate[slot] * g.scale
		left := float64(slot+1) - hod // hours to the end of this slot
		if rate*left >= e {
			g.t += e / rate
			return g.t
		}
		e -= rate * left
		g.t += left
	}
}

// job returns job i from its draws, arriving now (its architecture is
// left to the caller's PSRule).
func (g *synthGen) job(i int, d synthDraw) Job {
	t := g.arrive(d.e)
	return Job{
		Name:     d.model + "-" + strconv.Itoa(i),
		Submit:   math.Round(t * 3600),
		GPUs:     d.gpus,
		Duration: d.dur,
		Model:    d.model,
	}
}

// sampleDuration draws a rounded duration from c truncated to
// [p.MinDuration, p.MaxDuration]. After 1000 rejected draws it clamps.
func sampleDuration(r *rand.Rand, p SynthParams, c *DurationClass) float64 {
	var d float64
	for try := 0; try < 1000; try++ {
		u := r.Float64()
		k := 0
		for acc := c.Weight[0]; k < len(c.Weight)-1 && u >= acc; acc += c.Weight[k] {
			k++
		}
		d = math.Max(1, math.Round(math.Exp(c.Mu[k]+c.Sigma[k]*r.NormFloat64())))
		if d >= p.MinDuration && (p.MaxDuration <= 0 || d <= p.MaxDuration) {
			return d
		}
	}
	d = math.Max(d, p.MinDuration)
	if p.MaxDuration > 0 {
		d = math.Min(d, p.MaxDuration)
	}
	return d
}
