// Package builtin registers every heuristic policy Drover ships, and the
// sync rules strn-sync, oracle-sync and sync-switch, so that its Registry
// also builds composed names "<policy>+<sync>" (policies.Registry.Factory).
//
// It also names the baseline set the methods (Methods: strn, sas) are
// compared with: Baselines, the placement heuristics first-fit, Tiresias
// and Gandiva each under BSP, ASP, local SGD(4) and local SGD(8) for
// every job and under STRN's per-job sync choice, plus Optimus;
// ComparisonSystems, the papers' own comparison systems: Sync-Switch
// ("<placement>+sync-switch") and LB-BSP ("<placement>+bsp~lb-bsp", BSP
// under the per-worker model's lb-bsp mitigation; a row name
// "<policy>~<mitigation>" is split by SplitMitigation) on each of those
// placements, and Themis; and UpperBounds, each of those placements with
// the oracle sync rule. IsBaseline tells a baseline name (the comparison
// systems are baselines too) from a method's or an upper bound's.
//
// # Usage
//
//	reg := builtin.Registry()
//	p, err := reg.New("tiresias+local(8)", policies.Config{Seed: 1})
//	err = sim.Run(p, nil)
package builtin
