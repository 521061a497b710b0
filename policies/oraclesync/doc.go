// Package oraclesync implements the oracle sync rule, "oracle-sync": an
// upper-bound reference for per-job sync choice, to compose with any
// placement heuristic ("first-fit+oracle-sync", policies.SyncRule). It
// shows how much of a method's gain a perfect per-job strategy choice on
// the same placements would give.
//
// # The rule
//
// For every job a placement policy starts, on the nodes it chose, the
// oracle weighs each strategy of Syncs (BSP, ASP, SSP(3), local SGD with
// period 4, 8 and 16) by its expected time to accuracy per unit of work,
//
//	Combine(strategy, per-node probes) x env.Believed(model).Factor(job's model, strategy, workers)
//
// and takes the least (the earlier in Syncs on exact ties). A per-node
// probe is the model's own profiler run (env.Prober: the job's mean
// iteration time over 64 sampled iterations with the calibrated
// per-worker jitter) on the actual placement with every node loaded like
// that node: its env.Telemetry reading (background plus the workers
// already there) plus the workers of the jobs placed earlier in the same
// call; a node with slower GPUs divides its probe by its speed. Combine
// makes the job's iteration time of them: BSP, SSP and local SGD wait for
// the slowest worker in the long run, so they take the slowest node's;
// ASP's workers each update at their own pace, so w updates take
// w / sum over nodes of (workers / probe). The probe is non-decreasing in
// every load, so the strategies that take the slowest node's probe only
// probe the nodes no other node dominates (at least as loaded on every
// resource and no faster). One-GPU jobs keep BSP (one worker has no one
// to wait for or be stale against), and so does every job when the model
// cannot probe (the Pollux and job-level models do not model sync
// strategies at all, so BSP loses nothing there).
//
// This differs from STRN's sync rule (strn.SyncRule) in what it knows and
// how hard it looks: per-node loads instead of one peak load for every
// node, six strategies instead of four, and no margin.
//
// # In what sense it is an upper bound
//
// It is a per-job, myopic oracle, not a global optimum. It is the best a
// sync choice can do for each job, taken alone, on the placement its
// heuristic gave it, in expectation under the model's own probe at the
// loads of the moment of placement. It does not see:
//
//   - the future: the background load drifts while the job runs (the
//     fitted CPU process has a 24-minute time constant), and the job's
//     strategy is fixed until it restarts;
//   - the other jobs: a strategy changes its job's NIC duty cycle, so the
//     contention the jobs sharing its nodes meet, and a job that finishes
//     sooner frees its GPUs for the queue sooner; the oracle weighs
//     neither;
//   - what the probe leaves out: the network burst noise of synchronized
//     exchanges (which weighs on BSP and local SGD more than on ASP and
//     SSP), cross-rack links and parameter-server load;
//   - the realised draws: a run samples the jitter and the background
//     load, so a fixed strategy can beat the oracle on a seed, or even on
//     average where the omissions above favour it.
//
// On a single job, in a steady cluster, with what the probe models it is
// exact: never worse than any fixed strategy it weighs (the package's
// tests work such cases by hand). Over a workload it bounds what a per-job
// chooser with the same information can expect, approximately; a better
// bound needs the model to answer "this job's expected iteration time on
// these nodes now under strategy s", which env.Prober's single load for
// every node cannot.
//
// # Usage
//
//	reg := builtin.Registry() // registers oracle-sync
//	p, _ := reg.New("gandiva+oracle-sync", policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
//
// or, without the registry,
//
//	rule, _ := oraclesync.New(policies.Config{})
//	p := policies.WithSyncRule(gandivaPolicy, rule)
package oraclesync
