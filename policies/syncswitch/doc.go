// Package syncswitch implements Sync-Switch's hybrid synchronization as a
// sync rule (Li, Mangoubi, Xu and Guo, "Sync-Switch: Hybrid Parameter
// Synchronization for Distributed Deep Learning", ICDCS 2021; artifact
// github.com/cake-lab/Sync-Switch), the comparison system for STRET's and
// STRN's sync choices: a job trains under BSP for the first share of its
// training and under ASP for the rest. BSP early keeps the converged
// accuracy, ASP later buys throughput; the paper's protocol policy found
// BSP-then-ASP the order that does both.
//
// It composes with any placement policy by name: "tiresias+sync-switch"
// is Tiresias's placement with every job under BSP until its progress
// reaches Rule.Point (default DefaultSwitch) and under ASP after. A job
// placed (or re-placed) past the switch point starts under ASP; a running
// job that passes it is switched at the next decision point by restarting
// it on its own nodes under ASP, paying the restart delay, as the
// artifact's driver (code/main.py) does: each phase is a separate training
// run from the previous one's checkpoint, with a pause to clean the
// cluster up in between. Decision points are Drover's (arrivals,
// finishes, and the --interval ticks), so the switch happens at the first
// one at or after the switch point.
//
// Convergence: under env/sync.go's current model each phase's iterations
// cost what its strategy's Sync.Penalty says (BSP 1, ASP 1 + 0.01 per
// worker beyond the first), so a job of w workers switched at share s
// needs s + (1-s)(1 + 0.01(w-1)) of BSP's iterations, restart delay
// aside. The rule is expressed only through the jobs' Sync over time, so
// it carries over unchanged to env/converge once that is wired in: the
// model then charges the BSP phase and the ASP phase from their own
// measured curves (the ASP phase continuing from the BSP phase's
// progress).
//
// # Usage
//
//	p, _ := builtin.Registry().New("tiresias+sync-switch", policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package syncswitch
