package env

import (
	"math"
	"slices"
)

// JobResult is one job's outcome.
type JobResult struct {
	// Name is the job's name.
	Name string
	// Submit, Start and Finish are the arrival, first start and finish
	// times in seconds (NaN when they did not happen).
	Submit, Start, Finish float64
	// Queue is the delay from submission to first start.
	Queue float64
	// JCT is the job completion time, Finish - Submit.
	JCT float64
	// RunTime is the seconds the job held GPUs, restart delays included.
	RunTime float64
	// Restarts counts placements after the first.
	Restarts int
	// GPUSeconds is the GPU time the job held.
	GPUSeconds float64
	// TTA is the time to accuracy: the seconds the job trained (held GPUs)
	// to reach its target, restart delays excluded; +Inf when it finished
	// without reaching it (Reached).
	TTA float64
	// Accuracy is the accuracy (a fraction) the job ended with under the
	// convergence model (Convergence; Drover model only): NaN when it did
	// not finish, when a strategy it trained under diverged, or under
	// another model.
	Accuracy float64
	// Reached says whether the job reached its target: false when it
	// finished having trained under a strategy that never reaches it, or
	// has not finished.
	Reached bool
	// Iterations, StragglerIterations and Stragglers are the per-worker
	// model's counts: iterations run, iterations with at least one
	// straggler, and straggling worker-iterations (0 without it).
	Iterations, StragglerIterations, Stragglers float64
	// StragglerFree is the seconds the job would have trained had every
	// worker run at its median worker's pace (Job.StragglerFree; 0
	// without the per-worker model), and CommDelay and ComputeDelay split
	// the rest of its training time by cause (Job.CommDelay).
	StragglerFree, CommDelay, ComputeDelay float64
	// Nodes is the most distinct nodes the job's allocations spanned.
	Nodes int
	// GPUs is the number of GPUs (workers) the job asked for.
	GPUs int
	// FinalMetric is the validation metric the job finished with, in its
	// model's own unit (see Accuracy; the Drover model's FinalMetric):
	// NaN when the job did not finish or its model or profile gives none.
	FinalMetric float64
	// Relayed, RelayChanges, Withheld and Tunings say which of STRET's
	// stages the job used (Job.Relayed and the rest), and Replacements how
	// many workers the replace-straggler baseline replaced (Job.Replacements).
	Relayed, Withheld                   float64
	RelayChanges, Tunings, Replacements int
}

// converger is a model that knows the accuracy a job ends with under the
// convergence model and whether it reached its target (Drover.Converged).
type converger interface {
	Converged(j *Job) (accuracy float64, reached bool)
}

// finalMetricer is a model that knows the validation metric a job ends
// its training with (Drover.FinalMetric).
type finalMetricer interface {
	FinalMetric(j *Job) float64
}

// Summary is a run's outcome.
type Summary struct {
	// Jobs is the number of jobs; Finished how many of them finished.
	Jobs, Finished int
	// AvgJCT, P50JCT and P99JCT summarise the finished jobs' JCTs (seconds).
	AvgJCT, P50JCT, P99JCT float64
	// AvgQueue is the mean queueing delay of the jobs that started.
	AvgQueue float64
	// Makespan is the last finish minus the first submission (seconds).
	Makespan float64
	// GPUUtil is the GPU-seconds held over (cluster GPUs x makespan).
	GPUUtil float64
	// GPUHours is the GPU time held, in hours.
	GPUHours float64
	// Restarts is the total number of restarts.
	Restarts int
	// AvgTTA is the mean time to accuracy of the finished jobs that
	// reached their target (seconds); Missed counts the finished jobs that
	// did not (their TTA is +Inf). Compare AvgTTA only beside Missed.
	AvgTTA float64
	Missed int
	// TTAPerTarget is the seconds the finished jobs trained per target
	// reached: AvgTTA when every job reached its target, more when some
	// trained for nothing (a missed job's training counts against those
	// that reached theirs); +Inf when none did. It is the one figure that
	// ranks runs with and without misses, and what gates compare.
	TTAPerTarget float64
	// AvgAccuracy is the mean final accuracy (JobResult.Accuracy) of the
	// finished jobs, a diverged job counting 0; 0 under a model without
	// one (Summary values compare with ==, so no NaN).
	AvgAccuracy float64
	// Stragglers is the number of straggling worker-iterations, and
	// StragglerFrac the share of iterations with at least one straggler
	// (per-worker model; 0 otherwise).
	Stragglers, StragglerFrac float64
	// StragglerInflation is the median, over the finished jobs that
	// spanned more than one node, of a job's training time over its
	// straggler-free time (JobResult.StragglerFree): how much stragglers
	// slow a typical multi-node job. CommShare is the communication
	// part of those jobs' straggler-induced delay (CommDelay over
	// CommDelay + ComputeDelay, summed over the jobs). Both are 0
	// without the per-worker model or without such jobs.
	StragglerInflation, CommShare float64
	// MultiNodeJobs counts the finished jobs those two are over.
	MultiNodeJobs int
	// Mitigation is what the runtime straggler mitigation did, summed over
	// the jobs (zero without one).
	Mitigation MitigationSummary
}

// MitigationSummary sums the runtime straggler mitigations' actions over a
// run's jobs: STRET's stages (Job.Relayed, Job.Withheld, Job.Tunings) and
// the replace-straggler baseline's replacements, each with the number of
// jobs that used it.
type MitigationSummary struct {
	// Relayed is the relaying worker-iterations, RelayChanges the changes
	// of relays (each a reconfiguration), RelayJobs the jobs that relayed.
	Relayed                 float64
	RelayChanges, RelayJobs int
	// Withheld is the withheld worker-iterations, WithheldJobs the jobs
	// that withheld any.
	Withheld     float64
	WithheldJobs int
	// Tunings is the one-time batch tunings, TunedJobs the jobs tuned.
	Tunings, TunedJobs int
	// Replacements is the workers replaced, ReplacedJobs the jobs that
	// replaced any.
	Replacements, ReplacedJobs int
}

// add counts j's mitigation actions in ms.
func (ms *MitigationSummary) add(j *Job) {
	ms.Relayed += j.Relayed
	ms.RelayChanges += j.RelayChanges
	ms.Withheld += j.Withheld
	ms.Tunings += j.Tunings
	ms.Replacements += j.Replacements
	if j.Relayed > 0 {
		ms.RelayJobs++
	}
	if j.Withheld > 0 {
		ms.WithheldJobs++
	}
	if j.Tunings > 0 {
		ms.TunedJobs++
	}
	if j.Replacements > 0 {
		ms.ReplacedJobs++
	}
}

// Results returns each job's outcome, in arrival order.
func (s *Sim) Results() []JobResult {
	rs := make([]JobResult, len(s.jobs))
	for i := range s.jobs {
		j := &s.jobs[i]
		rs[i] = JobResult{
			Name:       j.Spec.Name,
			Submit:     j.Spec.Submit,
			Start:      j.FirstStart,
			Finish:     j.Finish,
			Queue:      j.FirstStart - j.Spec.Submit,
			JCT:        j.JCT(),
			RunTime:    j.Held,
			Restarts:   j.Restarts(),
			GPUSeconds: j.Attained,
			TTA:        math.NaN(),

			Iterations:          j.Iterations,
			StragglerIterations: j.StragglerIterations,
			Stragglers:          j.Stragglers,
			StragglerFree:       j.StragglerFree,
			CommDelay:           j.CommDelay,
			ComputeDelay:        j.ComputeDelay,
			Nodes:               j.MaxNodes,
			GPUs:                j.Spec.GPUs,
			FinalMetric:         math.NaN(),
			Accuracy:            math.NaN(),
			Relayed:             j.Relayed,
			Withheld:            j.Withheld,
			RelayChanges:        j.RelayChanges,
			Tunings:             j.Tunings,
			Replacements:        j.Replacements,
		}
		if fm, ok := s.model.(finalMetricer); ok && j.State == Done {
			rs[i].FinalMetric = fm.FinalMetric(j)
		}
		if j.State == Done {
			// TTA: the seconds trained to reach the target, +Inf when
			// the job finished without reaching it.
			rs[i].Accuracy, rs[i].Reached = s.converged(j)
			rs[i].TTA = math.Inf(1)
			if rs[i].Reached {
				rs[i].TTA = s.trainedSeconds(j)
			}
		}
	}
	return rs
}

// trainedSeconds returns the seconds j trained: its time holding GPUs less
// the restart delay of each start.
func (s *Sim) trainedSeconds(j *Job) float64 {
	return max(0, j.Held-float64(j.Starts)*s.cfg.RestartDelay)
}

// converged returns the accuracy finished job j ended with and whether it
// reached its target; a model without a convergence model reports every
// job reached, with no accuracy.
func (s *Sim) converged(j *Job) (float64, bool) {
	if c, ok := s.model.(converger); ok {
		return c.Converged(j)
	}
	return math.NaN(), true
}

// Summary summarises the run so far.
func (s *Sim) Summary() Summary {
	sum := Summary{Jobs: len(s.jobs)}
	var infl []float64
	var comm, delay float64
	jcts := make([]float64, 0, len(s.jobs))
	var queue, gpuSec, tta, trained, iters, withStraggler, acc float64
	started, reached := 0, 0
	first, last := math.Inf(1), math.Inf(-1)
	for i := range s.jobs {
		j := &s.jobs[i]
		gpuSec += j.Attained
		sum.Restarts += j.Restarts()
		first = min(first, j.Spec.Submit)
		if !math.IsNaN(j.FirstStart) {
			queue += j.FirstStart - j.Spec.Submit
			started++
		}
		iters += j.Iterations
		sum.Mitigation.add(j)
		withStraggler += j.StragglerIterations
		sum.Stragglers += j.Stragglers
		if j.State == Done {
			t := s.trainedSeconds(j)
			if j.MaxNodes > 1 && j.StragglerFree > 0 {
				infl = append(infl, t/j.StragglerFree)
				comm += j.CommDelay
				delay += j.CommDelay + j.ComputeDelay
			}
			trained += t
			a, ok := s.converged(j)
			if ok {
				tta += t
				reached++
			} else {
				sum.Missed++
			}
			if math.IsNaN(a) {
				a = 0
			}
			acc += a
			jcts = append(jcts, j.JCT())
			last = max(last, j.Finish)
		}
	}
	sum.Finished = len(jcts)
	sum.MultiNodeJobs = len(infl)
	if len(infl) > 0 {
		slices.Sort(infl)
		sum.StragglerInflation = Quantile(infl, 0.5)
		if delay > 0 {
			sum.CommShare = comm / delay
		}
	}
	if iters > 0 {
		sum.StragglerFrac = withStraggler / iters
	}
	if reached > 0 {
		sum.AvgTTA = tta / float64(reached)
		sum.TTAPerTarget = trained / float64(reached)
	} else if sum.Missed > 0 {
		sum.TTAPerTarget = math.Inf(1)
	}
	if _, ok := s.model.(converger); ok && len(jcts) > 0 {
		sum.AvgAccuracy = acc / float64(len(jcts))
	}
	if started > 0 {
		sum.AvgQueue = queue / float64(started)
	}
	sum.GPUHours = gpuSec / 3600
	if len(jcts) > 0 {
		t := 0.0
		for _, x := range jcts {
			t += x
		}
		sum.AvgJCT = t / float64(len(jcts))
		slices.Sort(jcts)
		sum.P50JCT = Quantile(jcts, 0.50)
		sum.P99JCT = Quantile(jcts, 0.99)
		sum.Makespan = last - first
		if sum.Makespan > 0 {
			sum.GPUUtil = gpuSec / (float64(s.total) * sum.Makespan)
		}
	}
	return sum
}

// Quantile returns the q-quantile of the ascending xs, interpolated
// linearly between order statistics: Hyndman and Fan's type 7, numpy's
// and R's default. With n samples and h = (n-1)q it is x[floor(h)] +
// (h-floor(h))(x[floor(h)+1]-x[floor(h)]). q is clamped to [0, 1]; the
// result is NaN for no samples or a NaN q. It is the project's one
// type-7 quantile (gonum's stat.Quantile with LinInterp is type 4,
// interpolating at nq: 2 where this gives 2.5 for the median of 1, 2, 3,
// 4).
func Quantile(xs []float64, q float64) float64 {
	n := len(xs)
	if n == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	h := float64(n-1) * min(max(q, 0), 1)
	lo := int(h) // h >= 0: truncation is floor
	if lo >= n-1 {
		return xs[n-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}
