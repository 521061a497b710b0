// Package policies defines the scheduling Policy interface, a Registry of
// named policy factories, and the placement helpers the heuristics share.
// Each heuristic lives in its own subpackage and exports const Name and
// New(Config) (Policy, error):
//
//   - fifo: strict arrival order, no backfilling.
//   - firstfit ("first-fit"): arrival order with backfilling, first node
//     with room.
//   - random: random order, random free GPUs (seeded).
//   - tiresias: two-queue discretized LAS, 16 GPU-hour demotion, as in the
//     Pollux simulator.
//   - gandiva: affinity-aware best-fit packing.
//   - optimus: Optimus+Oracle marginal-gain GPU allocation, as in the
//     Pollux simulator.
//   - strn: STRN, straggler reduction at scheduling time: probe-measured
//     sensitivities, expected-overload placement, per-job sync strategy.
//   - sas: SAS, straggler-avoiding scheduling: node availability
//     quantiles, node groups, one group per job; PS load reassignment.
//   - themis: Themis's finish-time fairness (NSDI 2020): the jobs with
//     the largest T_shared / T_independent are offered GPUs first, for
//     leases.
//
// Package policies/builtin registers them all; policies/gate judges whether
// a learned policy may replace one of them.
//
// The interfaces the simulator calls are env's, since env imports no
// policy: Policy is an alias of env.Scheduler, a heuristic that hands its
// per-job choice to a learned policy implements env.Proposer (driven by
// env.Delegate), and the packing rules the heuristics share with
// env/placement's actions are env.PackMostFree and env.PackFirstFit. What
// only policies and their users need stays here: Config, Registry,
// SyncRule, Deviator and the placement helpers below.
//
// # Placement and sync, composed
//
// A policy places jobs; a SyncRule picks the sync strategy of each job on
// the placement the policy chose. A composed name "<policy>+<sync>"
// (Registry.Factory) puts the two together, so that a heuristic can be
// compared under several sync choices and a method's placement told
// apart from its sync choice:
//
//   - a fixed strategy, in env.Sync's spelling: "first-fit+bsp",
//     "tiresias+asp", "gandiva+ssp(3)", "first-fit+local(8)"
//     (WithSync: every placement gets it);
//   - "strn-sync": STRN's per-job choice on the policy's placements
//     (strn.SyncRule), e.g. "gandiva+strn-sync";
//   - "oracle-sync": the best strategy for each job on its actual
//     placement and its nodes' actual loads (package oraclesync), a
//     per-job upper bound;
//   - "sync-switch": Sync-Switch (ICDCS 2021, package syncswitch): BSP for
//     the first share of each job's training, ASP after; a running job
//     is switched by a restart on its nodes (SyncSwitcher).
//
// The sync part overrides what the policy would choose itself:
// "strn+bsp" is STRN's placement under BSP. "X+bsp" runs exactly as X
// does (the zero Sync is BSP). Registry.Names lists the policies,
// Registry.SyncRuleNames the rules, Registry.Syntax both for help texts;
// builtin.Baselines is the baseline set drover eval compares the methods
// with.
//
// # Usage
//
//	p, err := builtin.Registry().New("tiresias", policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, err := p.Schedule(v)
//		err = sim.Apply(ds)
//	}
package policies
