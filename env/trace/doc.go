// Package trace is the replay driver of the simulator: it turns a workload
// (datasets) into jobs, picks the throughput model and the model profiles,
// runs a policy over it with env.Sim and collects the results. It is where
// file I/O (profiles) meets the pure core in env. Like all of env, it
// imports no policy: the caller passes the scheduler (Options.Policy, an
// env.Scheduler, which every policies.Policy is), and the calibration its
// first-fit (CalibrateDedicated), as the usage below does.
//
// # Usage
//
//	w, _ := datasets.Load("builtin", datasets.FormatAuto, datasets.Options{})
//	profiles, src, _ := trace.Profiles("", "")
//	p, _ := builtin.Registry().New("tiresias", policies.Config{Seed: 1})
//	res, _ := trace.Run(trace.Options{Workload: w, Model: "pollux", Profiles: profiles, Policy: p, Nodes: 16, GPUsPerNode: 4})
//	fmt.Println(src, res.Summary.AvgJCT)
//
// Profiles are the measured Pollux profiles when a pollux_apps directory
// is given or found near the workload, and otherwise the fitted parameters
// embedded in the binary (env/profile), so a run needs no files.
//
// # Straggler regimes
//
// Stragglers turns on env.Workers, the per-worker model, in one of two
// regimes (Stragglers.Regime; RegimeAuto picks by AutoRegime):
//
//   - RegimeShared, for GPU-sharing jobs (the Alibaba PAI pod list or a
//     cluster from a PAI node list): jitter.Default, fitted to the PAI
//     v2020 mini-batch times of jobs whose workers share 20-50% of a GPU,
//     on top of the job-level times.
//   - RegimeDedicated, for everything else: jitter.Dedicated, burst noise
//     DedicatedBurstNoise, and an env.Reference that makes the per-worker
//     model reproduce the job-level times on average under a busy
//     cluster's typical conditions, on every placement. It is calibrated
//     to STRET's measurement on dedicated GPUs: stragglers make a typical
//     multi-node job train about 1.5x as long (the band 1.3-1.7), mostly
//     through communication. CalibrateDedicated measures it on the built-in
//     workload, Philly and Helios under first-fit and BSP (drover calibrate
//     prints it with PASS/FAIL); FitDedicated refits its two numbers.
//
// Runs that share a configuration share one reference
// (Stragglers.NewReference, Stragglers.Reference), so each job shape's
// factor is computed once.
package trace
