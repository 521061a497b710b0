// Package strn implements STRN, proactive straggler reduction at
// scheduling time (DESIGN.md, method 1): the heuristic that measures each
// job's sensitivity to each resource and to straggling, places the job
// where the resources it is sensitive to are least likely to be
// overloaded, and picks its synchronization strategy. The source paper
// publishes no code; every choice below is this package's, made to fit
// the per-worker Drover model (env.Workers) it is evaluated on.
//
// # Profiling by probes
//
// When the run's model implements env.Prober, STRN probes each pending job
// once (cached by job ID until the job is placed) on its packed placement
// p, its GPUs on as few of the largest nodes as possible, under BSP. Each
// probe is a side-effect-free profiler run (the mean of 64 sampled
// iterations). Up to seven probes give the job's Sensitivity:
//
//   - CPU and MemBW: the slowdown with the resource's background at 0.95
//     (others idle), divided by the overload that load produces with the
//     job's own workers on the node, so that the number is a slowdown per
//     unit of overload, (u - 0.8) / (1 - 0.8).
//   - Net: on a multi-node placement (p, or the job split over two nodes
//     when p is one node, since a one-node job does not use its NIC), the
//     slowdown with NIC background at 0.95 divided by the contention
//     beyond 1 it causes, 1/(1-0.95) - 1 = 19. It is about the
//     bandwidth-bound share of the job's iteration.
//   - Spread: the slowdown of splitting the job evenly over one node more
//     than p, from the extra all-reduce hops.
//   - Straggling: the slowdown that the calibrated per-worker jitter causes
//     under BSP on p (0 for a one-GPU job).
//
// A job is probed once however often it waits, so the cost per decision
// point is the scoring below, not the probes.
//
// # Placement
//
// Pending jobs are taken in arrival order with backfilling, as in
// first-fit: every job that fits now starts. Each goes to the candidate of
// least score, an expected relative slowdown:
//
//	score = max over chosen nodes n of risk(n)
//	      + Straggling x (mean + standard deviation of the nodes' pressure)
//	      + Spread x (nodes - fewest nodes that could hold the job)
//	      + Net x (IntraRackGbps / CrossRackGbps - 1)   if the nodes span racks
//	      + Pack x (free GPUs left on the chosen nodes, in whole nodes)
//
//	risk(n) = CPU x E[overload of CPU] + MemBW x E[overload of MemBW]
//	        + Net x (1/(1 - u_Net) - 1)                  on multi-node placements
//	        + (1/speed - 1)                              on GPUs slower than the reference
//
// Utilisation u is the node's env.Telemetry reading (background plus the
// workers already there) plus the job's own workers (WorkerCPU and
// WorkerMemBW each) and the jobs placed earlier in the same call. The
// expected overload is the model's overload function smoothed by a
// softplus of width Uncertainty (0.1 utilisation): the background drifts
// while a job runs (the fitted CPU process has a 24-minute time constant),
// so a node just under the 0.8 threshold is at some risk and one far
// above it costs in proportion to how far. This is P(overload) weighted by
// the overload's size: a bare probability could not tell a node at 0.85
// from one at 1.2. The worst node, not the sum, counts because BSP waits
// for the slowest worker, and the number of nodes is the spread term's
// business. A node's pressure is its busiest compute resource; a
// straggling-sensitive job so prefers nodes that are both lightly and
// evenly loaded. The best-fit term (Pack, 1% per whole node left free)
// only breaks near-ties: without it a job would go to the idlest node and
// scatter small jobs over the cluster, leaving no whole node for large
// ones. Exact ties go to the lower node index.
//
// Candidates are found without enumeration: a job that fits on one node
// is consolidated and every node with room is a candidate; a larger job is
// packed greedily, once over the whole cluster and once within each rack
// that has room, each step taking the node of least risk for the GPUs it
// would hold plus Spread times the share of a node's worth of GPUs it
// leaves to further nodes. The chosen nodes are ordered by rack, then
// index, so that the ring crosses racks as few times as possible.
//
// A one-node candidate's score reads only its node's CPU and memory
// bandwidth load, speed, and free and total GPUs, so STRN keeps the nodes
// in classes of equal such state, updated across decision points from
// env.View.Touched and its own placements (and, with telemetry, from a
// comparison of every node's reading, all that stays O(nodes) per
// decision point). A one-node job then costs O(classes): each class with
// room is scored once, and the MaxPlacements best nodes are taken from
// the best classes, the lower index first among equal scores, exactly as
// scoring every node picks them. When more than an eighth of the nodes
// change class at once (the per-worker model's background moving on a
// step), that decision point scores every node instead. Either way a
// node (or class) is scored only when a lower bound of its score, with
// each risk read from a table on a grid of utilisations, does not already
// show MaxPlacements better candidates. A multi-node job costs O(nodes x
// racks x nodes used).
//
// # Sync strategy
//
// Once placed, a job of two or more GPUs gets the strategy among Syncs
// (BSP, SSP(3), ASP, local SGD(8)) of least expected time-to-accuracy per
// unit of work: Probe(job with the strategy, chosen placement, the chosen
// nodes' peak telemetry, jitter) x the convergence model's iterations to
// target (env.Believed; +Inf for one that never reaches it), the iteration
// time times the iterations the strategy needs. Only strategies that keep
// the job as accurate as BSP as far as the measurements can tell are
// candidates (env.Convergence.Keeps: the expected loss of final accuracy
// within half the 95% interval of the synchronous runs' mean): under the
// fitted model that rules out ASP and SSP(3) for every measured family
// (ResNet32 on CIFAR-10 loses 0.40 points per iteration of staleness,
// ResNet50 on CIFAR-100 0.54) and local SGD(8) except for the BERT
// fine-tuning family, so STRN mitigates stragglers by placement and
// keeps accuracy; the fixed-strategy and oracle-sync baselines trade it,
// and the results tables report it. A later candidate must beat the best
// earlier one by SyncMargin (1%), so noise does not trade BSP's exact
// convergence for nothing. One-GPU jobs get BSP. The probe
// sees one load on every node (the peak, since the worst node gates the
// synchronous strategies) and no other job's NIC flows, so it
// underestimates what ASP gains on unevenly loaded nodes.
//
// # The sync rule alone
//
// ChooseSync is the sync choice as a function, and SyncRule wraps it as a
// policies.SyncRule, so that any placement policy can take STRN's sync
// choice ("gandiva+strn-sync"): each job another policy places is probed
// on that placement, at the peak of its nodes' telemetry plus the load of
// the jobs placed earlier in the same call, booked as STRN books its own.
// On STRN's own placements it chooses exactly what STRN does
// ("strn+strn-sync" runs bit for bit as "strn"). It separates STRN's gain
// from placement from its gain from sync choice.
//
// # Assumptions and fallback
//
// STRN never preempts or migrates and uses no randomness: the same view
// gives the same decisions. It assumes each worker adds WorkerCPU and
// WorkerMemBW to its node, and a multi-node job half a NIC, as
// env.Workers does by default. When the model has no env.Telemetry (the
// Pollux model), every node reads as idle; when it has no env.Prober,
// every job gets the Fallback sensitivity (equally sensitive, not to
// straggling) and BSP. The job-level Drover model implements both but
// reads idle nodes and has no jitter, so STRN then consolidates like
// best-fit and keeps BSP.
//
// # Usage
//
//	p, _ := strn.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package strn
