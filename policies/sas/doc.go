// Package sas implements SAS, straggler-avoiding job scheduling: predict
// each node's available resources with probabilities over a job's future
// run, group the nodes whose predictions behave alike, and start each job
// inside one group, so that its tasks progress at the same pace and the
// job is not held back by a straggling node. The package also provides the
// method's parameter-server load reassignment as a pure function. The
// source paper publishes no code; every choice below is Drover's and is
// documented where it is made.
//
// # Predictor
//
// Predictor keeps, for each node, a ring buffer of the last History
// telemetry samples (default 64), taken when Schedule is called but at
// most once per SamplePeriod of simulated time (default 300 s: 5.3 hours
// of history, about 13 time constants of the fitted CPU background load in
// env/background, whose per-node level persists).
//
// From a node's twelfth sample on (one hour), SAS's Forecaster, the
// learned model of package forecast (forecast.Default), predicts from that
// history the distribution of each resource's utilisation over the next
// hour: linear quantile regressions, at the levels 0.05 to 0.95, on the
// latest sample, the means of the last 3 and 12 samples and of the
// window, the window's quantile at the level and its P90-P10 spread,
// fitted by minimising the pinball loss on the first 70% of every
// machine's time in the Alibaba v2018 machine usage. On the held-out last
// 30% its mean pinball loss over P10, P50 and P90 is 20% (CPU), 17%
// (memory bandwidth) and 91% (network) below the window's, and its P10-P90
// band covers 84%, 78% and 83% of the future samples against the window's
// 67%, 65% and 4% (drover forecast eval; the forecast package documents
// the model, the fit and machines held out). The forecast gives the P10,
// P50 and P90 (Forecast, Quantile) and OverloadProb, the probability that
// the resource plus a given extra load exceeds the overload threshold
// (0.8, env.Workers' default), read off the predicted distribution
// (forecast.Exceed) rather than counted against a threshold.
//
// Before that, with Forecaster nil, or with a sample period other than the
// model's 300 s, the history itself stands in for the future: quantiles
// (type-7 interpolation) of the window give P10, P50 and P90, and
// OverloadProb is the share of samples over the threshold, smoothed with
// a Beta(1, 1) prior so an unseen node is neither certainly fine nor
// certainly overloaded. This was SAS's only predictor before the learned
// one. In the simulator SAS does about as well with either: over 60
// paired seeds (TestCompareForecaster) its average JCT and TTA on the
// built-in workload and on Helios, under the built-in and the replayed
// background, move by less than 1% (JCT on Helios: 8%) in geometric mean,
// every 95% interval including 0. The arithmetic mean of the per-seed
// ratios, which drover eval reports, is +34 +- 29% for Helios's average
// JCT under the built-in background, carried by a few seeds whose queues
// blow up (ratios from -78% to +509%, median +1%). On the simulator's
// stochastic background, which the model never saw, the learned forecast
// is about as accurate as the window (the process does not reproduce the
// trace's short-term dynamics), and on the replayed trace, where it is
// better, SAS's outcomes do not move measurably either. The forecast
// costs about 1.6 us per node and sample against the window's 0.5: SAS
// on the PAI node list takes 11-12 s of CPU instead of 5.5
// (docs/results/predictor.md).
//
// The samples SAS records are background estimates: each node's reported
// utilisation (env.Telemetry.NodeLoad) minus what SAS's own running jobs
// put there, WorkerLoad per worker (a sixteenth of the CPUs and 8% of the
// memory bandwidth) and FlowLoad (half the NIC) per multi-node job. The
// policy knows its placements, so it predicts the part it does not control
// and adds the part it does at decision time. These footprints are
// assumptions matching env.Workers' defaults, as a profiler would measure
// them.
//
// # Grouping
//
// Every RegroupPeriod (default 900 s) with new samples, nodes are grouped
// by k-means on Features: per resource the P50 and the spread P90-P10, and
// the GPU slowness 1/speed-1, all in units of capacity. k is GroupCount,
// round(sqrt(nodes/2)) capped at MaxGroups (3 for 16 or 22 nodes). The
// initial centres come from deterministic farthest-point traversal from
// the most available node; identical nodes collapse into one group.
//
// # Assignment
//
// Pending jobs are taken in arrival order with backfilling (a job that
// does not fit is skipped, later ones may start). Each is placed in the
// one group with room for it that minimises an expected JCT proxy,
// slowdown x stretch:
//
//   - slowdown is the worst, over the job's nodes, of (1 + sum over
//     resources of weight x risk) / GPU speed. For CPU and memory
//     bandwidth the risk is OverloadProb with the node's workers, the
//     job's included, added; for the NIC (multi-node placements only) it
//     is the contention above 1 of the node's flows, the job's included,
//     on what the P90 background leaves of the NIC.
//   - the weights come from env.Prober when the model offers it: the
//     job's probed slowdown with its node's CPU (or memory bandwidth)
//     mid-way into the overload band, and per unit of NIC contention on a
//     two-node split. Without a Prober each weighs 1/3.
//   - stretch is the probed iteration time of the placement over the
//     packed one on idle nodes (without a Prober, 1 + SpreadPenalty per
//     node beyond the fewest), times 1 + RackPenalty per extra rack.
//
// Within a group the job goes to the single fitting node with the lowest
// slowdown, else onto the most-free nodes first, so it uses the fewest
// nodes, taking them from one rack when a rack of the group has room (the
// smallest such rack), else from the roomiest racks first. Costs are compared in bins of Resolution (0.02); within a bin the
// tighter fit (fewer free GPUs left on the chosen nodes) wins, then the
// more available group, so near-equal risks do not fragment the cluster.
// When no single group has room, the job spreads over the union of the
// most available groups that has. SAS never waits for a better group (it
// is work-conserving) and never preempts. It uses no randomness: ties go
// to lower indices.
//
// Without env.Telemetry (the Pollux model) every node reads idle, the
// groups separate only GPU speeds, and SAS is best-fit packing with
// backfilling. The job-level Drover model reports idle nodes too.
//
// # Parameter-server load reassignment
//
// Reassign moves shards off a straggling parameter server: while the
// slowest server's load/speed exceeds the median by more than a threshold,
// the one shard move that most shortens the bottleneck is made (greedy,
// shard-granular, deterministic). It returns the new shard-to-server map
// and the bottleneck before and after: a runtime holding a PS job's
// shards applies it whenever a server is measured slow.
//
// In the simulator SAS asks for it on every PS job it places
// (env.Decision.PSRebalance). The per-worker Drover model puts a PS job's
// shards on its nodes, slows each server by its node's CPU overload and
// NIC contention, and, with PSRebalance, gives each server a share of the
// parameters proportional to its speed at every refresh: the limit of
// Reassign's moves with infinitely fine shards (env.PSTimeFactor), which
// the discrete moves approach as shards get smaller. SAS with EvenPS set
// (registered as sas-even-ps, NewEvenPS) places alike but leaves the
// shares even: the baseline of the reassignment's claim, measured in
// docs/results/ps.md.
//
// # Cost
//
// Telemetry is read once per SamplePeriod, the quantiles are sorted once
// per sample, the learned forecast of a node runs at most once per sample
// (19 levels x 7 features per resource), and not again while the node's
// full history holds one value (an idle node), and grouping runs at most
// once per RegroupPeriod, recomputing only the points of nodes whose
// forecasts may have changed; each job's probes run once and are cached.
//
// Per decision point nothing scans the cluster or the queue: over a
// simulation's views (env.View.Seq, Changed, Touched) SAS keeps the
// workers and flows on each node, the free GPUs (each group's sum among
// them), the nodes of each group by free GPUs, and a queue of the pending
// jobs, up to date from the changes alone; any other View is recounted. A
// job's single best node in a group is searched by free GPUs, tightest fit
// first, and the search stops as soon as the best found sits in the floor
// bin, the least cost any node of the group could have (1 plus the job's
// weights times the least overload probability, over the fastest speed):
// on a quiet cluster it prices a node or two, not the group. Each priced
// node costs a binary search or a pass over the forecast's levels per
// resource. A job spread over nodes still prices every node of the group
// with free GPUs. The decisions are those of the full scans
// (TestMatchesReference).
//
// A view whose Model has Occupancy gives the running jobs' workers and
// flows per node in aggregate instead of as jobs in v.Active: drover
// serve's live state, which tracks up to 20,000 running jobs, keeps it up
// to date from the jobs that start and stop, so a Place request's cost
// does not grow with them.
//
// # Usage
//
//	p, _ := sas.New(policies.Config{})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package sas
