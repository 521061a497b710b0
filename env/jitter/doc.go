// Package jitter draws per-worker slowdowns of distributed training jobs:
// the factor by which each worker's compute time differs from the typical
// worker's, iteration by iteration, calibrated against measured mini-batch
// times. Drover's simulator multiplies each worker's compute time by it.
//
// # Model
//
// A Process is one job. New draws the job's variation level L (real jobs
// differ by orders of magnitude), lognormal around Params.LevelMedian with
// a two-piece spread (LevelSpreadLow below the median, LevelSpreadHigh
// above). Worker w's slowdown in iteration t is
//
//	s[w,t] = exp(L * (sqrt(P)*a[w] + sqrt(1-P)*e[w,t])) * b[w,t]
//
// with a persistent per-worker factor a[w] ~ N(0,1), a unit-variance AR(1)
// noise e[w,t] with coefficient NoiseAR, the persistent share P =
// Persistent, and b[w,t] the straggler factor: a worker enters an episode
// with probability StragglerRate per iteration, stays a geometric number of
// iterations with mean StragglerLength, and is slowed meanwhile by
// 1 + (StragglerSlowdown-1)*exp(StragglerSpread*z), z ~ N(0,1), drawn once
// per episode. The typical worker's factor is about 1 and every factor is
// positive. The process is pure and deterministic given its rand.Source.
//
// # Calibration
//
// The data is the Alibaba PAI v2020 GPU trace's mini-batch times
// (alibaba/clusterdata, cluster-trace-gpu-v2020/mini-batch-time, CC-BY-4.0;
// ../shared/traces/alibaba_v2020_minibatch): the coefficient of variation
// of the 10 workers' times in each iteration of 100 jobs (82739
// iterations), and the per-worker times of four jobs. The table's CoVs use
// the sample standard deviation (see SampleCoV), so the simulation does too.
//
// Fit minimises, with common random numbers (seed FitSeed), the KS distance
// of the pooled CoVs plus a sixth of the KS distances of the per-job median,
// p90/p10 spread and lag-one autocorrelation of the CoV, by Nelder-Mead.
// Default (params.json) is its result:
//
//	level_median       0.07782    level_spread_low   0.5754
//	level_spread_high  2.417      persistent         0.7334
//	noise_ar           0.6366     straggler_rate     0.0002128
//	straggler_length   32.5       straggler_slowdown 2.074
//	straggler_spread   1.699
//
// With Default, Calibrate (10 copies of the 100 jobs, seed 1) gives a KS
// distance of 0.051 between the simulated and real pooled CoVs (target
// 0.10; seeds 2 and 3 give 0.072 and 0.054, because a few jobs with a very
// high level move the pooled distribution). The CoV quantiles p10/p50/p90/p99 are 0.035/0.087/1.45/3.16
// simulated against 0.032/0.093/1.06/3.01 real: the model's upper tail is
// heavier. A straggler (a worker more than 20% above the median) is in 44%
// of simulated iterations; run "drover calibrate" for the real jobs'
// figures.
//
// # Usage
//
// Make one Process per job and draw each iteration's factors:
//
//	q, err := jitter.New(jitter.Default(), workers, rand.NewPCG(seed, jobIndex))
//	if err != nil {
//		return err
//	}
//	s := make([]float64, workers)
//	for range iterations {
//		q.Next(s)
//		for w := range s {
//			compute[w] = base[w] * s[w]
//		}
//	}
//
// # Why the fit is hand-written
//
// Fit's Nelder-Mead (fit.go) stays ours: the embedded params.json is what
// it finds, and gonum's optimize.NelderMead (not linked in the binary,
// which has only gonum's optimize/convex/lp) builds its simplex, shrinks
// and stops by other rules, so it would find other parameters and move
// every per-worker result. Quantiles are env.Quantile's (issue 31).
package jitter
