// Package themis implements Themis-style finish-time fair scheduling
// (Mahajan et al., "Themis: Fair and Efficient GPU Cluster Scheduling",
// NSDI 2020), a scheduling baseline that STRN's paper compares against.
//
// Themis measures each job's unfairness by its finish-time fairness
//
//	rho = T_sh / T_id
//
// where T_sh is the job's finish time in the shared cluster (the time since
// it arrived plus the time it still needs on the GPUs it would get) and
// T_id its finish time running alone on a 1/N share of the cluster, N the
// average number of jobs contending over its life. At every lease
// expiry Themis offers the free GPUs to the 1-f fraction of jobs with the
// largest rho (f is the fairness knob: 0 lets every job bid, towards 1 only
// the worst) and hands what they leave to the others, so that no GPU idles.
//
// Drover's rules, where the paper leaves room or relies on parts Drover
// lacks (see Themis for the exact rules):
//
//   - Jobs are gang-scheduled at their requested GPU count (Drover's jobs
//     are), so a job's bid is its whole demand: the auction's partial
//     allocation among the offered jobs becomes a walk in decreasing rho
//     that starts every job whose GPUs are still available. The leftover
//     GPUs go to the remaining jobs in arrival order.
//   - T_id = S x max(1, G N / C): S the job's total run time at its
//     demand G alone, C the cluster's GPUs; a job that asks for no more
//     than C/N runs as fast in its share as alone. T_sh = now - submit +
//     R, R the run time it still needs at its demand. S and R come from
//     the run's model, which must implement env.Oracle (remaining
//     iterations x step time at G GPUs), as Themis's apps report their
//     remaining work to the arbiter.
//   - N is the mean of the active job count over the decision points the
//     job has seen, as an arbiter that polls contention would measure it.
//   - A job keeps its GPUs for a lease (DefaultLease) from its start; only
//     then does it compete again, and it keeps its nodes when it wins.
//     Decisions happen at Drover's decision points (arrivals, finishes and
//     the --interval ticks), so an expired lease waits for the next one.
//
// # Usage
//
//	p, _ := themis.New(policies.Config{Seed: 1})
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package themis
