package datasets

import (
	"math"
	"slices"
)

// GPUClasses are the GPU-count classes FitPhilly fits a separate run-time
// model to: 1 GPU, 2-7, 8-15 and 16 or more.
var GPUClasses = [][2]int{{1, 1}, {2, 7}, {8, 15}, {16, math.MaxInt32}}

// FitPhilly estimates SynthParams from a decoded trace with durations
// (normally Pollux's Philly trace, decoded with Options.WithPolluxFilter so
// that the fit matches what Pollux samples from):
//
//   - HourlyRate: arrivals in each hour of the day divided by the number of
//     times that hour occurs between the first and last arrival. The hour
//     of day is taken from w.Origin+Submit.
//   - GPUCounts/GPUProbs: the empirical GPU-count frequencies.
//   - Durations: for each of GPUClasses, a Gaussian mixture on ln(duration)
//     fitted by EM (5 components for classes with at least 5000 jobs, 3
//     for smaller ones, 1 per 50 jobs under 150 jobs),
//     initialised deterministically at quantiles.
//   - MinDuration: the smallest duration in w; MaxDuration stays 0.
//
// StartHour is set to 0. Jobs without a duration are ignored; FitPhilly
// panics if none has one.
func FitPhilly(w *Workload) SynthParams {
	var jobs []Job
	for _, j := range w.Jobs {
		if j.Duration > 0 {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 {
		panic("datasets: FitPhilly: workload has no durations")
	}
	var p SynthParams

	// Arrival rate by hour of day.
	var count, exposure [24]float64
	first, last := math.Inf(1), math.Inf(-1)
	for _, j := range jobs {
		abs := float64(w.Origin) + j.Submit
		first, last = math.Min(first, abs), math.Max(last, abs)
		count[hourOfDay(abs)]++
	}
	for s := math.Floor(first / 3600); s <= math.Floor(last/3600); s++ {
		exposure[hourOfDay(s*3600)]++
	}
	for h := range p.HourlyRate {
		if exposure[h] > 0 {
			p.HourlyRate[h] = count[h] / exposure[h]
		}
	}

	// GPU mix.
	gpus := map[int]int{}
	for _, j := range jobs {
		gpus[j.GPUs]++
	}
	for g := range gpus {
		p.GPUCounts = append(p.GPUCounts, g)
	}
	slices.Sort(p.GPUCounts)
	for _, g := range p.GPUCounts {
		p.GPUProbs = append(p.GPUProbs, float64(gpus[g])/float64(len(jobs)))
	}

	// Durations per GPU class.
	p.MinDuration = math.Inf(1)
	for _, cl := range GPUClasses {
		var logs []float64
		for _, j := range jobs {
			if j.GPUs >= cl[0] && j.GPUs <= cl[1] {
				logs = append(logs, math.Log(j.Duration))
				p.MinDuration = math.Min(p.MinDuration, j.Duration)
			}
		}
		if len(logs) == 0 {
			continue
		}
		k := 3
		if len(logs) >= 5000 {
			k = 5
		}
		if len(logs) < 150 {
			k = max(1, len(logs)/50)
		}
		c := fitGMM(logs, k)
		c.MinGPUs, c.MaxGPUs, c.Jobs = cl[0], cl[1], len(logs)
		p.Durations = append(p.Durations, c)
	}
	return p
}

// hourOfDay returns the hour (0-23) of absolute time t in seconds.
func hourOfDay(t float64) int {
	h := int(math.Mod(math.Floor(t/3600), 24))
	if h < 0 {
		h += 24
	}
	return h
}

// fitGMM fits a k-component 1-D Gaussian mixture to x by EM (at most 500
// iterations, stopping when the mean log-likelihood improves by < 1e-8).
// Means start at the (i+0.5)/k quantiles, sigmas at the sample standard
// deviation, weights equal; sigmas are floored at 0.05.
func fitGMM(x []float64, k int) DurationClass {
	s := slices.Clone(x)
	slices.Sort(s)
	mean, sd := meanStd(x)
	sd = math.Max(sd, 0.05)
	c := DurationClass{Weight: make([]float64, k), Mu: make([]float64, k), Sigma: make([]float64, k)}
	for i := range k {
		c.Weight[i] = 1 / float64(k)
		c.Mu[i] = s[min(len(s)-1, int((float64(i)+0.5)/float64(k)*float64(len(s))))]
		c.Sigma[i] = sd
	}
	if k == 1 {
		c.Mu[0], c.Sigma[0] = mean, sd
		return c
	}
	resp := make([]float64, k)
	prev := math.Inf(-1)
	for iter := 0; iter < 500; iter++ {
		sw := make([]float64, k)
		sx := make([]float64, k)
		sxx := make([]float64, k)
		ll := 0.0
		for _, v := range x {
			tot := 0.0
			for i := range k {
				z := (v - c.Mu[i]) / c.Sigma[i]
				resp[i] = c.Weight[i] * math.Exp(-0.5*z*z) / c.Sigma[i]
				tot += resp[i]
			}
			if tot == 0 {
				tot = math.SmallestNonzeroFloat64
			}
			ll += math.Log(tot)
			for i := range k {
				r := resp[i] / tot
				sw[i] += r
				sx[i] += r * v
				sxx[i] += r * v * v
			}
		}
		for i := range k {
			if sw[i] < 1e-9 {
				continue
			}
			c.Weight[i] = sw[i] / float64(len(x))
			c.Mu[i] = sx[i] / sw[i]
			c.Sigma[i] = math.Max(0.05, math.Sqrt(math.Max(0, sxx[i]/sw[i]-c.Mu[i]*c.Mu[i])))
		}
		ll /= float64(len(x))
		if ll-prev < 1e-8 {
			break
		}
		prev = ll
	}
	// Normalise weights so they sum to 1 exactly enough for sampling.
	tw := 0.0
	for _, w := range c.Weight {
		tw += w
	}
	for i := range c.Weight {
		c.Weight[i] /= tw
	}
	return c
}

func meanStd(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)))
}

// KSDistance returns the Kolmogorov-Smirnov statistic sup|F_n(x) - cdf(x)|
// between the empirical distribution of sample and cdf.
func KSDistance(sample []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(sample)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, v := range s {
		f := cdf(v)
		d = math.Max(d, math.Max(math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n)))
	}
	return d
}

// KSTwoSample returns the two-sample Kolmogorov-Smirnov statistic between
// the empirical distributions of a and b.
func KSTwoSample(a, b []float64) float64 {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	i, j, d := 0, 0, 0.0
	for i < len(x) && j < len(y) {
		v := math.Min(x[i], y[j])
		for i < len(x) && x[i] <= v {
			i++
		}
		for j < len(y) && y[j] <= v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	return d
}
