// Package env is Drover's cluster simulator: a pure, deterministic
// discrete-event state machine of a GPU cluster running distributed
// training jobs. It has no goroutines, reads no clock and does no I/O:
// simulated time advances only through Sim.Next, and the same workload,
// configuration and decisions give the same event log, bit for bit.
//
// A Sim holds nodes (GPUs, speed, CPU, memory, NIC, rack), jobs (arrival,
// queueing, placement, restarts, preemption, completion) and a throughput
// Model that says how fast a job progresses on its allocation:
//
//   - Pollux reproduces the Pollux simulator (OSDI'21) for fixed-batch
//     jobs: statistical progress advances by goodput from measured
//     profiles, epochs land on whole seconds, every placement pays a
//     restart delay, and a job finishes at the end of its validation curve.
//   - Drover runs a job's measured duration at the speed of its actual
//     placement: spread placements pay the measured all-reduce times, slow
//     GPUs slow the compute. The straggler model builds on it (Workers),
//     and so do its runtime mitigations, which act at every refresh:
//     STRET's relay, gradient withholding and one-time batch tuning
//     (MitigationSTRET), a restart/replace-straggler baseline
//     (MitigationReplace) and load-balanced BSP, local batches
//     re-balanced to worker speed (MitigationLBBSP).
//
// What a job's synchronization strategy does to its convergence is the
// convergence model fitted to measured training curves (Convergence over
// package env/converge): under the per-worker model a job trains the
// iterations its strategy needs to reach its target (ASP on 8 workers of
// a CIFAR-10 ResNet: 4.05 times BSP's), ends with the accuracy the
// measurements give it (JobResult.Accuracy), and a strategy that never
// reaches the target (one that diverges) trains the measured schedule and
// ends having missed it (JobResult.Reached, Summary.Missed). The
// simulator may run at either end of the fit's 95% band
// (Workers.Convergence); policies weigh strategies by the fit
// (Believed).
//
// Decisions are made either every Config.Interval seconds (as the Pollux
// simulator does, 60 s) or at every arrival and completion (Interval 0).
// Policies see a View and answer with Decisions (an allocation per job);
// side effects leave the core as data: the caller applies them with Apply.
//
// # Cost and bounds
//
// A run costs time in proportion to its events: arrivals, completions,
// decision points and, under the per-worker model, one refresh per
// Workers.Period while a job runs (idle stretches are skipped, however
// long). New refuses what would make that absurd: submit times and
// durations beyond MaxTime (1e8 s), a positive interval below MinInterval
// (1 s; each tick is a decision point), and more than MaxNodes nodes or
// MaxGPUsPerNode GPUs on a node.
//
// # Usage
//
//	s, err := env.New(env.Config{Cluster: env.Homogeneous(16, 4), Model: model, Interval: 60, RestartDelay: 30}, jobs)
//	for {
//		v, err := s.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := policy.Schedule(v)
//		if err := s.Apply(ds); err != nil { ... }
//	}
//	fmt.Println(s.Summary().AvgJCT)
//
// Sim.Run wraps that loop. Package env/trace builds a Sim from a workload
// file and model profiles; package policies holds the schedulers.
//
// # What env owns of the scheduler's side
//
// env and its subpackages import nothing from policies (nor agents, train,
// serve, checkpoints or cmd; internal/importrules checks it). What the
// simulator and its drivers call, they define here, and the policies
// implement it: Scheduler (policies.Policy is an alias of it) with its
// optional ability ProgressBlind; the candidate protocol (Candidate,
// Proposer, Chooser, FirstCandidate, Delegate, DelegateJobs) through which
// the placement environments and their deployed learned policies choose
// among a heuristic's candidates; and the packing rules PackMostFree and
// PackFirstFit, which define env/placement's actions and which the
// heuristics share. A driver that needs a particular policy takes it from
// its caller (trace.Options.Policy, trace.CalibrateDedicated's first-fit).
//
// # Hand-written numerics
//
// CountStragglers' median selects rather than sorts (quickselect, comm.go):
// no linked dependency selects, and slices.Sort, which gives the same bits,
// took 2-5x as long for jobs of 64 to 256 workers (issue 31). Quantile is
// the project's one type-7 quantile.
package env
