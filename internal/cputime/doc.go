// Package cputime reads the process's CPU time, for benchmarks that report
// work per CPU-second: on a shared machine wall-clock rates move with the
// neighbours' load, CPU time much less.
//
//	cpu0 := cputime.Seconds()
//	for b.Loop() {
//		step()
//	}
//	b.ReportMetric(float64(b.N)/(cputime.Seconds()-cpu0), "steps/cpu-s")
package cputime
