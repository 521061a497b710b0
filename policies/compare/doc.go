// Package compare evaluates scheduling policies offline, the library
// behind `drover eval`: it replays one workload under every policy with
// every seed (env/trace, several runs in parallel goroutines, each
// deterministic given its seed), and reports per policy the average and
// 99th-percentile JCT, the average time to accuracy, stragglers and
// GPU-hours, each as a mean over seeds with a 95% Student-t confidence
// interval; as a Markdown table, a JSON summary, and PNG plots (the JCT CDF
// per policy and the straggler rate over simulated time). It also
// summarises a server's decision log (datasets/declog): decisions per policy
// source, fallback reasons, latency percentiles and JCT per source.
//
// A seed seeds the policy (policies.Config.Seed) and whatever the replay
// options make random: with the per-worker straggler model, the nodes'
// background load and the workers' jitter. Under the job-level model with
// deterministic policies every seed gives the same run, and the intervals
// have zero width.
//
// Decision time is measured when Config.Clock is set: each run reads the
// clock around every call to its policy's Schedule, and the result gives
// the wall time per decision (placements made: starts, moves, sync
// changes) and per Schedule call, in microseconds, over seeds
// (PolicyResult.DecisionTime, CallTime). The package never reads the wall
// clock itself; the caller injects it (drover eval passes time.Since of
// its start), and tests inject a fake one. Timings are reported, never
// used, so every other figure is the same with and without a clock; they
// are clean only with Parallel 1, when no other run shares the CPUs.
//
// Contenders marked Baseline (drover eval marks builtin.IsBaseline's) are
// the yardstick: the table and the JSON name the best baseline by average
// JCT and, separately, by average TTA (the lowest mean over seeds), and
// give every contender's relative difference from each, paired over
// seeds with a 95% interval (Result.BestBaseline, Result.Relative), so
// that a method's claim reads "x% ± y% against the best baseline". A
// contender with a Teacher (a learned policy and the policy it was cloned
// from; drover eval adds the teacher beside a checkpoint) is also compared
// with its teacher (Result.VersusTeacher), so that a learned policy's gain
// over a heuristic is not mistaken for its own when it is its teacher's.
//
// Under the per-worker model the jobs' synchronization strategies cost
// what the fitted convergence model says (env.Convergence), and each
// policy's figures include the finished jobs' mean final accuracy and the
// number that missed their target (avg TTA is over those that reached
// it). Sweep runs a comparison at several points of the model's
// confidence band (the fit and both ends): a run whose jobs all trained
// BSP has the same schedule at every band and is reused with its accuracy
// recomputed, the others are simulated at each. Rank orders policies by
// RankRule (fewer missed targets first, then lower avg TTA), and
// CheckRanking says whether the top three at the fit stay the top three,
// in order, at every band.
//
// Contenders are any policies.Policy: heuristics (policies/builtin,
// Heuristics, which also takes composed names "<policy>+<sync>") or
// learned variants of a heuristic (env/placement.Learned,
// which `drover eval` builds from a sas-rl or strn-rl checkpoint). The
// learned policies of the placement and sync environments act on that
// environment's rack groups and first-fit placements and are not replayed
// here.
//
// # Usage
//
//	w, _ := datasets.Load("builtin", datasets.FormatAuto, datasets.Options{})
//	contenders, _ := compare.Heuristics(builtin.Registry(), []string{"first-fit", "strn"}, env.Sync{})
//	res, err := compare.Compare(compare.Config{
//		Policies: contenders,
//		Seeds:    []uint64{1, 2, 3},
//		Options: func(seed uint64) (trace.Options, error) {
//			profiles, _, err := trace.Profiles("", "") // fresh per run
//			return trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles,
//				Nodes: 16, GPUsPerNode: 4, Interval: -1, RestartDelay: -1,
//				Stragglers: &trace.Stragglers{Background: "builtin", Seed: seed}}, err
//		},
//	})
//	compare.WriteTable(os.Stdout, res)
//	plot.WriteFile("jct_cdf.png", func(f io.Writer) error { return compare.JCTCDF(f, res, "JCT") })
package compare
