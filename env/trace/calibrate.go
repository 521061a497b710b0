package trace

import (
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/jitter"
)

// The dedicated regime's calibration targets (drover calibrate). Each
// comes from the source papers' measurements on homogeneous GPUs (STRET,
// ICCCN 2025) or from the issue that asked for the regime:
const (
	// InflationLow and InflationHigh bound the median, over a workload's
	// multi-node jobs under first-fit and BSP, of a job's training time
	// over its straggler-free time: STRET measured "~50%" more training
	// time from stragglers; the band is 1.5 +- 0.2.
	InflationLow, InflationHigh = 1.3, 1.7
	// InflationTarget is the centre the fit aims at.
	InflationTarget = 1.5
	// CommShareLow is the least share of the straggler-induced delay that
	// communication must cause: STRET finds stragglers "primarily stemming
	// from communication hurdles, compounded by computation delays", so
	// communication causes most of it, and computation some.
	CommShareLow = 0.5
	// CommShareHigh is the most: computation must compound it.
	CommShareHigh = 0.95
	// JCTRatioMax bounds a workload's average JCT under the per-worker
	// model over the job-level model's (first-fit, BSP), where the case
	// asks for it: the per-worker model reproduces the measured times on
	// average, so stragglers must not multiply the queueing of a busy
	// trace (Helios at 95% GPU utilisation) beyond 2x.
	JCTRatioMax = 2
)

// CalibrationCase is one workload of the dedicated regime's calibration.
type CalibrationCase struct {
	// Name labels the case in reports.
	Name string
	// Workload is the job list to replay.
	Workload *datasets.Workload
	// Profiles are the model profiles (see Profiles).
	Profiles map[string]env.Profile
	// Nodes and GPUsPerNode size the homogeneous cluster.
	Nodes, GPUsPerNode int
	// JobLevel also runs the job-level model and reports the ratio of the
	// average JCTs (bounded by JCTRatioMax).
	JobLevel bool
}

// CaseResult is a calibration case's outcome, per seed and pooled.
type CaseResult struct {
	// Name is the case's.
	Name string
	// Seeds are the seeds run.
	Seeds []uint64
	// Inflation is each seed's Summary.StragglerInflation; CommShare its
	// Summary.CommShare; StragglerFrac its share of iterations with a
	// straggler; MultiNode its count of finished multi-node jobs.
	Inflation, CommShare, StragglerFrac []float64
	MultiNode                           []int
	// JCT is each seed's per-worker average JCT.
	JCT []float64
	// AvgJCT is the mean over seeds of the per-worker model's average
	// JCT, and JobLevelJCT the job-level model's (the same for every
	// seed: first-fit and the job-level model use no randomness); 0
	// unless the case asked for them.
	AvgJCT, JobLevelJCT float64
}

// MedianInflation returns the median over seeds of the per-seed inflation.
func (r CaseResult) MedianInflation() float64 { return medianOf(r.Inflation) }

// MedianCommShare returns the median over seeds of the per-seed
// communication share.
func (r CaseResult) MedianCommShare() float64 { return medianOf(r.CommShare) }

// JCTRatio returns AvgJCT / JobLevelJCT (NaN unless the case ran both).
func (r CaseResult) JCTRatio() float64 {
	if r.JobLevelJCT <= 0 {
		return math.NaN()
	}
	return r.AvgJCT / r.JobLevelJCT
}

// Pass reports whether the case meets the dedicated regime's targets, and
// what it misses.
func (r CaseResult) Pass() (bool, string) {
	var miss []string
	if x := r.MedianInflation(); !(x >= InflationLow && x <= InflationHigh) {
		miss = append(miss, fmt.Sprintf("inflation %.3f outside [%.1f, %.1f]", x, InflationLow, InflationHigh))
	}
	if x := r.MedianCommShare(); !(x >= CommShareLow && x <= CommShareHigh) {
		miss = append(miss, fmt.Sprintf("communication share %.2f outside [%.2f, %.2f]", x, CommShareLow, CommShareHigh))
	}
	if x := r.JCTRatio(); r.JobLevelJCT > 0 && !(x <= JCTRatioMax) {
		miss = append(miss, fmt.Sprintf("avg JCT %.2fx the job-level model's, above %gx", x, float64(JCTRatioMax)))
	}
	if len(miss) == 0 {
		return true, ""
	}
	return false, fmt.Sprint(miss)
}

// Range returns the smallest and largest of xs.
func Range(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return env.Quantile(s, 0.5)
}

// CalibrateDedicated replays each case under first-fit with BSP in the
// dedicated regime for every seed, with st's background and overrides
// (st.Seed and st.Regime are set per run), and reports the straggler
// figures the regime is calibrated on. firstFit builds a fresh first-fit
// scheduler for each replay, the policy the targets are defined under:
// policies/firstfit's, e.g. func() env.Scheduler { return
// new(firstfit.FirstFit) }. The caller passes it because env imports no
// policy. progress, when set, is called before each replay.
func CalibrateDedicated(cases []CalibrationCase, seeds []uint64, st Stragglers, firstFit func() env.Scheduler, progress func(name string, seed uint64)) ([]CaseResult, error) {
	out := make([]CaseResult, len(cases))
	for i, c := range cases {
		r := CaseResult{Name: c.Name, Seeds: seeds}
		run := func(st *Stragglers) (env.Summary, error) {
			res, err := Run(Options{Workload: c.Workload, Model: ModelDrover, Profiles: c.Profiles, Policy: firstFit(),
				Nodes: c.Nodes, GPUsPerNode: c.GPUsPerNode, Interval: -1, RestartDelay: -1, Stragglers: st})
			if err != nil {
				return env.Summary{}, fmt.Errorf("calibrate %s: %w", c.Name, err)
			}
			return res.Summary, nil
		}
		// One reference for every seed: it depends on the regime, not on
		// the seed.
		shared := st
		shared.Regime = RegimeDedicated
		ref, err := shared.NewReference(c.Nodes)
		if err != nil {
			return nil, err
		}
		for _, seed := range seeds {
			if progress != nil {
				progress(c.Name, seed)
			}
			s := st
			s.Seed, s.Regime, s.Reference = seed, RegimeDedicated, ref
			sum, err := run(&s)
			if err != nil {
				return nil, err
			}
			r.Inflation = append(r.Inflation, sum.StragglerInflation)
			r.CommShare = append(r.CommShare, sum.CommShare)
			r.StragglerFrac = append(r.StragglerFrac, sum.StragglerFrac)
			r.MultiNode = append(r.MultiNode, sum.MultiNodeJobs)
			r.JCT = append(r.JCT, sum.AvgJCT)
			r.AvgJCT += sum.AvgJCT / float64(len(seeds))
		}
		if c.JobLevel {
			sum, err := run(nil)
			if err != nil {
				return nil, err
			}
			r.JobLevelJCT = sum.AvgJCT
		} else {
			r.AvgJCT = 0
		}
		out[i] = r
	}
	return out, nil
}

// FitDedicated searches jitter.Dedicated's level median and the dedicated
// regime's burst noise for the values that bring every case's median
// inflation nearest InflationTarget (in log ratio) and its communication
// share into [CommShareLow, CommShareHigh], starting from the current
// values: a coordinate search on a logarithmic grid that halves its step
// when no move improves, for at most evals objective evaluations. It
// returns the best values and their objective. Each evaluation replays
// every case for every seed under firstFit's schedulers (see
// CalibrateDedicated); progress, when set, is called after each.
func FitDedicated(cases []CalibrationCase, seeds []uint64, st Stragglers, firstFit func() env.Scheduler, evals int, progress func(level, burst, obj float64)) (level, burst, obj float64, err error) {
	f := func(level, burst float64) (float64, error) {
		p := jitter.Dedicated()
		p.LevelMedian = level
		s := st
		s.Jitter, s.BurstNoise = &p, &burst
		rs, err := CalibrateDedicated(cases, seeds, s, firstFit, nil)
		if err != nil {
			return 0, err
		}
		obj := 0.0
		for _, r := range rs {
			d := math.Log(r.MedianInflation() / InflationTarget)
			obj += d * d
			c := r.MedianCommShare()
			if c < CommShareLow {
				obj += (CommShareLow - c) * (CommShareLow - c)
			} else if c > CommShareHigh {
				obj += (c - CommShareHigh) * (c - CommShareHigh)
			}
		}
		if progress != nil {
			progress(level, burst, obj)
		}
		return obj, nil
	}
	x := [2]float64{jitter.Dedicated().LevelMedian, DedicatedBurstNoise}
	best, err := f(x[0], x[1])
	if err != nil {
		return 0, 0, 0, err
	}
	step := math.Log(2)
	for n := 1; n < evals && step > 0.02; {
		moved := false
		for d := range 2 {
			for _, sign := range []float64{1, -1} {
				y := x
				y[d] *= math.Exp(sign * step)
				v, err := f(y[0], y[1])
				n++
				if err != nil {
					return 0, 0, 0, err
				}
				if v < best {
					best, x, moved = v, y, true
					break
				}
			}
		}
		if !moved {
			step /= 2
		}
	}
	return x[0], x[1], best, nil
}
