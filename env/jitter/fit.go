package jitter

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
)

// Workers is the number of workers of every job in the PAI v2020 CoV
// table, and of the jobs Fit and Calibrate simulate.
const Workers = 10

// FitSeed is the seed Default was fitted with (see Fit).
const FitSeed = 2020

// CoVStats summarises a set of per-job CoV series for Fit: the pooled
// distribution and per-job statistics that tell the model's parts apart
// (the job level, the within-job spread that stragglers and noise create,
// and the persistence of the noise).
type CoVStats struct {
	// Iterations is each job's number of iterations.
	Iterations []int
	// Pooled holds every CoV of every job, sorted.
	Pooled []float64
	// Median is each job's median CoV.
	Median []float64
	// Spread is each job's log(p90/p10) of its CoVs (p10 floored at 1e-6).
	Spread []float64
	// Lag1 is each job's lag-one autocorrelation of its CoV series (0 when
	// the series is constant or shorter than 3).
	Lag1 []float64
}

// Summarize computes the CoVStats of per-job CoV series (jobs with no
// values are left out).
func Summarize(cov [][]float64) CoVStats {
	var s CoVStats
	for _, xs := range cov {
		if len(xs) == 0 {
			continue
		}
		s.Iterations = append(s.Iterations, len(xs))
		s.Pooled = append(s.Pooled, xs...)
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		s.Median = append(s.Median, env.Quantile(sorted, 0.5))
		s.Spread = append(s.Spread, math.Log(env.Quantile(sorted, 0.9)/math.Max(env.Quantile(sorted, 0.1), 1e-6)+1e-12))
		s.Lag1 = append(s.Lag1, lag1(xs))
	}
	slices.Sort(s.Pooled)
	return s
}

// lag1 returns the lag-one autocorrelation of xs (0 if undefined).
func lag1(xs []float64) float64 {
	if len(xs) < 3 {
		return 0
	}
	m, ss := meanSS(xs)
	if !(ss > 0) {
		return 0
	}
	c := 0.0
	for i := 1; i < len(xs); i++ {
		c += (xs[i] - m) * (xs[i-1] - m)
	}
	return c / ss
}

// simulate runs the process for replicas copies of jobs with the given
// iteration counts and Workers workers, and returns each simulated job's
// SampleCoV series and the number of iterations with a straggler at
// threshold (not counted when threshold < 0). Job k of replica r draws from rand.NewPCG(seed, r*len(iters)+k),
// so runs with one seed and different params share random numbers.
func simulate(p Params, iters []int, replicas int, seed uint64, threshold float64) ([][]float64, int, error) {
	out := make([][]float64, 0, replicas*len(iters))
	xs := make([]float64, Workers)
	strag := 0
	for r := range replicas {
		for k, n := range iters {
			q, err := New(p, Workers, rand.NewPCG(seed, uint64(r*len(iters)+k)))
			if err != nil {
				return nil, 0, err
			}
			cov := make([]float64, n)
			for t := range cov {
				q.Next(xs)
				cov[t] = SampleCoV(xs)
				if threshold >= 0 && HasStraggler(xs, threshold) {
					strag++
				}
			}
			out = append(out, cov)
		}
	}
	return out, strag, nil
}

// fitReplicas is how many copies of the real jobs Fit simulates per
// evaluation.
const fitReplicas = 1

// Objective returns the distance Fit minimises between the model p and the
// real statistics: the two-sample Kolmogorov-Smirnov distance of the pooled
// CoVs plus half the mean of the KS distances of the per-job medians,
// spreads and lag-one autocorrelations, on fitReplicas simulated copies of
// the real jobs drawn with seed. It is +Inf for invalid p.
func Objective(p Params, real CoVStats, seed uint64) float64 {
	if p.LevelMedian > 10 || p.StragglerSlowdown > 1e6 {
		return math.Inf(1) // far outside the data; keeps the search finite
	}
	sim, _, err := simulate(p, real.Iterations, fitReplicas, seed, -1)
	if err != nil {
		return math.Inf(1)
	}
	s := Summarize(sim)
	return datasets.KSTwoSample(s.Pooled, real.Pooled) +
		(datasets.KSTwoSample(s.Median, real.Median)+
			datasets.KSTwoSample(s.Spread, real.Spread)+
			datasets.KSTwoSample(s.Lag1, real.Lag1))/6
}

// The fit searches an unconstrained vector; toParams maps it to Params.
func toParams(x []float64) Params {
	logistic := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	return Params{
		LevelMedian:       math.Exp(x[0]),
		LevelSpreadLow:    math.Exp(x[1]),
		LevelSpreadHigh:   math.Exp(x[2]),
		Persistent:        logistic(x[3]),
		NoiseAR:           0.999 * logistic(x[4]),
		StragglerRate:     logistic(x[5]),
		StragglerLength:   1 + math.Exp(x[6]),
		StragglerSlowdown: 1 + math.Exp(x[7]),
		StragglerSpread:   math.Exp(x[8]),
	}
}

// fromParams is the inverse of toParams.
func fromParams(p Params) []float64 {
	logit := func(v float64) float64 { return math.Log(v / (1 - v)) }
	return []float64{
		math.Log(p.LevelMedian),
		math.Log(p.LevelSpreadLow),
		math.Log(p.LevelSpreadHigh),
		logit(p.Persistent),
		logit(p.NoiseAR / 0.999),
		logit(p.StragglerRate),
		math.Log(p.StragglerLength - 1),
		math.Log(p.StragglerSlowdown - 1),
		math.Log(p.StragglerSpread),
	}
}

// fitStart is where Fit starts: the job level from the real per-job
// medians, the rest generic.
var fitStart = Params{
	LevelMedian: 0.1, LevelSpreadLow: 0.7, LevelSpreadHigh: 1.9, Persistent: 0.5, NoiseAR: 0.5,
	StragglerRate: 0.002, StragglerLength: 50, StragglerSlowdown: 2, StragglerSpread: 0.5,
}

// FitEvaluations bounds the Objective evaluations of one Fit.
const FitEvaluations = 900

// Fit fits Params to real by minimising Objective with common random
// numbers (every evaluation uses seed) by a Nelder-Mead search from a fixed
// start, restarted once from its result. It is deterministic: the same
// real and seed give the same Params bit for bit on one platform. The
// result is rounded to 4 significant digits, and returned with its
// Objective value.
func Fit(real CoVStats, seed uint64) (Params, float64) {
	if len(real.Pooled) == 0 {
		panic("jitter: Fit on no data")
	}
	f := func(x []float64) float64 { return Objective(toParams(x), real, seed) }
	x := fromParams(fitStart)
	x, _ = nelderMead(f, x, 0.5, FitEvaluations/2)
	x, _ = nelderMead(f, x, 0.2, FitEvaluations/2)
	p := round(toParams(x))
	return p, Objective(p, real, seed)
}

// round rounds every field of p to 4 significant digits.
func round(p Params) Params {
	r := func(v float64) float64 {
		if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return v
		}
		e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
		return math.Round(v*e) / e
	}
	return Params{
		LevelMedian: r(p.LevelMedian), LevelSpreadLow: r(p.LevelSpreadLow), LevelSpreadHigh: r(p.LevelSpreadHigh),
		Persistent: r(p.Persistent), NoiseAR: r(p.NoiseAR),
		StragglerRate: r(p.StragglerRate), StragglerLength: max(1, r(p.StragglerLength)),
		StragglerSlowdown: r(p.StragglerSlowdown), StragglerSpread: r(p.StragglerSpread),
	}
}

// nelderMead minimises f from x0 with an initial simplex of the given step
// along each axis, for at most evals evaluations (standard coefficients:
// reflection 1, expansion 2, contraction 1/2, shrink 1/2). It returns the
// best point and its value.
func nelderMead(f func([]float64) float64, x0 []float64, step float64, evals int) ([]float64, float64) {
	n := len(x0)
	pts := make([][]float64, n+1)
	val := make([]float64, n+1)
	for i := range pts {
		pts[i] = slices.Clone(x0)
		if i > 0 {
			pts[i][i-1] += step
		}
		val[i] = f(pts[i])
	}
	used := n + 1
	at := func(c []float64, t float64, from []float64) []float64 {
		y := make([]float64, n)
		for j := range y {
			y[j] = c[j] + t*(from[j]-c[j])
		}
		return y
	}
	for used < evals {
		// Order the simplex by value (stable: ties keep their order).
		idx := make([]int, n+1)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case val[a] < val[b]:
				return -1
			case val[a] > val[b]:
				return 1
			}
			return 0
		})
		sp, sv := make([][]float64, n+1), make([]float64, n+1)
		for i, k := range idx {
			sp[i], sv[i] = pts[k], val[k]
		}
		pts, val = sp, sv
		c := make([]float64, n)
		for _, p := range pts[:n] {
			for j := range c {
				c[j] += p[j] / float64(n)
			}
		}
		worst := pts[n]
		xr := at(c, -1, worst)
		fr := f(xr)
		used++
		switch {
		case fr < val[0]:
			xe := at(c, -2, worst)
			fe := f(xe)
			used++
			if fe < fr {
				pts[n], val[n] = xe, fe
			} else {
				pts[n], val[n] = xr, fr
			}
		case fr < val[n-1]:
			pts[n], val[n] = xr, fr
		default:
			t := 0.5
			if fr < val[n] {
				t = -0.5 // outside contraction
			}
			xc := at(c, t, worst)
			fc := f(xc)
			used++
			if fc < math.Min(fr, val[n]) {
				pts[n], val[n] = xc, fc
				continue
			}
			for i := 1; i <= n; i++ {
				pts[i] = at(pts[0], 0.5, pts[i])
				val[i] = f(pts[i])
				used++
			}
		}
	}
	best := 0
	for i := range val {
		if val[i] < val[best] {
			best = i
		}
	}
	return pts[best], val[best]
}

// Trace is one job's measured per-worker times, iterations by workers (a
// datasets.MiniBatch's Times), for the straggler comparison.
type Trace struct {
	Name  string
	Times [][]float64
}

// Data is the real data Calibrate compares the model with.
type Data struct {
	// CoV holds each job's per-iteration CoV series (the PAI v2020 table).
	CoV [][]float64
	// Traces holds per-worker time series (the job_N_norm files).
	Traces []Trace
}

// Quantiles are the p10, p50, p90 and p99 of a distribution.
type Quantiles struct{ P10, P50, P90, P99 float64 }

func quantiles(sorted []float64) Quantiles {
	return Quantiles{env.Quantile(sorted, 0.1), env.Quantile(sorted, 0.5), env.Quantile(sorted, 0.9), env.Quantile(sorted, 0.99)}
}

// TraceFraction is one measured job's straggler fraction.
type TraceFraction struct {
	Name       string
	Iterations int
	Fraction   float64 // share of iterations with a straggler
}

// Report compares the model with the real data (see Calibrate).
type Report struct {
	Params    Params
	Seed      uint64
	Threshold float64 // straggler threshold, DefaultThreshold
	// Jobs and Iterations count the real CoV series and their values; the
	// simulation has Replicas times as many, Workers workers each.
	Jobs, Iterations, Replicas int
	// KS is the two-sample Kolmogorov-Smirnov distance between the pooled
	// simulated and real CoVs.
	KS float64
	// SimCoV and RealCoV are the quantiles of the pooled CoVs.
	SimCoV, RealCoV Quantiles
	// SimStragglers is the share of simulated iterations with a straggler.
	SimStragglers float64
	// RealStragglers is the share of all Traces' iterations with a
	// straggler, and Traces the share per trace.
	RealStragglers float64
	Traces         []TraceFraction
}

// Target is the acceptance bound on Report.KS for the Default params.
const Target = 0.10

// Replicas is how many copies of the real jobs Calibrate simulates, so that
// the KS distance measures the model rather than the luck of one draw of
// job levels.
const Replicas = 10

// ErrNoData is returned by Calibrate when real has no CoV values.
var ErrNoData = errors.New("jitter: no CoV data")

// Calibrate simulates Replicas copies of the real jobs (Workers workers,
// each job's real iteration count) with p and seed, and compares the pooled
// per-iteration SampleCoVs with the real ones (KS distance, quantiles) and
// the simulated straggler share with the traces' (threshold
// DefaultThreshold). It returns an error for invalid p or no CoV data.
func Calibrate(p Params, real Data, seed uint64) (Report, error) {
	rs := Summarize(real.CoV)
	if len(rs.Pooled) == 0 {
		return Report{}, ErrNoData
	}
	sim, strag, err := simulate(p, rs.Iterations, Replicas, seed, DefaultThreshold)
	if err != nil {
		return Report{}, err
	}
	ss := Summarize(sim)
	r := Report{
		Params: p, Seed: seed, Threshold: DefaultThreshold,
		Jobs: len(rs.Iterations), Iterations: len(rs.Pooled), Replicas: Replicas,
		KS:            datasets.KSTwoSample(ss.Pooled, rs.Pooled),
		SimCoV:        quantiles(ss.Pooled),
		RealCoV:       quantiles(rs.Pooled),
		SimStragglers: float64(strag) / float64(len(ss.Pooled)),
	}
	n, k := 0, 0
	for _, tr := range real.Traces {
		f := StragglerFraction(tr.Times, DefaultThreshold)
		r.Traces = append(r.Traces, TraceFraction{tr.Name, len(tr.Times), f})
		n += len(tr.Times)
		k += int(math.Round(f * float64(len(tr.Times))))
	}
	if n > 0 {
		r.RealStragglers = float64(k) / float64(n)
	}
	return r, nil
}
