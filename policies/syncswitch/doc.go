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
// Convergence: the simulator charges the switched run Sync-Switch
// measured (env.Convergence.Switched over converge.Model.PredictSwitch,
// fitted to the artifact's BSP-then-ASP runs). A job's progress counts
// BSP's work to its target, so a switch at progress s is one at s /
// Budget of the artifact's schedule (ResNet32 on CIFAR-10, the fallback
// family: Budget 8.30, so the default 25% is 3.0% of the schedule;
// ResNet50 on CIFAR-100: 1.97, 12.7%). The BSP phase trains at BSP's
// pace; the ASP phase is charged so that the whole run needs X times
// BSP's iterations, X the measured runs' examples to the target at that
// share over BSP's (interpolated between measured shares, scaled to the
// ASP phase's staleness w-1 against the measured 7), and the job ends at
// the switched runs' final accuracy. On 8 workers, ResNet32: X = 3.71 at
// 2% and 2.75 at 5% of the schedule (ASP from the start 4.05), 1.80 at
// 10%, and 1 from 12%, where BSP reaches the target before the switch;
// the accuracy lost against BSP is 1.6 points at 2%, 0.3 at 5% (ASP 2.8).
// A job switched on a worker count where ASP diverges fails as ASP does
// unless at least half the schedule was under BSP (the one share the
// artifact ran on 16 workers). Earlier, the ASP phase was charged as ASP
// from the start would be (4.05x BSP's iterations on 8 workers).
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
