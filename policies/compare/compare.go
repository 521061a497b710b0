package compare

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
)

// Policy is one contender: a name for the reports and a constructor that
// builds a fresh policy for one run with a seed.
type Policy struct {
	// Name labels the policy in tables, plots and JSON.
	Name string
	// New builds the policy for a run with seed.
	New func(seed uint64) (policies.Policy, error)
	// Baseline marks a baseline: the reports compare every policy with
	// the best baseline (Result.BestBaseline).
	Baseline bool
	// Teacher names the contender this one learned to imitate (a learned
	// policy's behaviour-cloning teacher, policies/direct.TeacherOf), ""
	// for none. When the teacher is among the contenders, the reports
	// compare the two (Result.VersusTeacher): a learned policy's gain
	// over a heuristic may be its teacher's.
	Teacher string
	// Mitigation, when set, is the per-worker model's runtime mitigation
	// of this contender's runs (trace.Stragglers.Mitigation: env's
	// MitigationNone, MitigationSTRET, MitigationReplace or
	// MitigationLBBSP) in place of the one Config.Options gives, so that
	// one comparison holds rows under different mitigations (drover eval's
	// "<policy>~<mitigation>" rows, e.g. LB-BSP). A run under the
	// job-level model (no Stragglers) fails with it.
	Mitigation string
}

// Heuristics returns the contenders for the named policies of reg (plain
// or composed "<policy>+<sync>" names, policies.Registry.Factory), each
// built with policies.Config{Seed: seed} and, when sync is not BSP, told
// to use sync (policies.WithSync); a composed name keeps the sync its
// name gives. It returns an error naming an unknown policy.
func Heuristics(reg policies.Registry, names []string, sync env.Sync) ([]Policy, error) {
	out := make([]Policy, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		f, err := reg.Factory(n)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("compare: policy %q listed twice", n)
		}
		seen[n] = true
		composed := strings.Contains(n, "+")
		out = append(out, Policy{Name: n, New: func(seed uint64) (policies.Policy, error) {
			p, err := f(policies.Config{Seed: seed})
			if err != nil {
				return nil, err
			}
			if sync != (env.Sync{}) && !composed {
				p = policies.WithSync(p, sync)
			}
			return p, nil
		}})
	}
	return out, nil
}

// Config is one comparison: every policy on every seed.
type Config struct {
	// Policies are the contenders, in report order.
	Policies []Policy
	// Seeds are the seeds of the runs, in report order; each seeds the
	// policy and whatever Options makes random (the per-worker model's
	// background load and jitter).
	Seeds []uint64
	// Options returns the replay options of the run with seed (Policy is
	// set by Run). It is called from several goroutines at once and must
	// return options that share no unsynchronized mutable state with
	// another call's: a fresh Cluster and Stragglers (the profiles of
	// trace.Profiles are safe to share).
	Options func(seed uint64) (trace.Options, error)
	// Parallel is the number of runs at a time (0: GOMAXPROCS).
	Parallel int
	// Progress, when set, is called after each run with the number of
	// runs done and the total (from the run's goroutine, one call at a
	// time).
	Progress func(done, total int)
	// Clock, when set, reads a monotonic clock as the time elapsed since
	// a fixed origin (in drover eval, time.Since of its start). Each run
	// reads it before and after every call to its policy's Schedule and
	// adds up the difference (Run.ScheduleTime, PolicyResult.DecisionTime).
	// It is called from several goroutines at once. nil times nothing.
	// Timings are reported, never used: every other figure is the same
	// with and without a Clock. With Parallel > 1 the runs share the CPUs,
	// so the timings are clean only with Parallel 1. Before each timed
	// call the recorder reads every node's telemetry (env.Telemetry) off
	// the clock, so that the simulator's lazily made background is not
	// charged to the policy that reads it first.
	Clock func() time.Duration
	// Reuse, when set, is asked before each run for a run of policy p
	// (an index in Policies) and seed s (in Seeds) that needs no
	// simulation; ok false simulates it (Sweep reuses BSP-only runs).
	Reuse func(p, s int) (r Run, ok bool)

	// keep, when set, is handed the finished jobs of each simulated
	// BSPOnly run of policy p and seed s (one call at a time).
	keep func(p, s int, jobs []finishedJob)
}

// Run is the outcome of one policy on one seed.
type Run struct {
	// Seed is the run's seed.
	Seed uint64
	// Summary summarises the run.
	Summary env.Summary
	// JCTs are the finished jobs' completion times in seconds, in
	// arrival order.
	JCTs []float64
	// Stragglers is the cumulative count of straggling worker-iterations
	// at each decision point and at the end of the run.
	Stragglers Series
	// Deviator says whether the policy is a policies.Deviator; Deviated
	// and Choices are then its counts at the end of the run.
	Deviator          bool
	Deviated, Choices int
	// ScheduleCalls is the number of times the replay called the
	// policy's Schedule (its decision points).
	ScheduleCalls int
	// Decisions is the number of placements the policy made: decisions
	// with nodes that start a job, or move it or change its sync (a
	// decision equal to the job's allocation and a preemption are not
	// counted). A job placed once counts once.
	Decisions int
	// Timed says whether the run was timed (Config.Clock set).
	Timed bool
	// ScheduleTime is the time the policy's Schedule calls took in all,
	// by Config.Clock; 0 when not Timed.
	ScheduleTime time.Duration
	// BSPOnly says whether every placement the policy made gave its job
	// BSP, so that every job trained BSP only (jobs start under BSP and
	// change strategy only by a decision): such a run's schedule is the
	// same at every end of the convergence band (Sweep).
	BSPOnly bool
	// Recomputed says whether the run was not simulated but taken from
	// another band's run of the same seed, its convergence-dependent
	// figures recomputed (Sweep).
	Recomputed bool
}

// finishedJob is what recomputing a BSP-only run at another band needs of
// a finished job.
type finishedJob struct {
	model string
	gpus  int
}

// MicrosPerDecision returns the run's Schedule time per decision
// (ScheduleTime/Decisions) in microseconds: the time of the calls that
// placed nothing is charged to the decisions. It is NaN for a run that
// was not timed or made no decision.
func (r Run) MicrosPerDecision() float64 {
	if !r.Timed || r.Decisions == 0 {
		return math.NaN()
	}
	return float64(r.ScheduleTime) / float64(time.Microsecond) / float64(r.Decisions)
}

// MicrosPerCall returns the run's mean time per Schedule call in
// microseconds; NaN for a run that was not timed or called Schedule
// never.
func (r Run) MicrosPerCall() float64 {
	if !r.Timed || r.ScheduleCalls == 0 {
		return math.NaN()
	}
	return float64(r.ScheduleTime) / float64(time.Microsecond) / float64(r.ScheduleCalls)
}

// Series is a time series sampled at simulated times.
type Series struct {
	// T are the simulated times in seconds, non-decreasing.
	T []float64
	// Y are the values at T.
	Y []float64
}

// PolicyResult is one policy's runs and their statistics over seeds.
type PolicyResult struct {
	// Name is the policy's name.
	Name string
	// Baseline is the contender's Policy.Baseline.
	Baseline bool
	// Teacher is the contender's Policy.Teacher.
	Teacher string
	// Runs holds one run per seed, in Config.Seeds order.
	Runs []Run
	// AvgJCT, P99JCT and AvgTTA are the seeds' average JCT, 99th
	// percentile JCT and average time to accuracy, in seconds.
	AvgJCT, P99JCT, AvgTTA Estimate
	// Stragglers is the number of straggling worker-iterations, and
	// StragglerFrac the share of iterations with a straggler (per-worker
	// model; 0 otherwise).
	Stragglers, StragglerFrac Estimate
	// GPUHours is the GPU time the jobs held, in hours.
	GPUHours Estimate
	// Finished is the number of finished jobs.
	Finished Estimate
	// Accuracy is the finished jobs' mean final accuracy, a fraction
	// (env.Summary.AvgAccuracy), NaN for a policy none of whose runs has
	// one (a model without a convergence model: every run 0).
	Accuracy Estimate
	// Missed is the number of finished jobs that missed their target
	// (env.Summary.Missed): AvgTTA is over the jobs that reached it.
	Missed Estimate
	// Deviation is, for a policies.Deviator, the share of its choices
	// among two or more candidates that were not its heuristic's own
	// (per seed, then over seeds); nil for other policies.
	Deviation *Estimate
	// DecisionTime is the policy's wall time per decision in
	// microseconds (Run.MicrosPerDecision, per seed, then over seeds),
	// and CallTime its time per Schedule call (Run.MicrosPerCall). Runs
	// without a value are left out; with none (no Config.Clock) N is 0
	// and Mean NaN.
	DecisionTime, CallTime Estimate
}

// Timed reports whether the policy's runs were timed (Config.Clock set).
func (p *PolicyResult) Timed() bool { return len(p.Runs) > 0 && p.Runs[0].Timed }

// Result is a comparison's outcome.
type Result struct {
	// Seeds are the seeds, as configured.
	Seeds []uint64
	// Policies holds one result per policy, in Config.Policies order.
	Policies []PolicyResult
}

// errNoRuns is returned for a configuration with nothing to run.
var errNoRuns = errors.New("compare: no policies or no seeds")

// Compare runs every policy on every seed, Parallel runs at a time, and
// gathers the results. Each run is deterministic given its seed, and the
// result does not depend on Parallel or on the order the runs finish in.
// An error stops the comparison (runs under way finish); Compare returns
// the error of the first failed run in policy-then-seed order, naming the
// policy and seed.
func Compare(cfg Config) (*Result, error) {
	if len(cfg.Policies) == 0 || len(cfg.Seeds) == 0 {
		return nil, errNoRuns
	}
	if cfg.Options == nil {
		return nil, errors.New("compare: no Options")
	}
	type task struct{ p, s int }
	tasks := make([]task, 0, len(cfg.Policies)*len(cfg.Seeds))
	for p := range cfg.Policies {
		for s := range cfg.Seeds {
			tasks = append(tasks, task{p, s})
		}
	}
	runs := make([][]Run, len(cfg.Policies))
	for p := range runs {
		runs[p] = make([]Run, len(cfg.Seeds))
	}
	par := cfg.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	par = min(par, len(tasks))
	var (
		mu     sync.Mutex
		next   int
		done   int
		failed bool
		errs   = make([]error, len(tasks))
		wg     sync.WaitGroup
	)
	for range par {
		wg.Go(func() {
			for {
				mu.Lock()
				if next == len(tasks) || failed {
					mu.Unlock()
					return
				}
				t := tasks[next]
				next++
				mu.Unlock()
				pol, seed := cfg.Policies[t.p], cfg.Seeds[t.s]
				r, ok, err := Run{}, false, error(nil)
				if cfg.Reuse != nil {
					r, ok = cfg.Reuse(t.p, t.s)
				}
				var jobs []finishedJob
				if !ok {
					r, jobs, err = runOne(cfg, pol, seed)
				}
				mu.Lock()
				if err != nil {
					failed = true
					errs[t.p*len(cfg.Seeds)+t.s] = fmt.Errorf("compare: %s, seed %d: %w", pol.Name, seed, err)
				} else {
					runs[t.p][t.s] = r
					if cfg.keep != nil && jobs != nil {
						cfg.keep(t.p, t.s, jobs)
					}
					done++
					if cfg.Progress != nil {
						cfg.Progress(done, len(tasks))
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first failed run in task order, whatever finished first
		}
	}
	res := &Result{Seeds: append([]uint64(nil), cfg.Seeds...)}
	for p, pol := range cfg.Policies {
		pr := summarize(pol.Name, runs[p])
		pr.Baseline, pr.Teacher = pol.Baseline, pol.Teacher
		res.Policies = append(res.Policies, pr)
	}
	return res, nil
}

// runOne replays the workload under one policy and seed, recording the
// straggler count at every decision point; with cfg.keep, it also returns
// the finished jobs of a BSPOnly run (non-nil).
func runOne(cfg Config, pol Policy, seed uint64) (Run, []finishedJob, error) {
	o, err := cfg.Options(seed)
	if err != nil {
		return Run{}, nil, err
	}
	if pol.Mitigation != "" {
		if o.Stragglers == nil {
			return Run{}, nil, fmt.Errorf("mitigation %q needs the per-worker model", pol.Mitigation)
		}
		st := *o.Stragglers
		st.Mitigation = pol.Mitigation
		o.Stragglers = &st
	}
	p, err := pol.New(seed)
	if err != nil {
		return Run{}, nil, err
	}
	rec := &recorder{p: p, clock: cfg.Clock, bspOnly: true}
	o.Policy = rec
	res, err := trace.Run(o)
	if err != nil {
		return Run{}, nil, err
	}
	r := Run{Seed: seed, Summary: res.Summary, Stragglers: rec.series, ScheduleCalls: rec.calls, Decisions: rec.decisions,
		Timed: cfg.Clock != nil, ScheduleTime: rec.elapsed, BSPOnly: rec.bspOnly}
	var jobs []finishedJob
	if cfg.keep != nil && r.BSPOnly {
		jobs = []finishedJob{}
		for _, j := range res.Sim.Jobs() {
			if j.State == env.Done {
				jobs = append(jobs, finishedJob{j.Spec.Model, j.Spec.GPUs})
			}
		}
	}
	if d, ok := p.(policies.Deviator); ok {
		r.Deviator = true
		r.Deviated, r.Choices = d.Deviations()
	}
	r.Stragglers.T = append(r.Stragglers.T, res.Sim.Now())
	r.Stragglers.Y = append(r.Stragglers.Y, res.Summary.Stragglers)
	for _, j := range res.Jobs {
		if !math.IsNaN(j.Finish) {
			r.JCTs = append(r.JCTs, j.JCT)
		}
	}
	return r, jobs, nil
}

// recorder wraps a policy and samples the cumulative straggling
// worker-iterations of every job seen so far at each decision point
// (finished jobs keep their counts, so the sum over the jobs ever active is
// the run's total so far). It counts the Schedule calls and the
// placements, and, with a clock, times the policy's Schedule alone (the
// recording is outside the timed span).
type recorder struct {
	p      policies.Policy
	byID   []*env.Job // the jobs seen so far by ID, nil for the others
	seen   []*env.Job
	series Series

	clock     func() time.Duration
	calls     int
	decisions int
	elapsed   time.Duration
	bspOnly   bool // no placement so far gave a strategy other than BSP
}

// Schedule implements policies.Policy.
func (r *recorder) Schedule(v *env.View) ([]env.Decision, error) {
	for _, j := range v.Active {
		for j.ID >= len(r.byID) {
			r.byID = append(r.byID, nil)
		}
		if r.byID[j.ID] == nil {
			r.byID[j.ID] = j
			r.seen = append(r.seen, j)
		}
	}
	sum := 0.0
	for _, j := range r.seen {
		sum += j.Stragglers
	}
	r.series.T = append(r.series.T, v.Now)
	r.series.Y = append(r.series.Y, sum)
	r.calls++
	var (
		ds  []env.Decision
		err error
	)
	if r.clock == nil {
		ds, err = r.p.Schedule(v)
	} else {
		// The simulator makes its background telemetry lazily, on first
		// read: read every node's now, off the clock, so that making it is
		// not charged to whichever policy reads it first (a deployed
		// scheduler has its telemetry at hand). Reading changes nothing.
		if tel, ok := v.Model.(env.Telemetry); ok {
			for n := range v.Free {
				tel.NodeLoad(n, v.Now)
			}
		}
		t0 := r.clock()
		ds, err = r.p.Schedule(v)
		r.elapsed += r.clock() - t0
	}
	for _, d := range ds {
		if r.places(d) {
			r.decisions++
		}
		if len(d.Nodes) > 0 && d.Sync.Kind != env.BSP {
			r.bspOnly = false
		}
	}
	return ds, err
}

// places reports whether d places its job: it has nodes and changes the
// job's allocation or sync. A decision for a job not in the view (which
// the simulator rejects) does not count.
func (r *recorder) places(d env.Decision) bool {
	if len(d.Nodes) == 0 || d.Job < 0 || d.Job >= len(r.byID) || r.byID[d.Job] == nil {
		return false
	}
	j := r.byID[d.Job]
	return !slices.Equal(d.Nodes, j.Alloc) || d.Sync != j.Sync
}

// summarize computes a policy's statistics over its runs.
func summarize(name string, runs []Run) PolicyResult {
	col := func(f func(env.Summary) float64) Estimate {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = f(r.Summary)
		}
		return MeanCI(xs, 0.95)
	}
	res := PolicyResult{
		Name:          name,
		Runs:          runs,
		AvgJCT:        col(func(s env.Summary) float64 { return s.AvgJCT }),
		P99JCT:        col(func(s env.Summary) float64 { return s.P99JCT }),
		AvgTTA:        col(func(s env.Summary) float64 { return s.AvgTTA }),
		Stragglers:    col(func(s env.Summary) float64 { return s.Stragglers }),
		StragglerFrac: col(func(s env.Summary) float64 { return s.StragglerFrac }),
		GPUHours:      col(func(s env.Summary) float64 { return s.GPUHours }),
		Finished:      col(func(s env.Summary) float64 { return float64(s.Finished) }),
		Missed:        col(func(s env.Summary) float64 { return float64(s.Missed) }),
		Accuracy:      col(func(s env.Summary) float64 { return s.AvgAccuracy }),
	}
	if !slices.ContainsFunc(runs, func(r Run) bool { return r.Summary.AvgAccuracy != 0 }) {
		res.Accuracy = Estimate{Mean: math.NaN(), HalfWidth: math.NaN()}
	}
	if len(runs) > 0 && runs[0].Deviator {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			if r.Choices > 0 { // no choice, no deviation: 0
				xs[i] = float64(r.Deviated) / float64(r.Choices)
			}
		}
		d := MeanCI(xs, 0.95)
		res.Deviation = &d
	}
	res.DecisionTime = meanDefined(runs, Run.MicrosPerDecision)
	res.CallTime = meanDefined(runs, Run.MicrosPerCall)
	return res
}

// meanDefined is MeanCI at 95% of f over the runs where f is not NaN.
func meanDefined(runs []Run, f func(Run) float64) Estimate {
	var xs []float64
	for _, r := range runs {
		if x := f(r); !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	return MeanCI(xs, 0.95)
}
