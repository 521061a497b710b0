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
//
// Package policies/builtin registers them all.
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
