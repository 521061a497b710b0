package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The phases a Sample is taken in.
const (
	// PhaseWarmup is the warm-up under the full load, before the baseline.
	PhaseWarmup = "warmup"
	// PhaseBaseline is the quiet after the warm-up: every client gone,
	// the server settling; its last sample is the baseline.
	PhaseBaseline = "baseline"
	// PhaseRun is the measured run under the full load.
	PhaseRun = "run"
	// PhaseLeave is the wait after every client left; its last sample is
	// the end the baseline is compared with.
	PhaseLeave = "leave"
)

// Sample is one reading of the server's resources (from its /metrics).
type Sample struct {
	// At is the time since the soak started; Phase is when it was taken.
	At    time.Duration
	Phase string
	// Goroutines is go_goroutines; RSS is process_resident_memory_bytes
	// and Heap go_memstats_heap_inuse_bytes, in bytes; FDs is
	// process_open_fds.
	Goroutines, RSS, Heap, FDs float64
	// LiveJobs and LiveNodes are the live store's jobs and nodes
	// (drover_live_jobs{kind="all"}, drover_live_nodes summed over states).
	LiveJobs, LiveNodes float64
	// CPU is the server's CPU time so far in seconds
	// (process_cpu_seconds_total); Load1 the machine's one-minute load
	// average (/proc/loadavg, 0 where unknown): a server that used
	// little CPU while its answers were slow was waiting for its core.
	CPU, Load1 float64
	// PlaceServed counts the Place calls the server has answered through
	// the well-behaved client's listener, and PlaceServedWithin those it
	// answered within Limits.P99 by its own clock
	// (drover_grpc_request_duration_seconds; both 0 when the histogram
	// has no bucket at the bound). Their growth over the run tells a
	// slow server from a slow client or machine.
	PlaceServed, PlaceServedWithin float64
}

// Limits are the acceptance bounds (issue 32).
type Limits struct {
	// Growth is how far above the baseline goroutines and RSS may end,
	// as a share of the baseline (0.10: within 10%). Ending below the
	// baseline is no leak and passes.
	Growth float64
	// P99 bounds the well-behaved client's Place p99 in every window
	// (strictly below).
	P99 time.Duration
}

// Load is what the clients delivered and saw, for the verdict that
// says whether the run loaded the server as asked.
type Load struct {
	// AgentsAsked is the agent sessions the schedule asked for;
	// AgentSessions those that said hello and had every message
	// acknowledged; AgentFailures the others.
	AgentsAsked                  int
	AgentSessions, AgentFailures uint64
	// JobsAsked is the distinct jobs to report; JobsReported those
	// whose every Report was accepted; ReportErrors the failed Reports.
	JobsAsked                  int
	JobsReported, ReportErrors uint64
	// Slow is each listener's slowloris (by listener name).
	Slow map[string]SlowStats
	// Probes is each listener's lockout probes (by listener name).
	Probes map[string]ProbeStats
	// PlaceLagP99 and PlaceLagMax are how late the well-behaved
	// client's schedule woke for its calls (before waiting for a free
	// slot): when they approach the Place latencies, the client's own
	// core, not the server, made the calls late.
	PlaceLagP99, PlaceLagMax time.Duration
	// SampleFailures counts the server's samples that failed (its
	// /metrics did not answer).
	SampleFailures int
	// ServedPlace and ServedWithin are the growth over the phase of
	// Sample.PlaceServed and PlaceServedWithin (every client's Place
	// calls on that listener, the well-behaved one's almost all).
	ServedPlace, ServedWithin float64
}

// SlowStats counts one listener's slow connections.
type SlowStats struct {
	// Opened counts connections opened (or tried); Refused those the
	// server closed within a second of their opening (a connection
	// limit) or that could not connect; Closed those it closed later,
	// while they were slow; MaxOpen the most open at once.
	Opened, Refused, Closed, MaxOpen uint64
	// MedianLife is the median time the server let one of Closed live.
	MedianLife time.Duration
}

// ProbeStats counts one listener's lockout probes: a fresh connection
// and one well-formed call, at each window.
type ProbeStats struct {
	OK, Failed uint64
	// LastError is the last failure's error ("" if none).
	LastError string
}

// Check is one verdict.
type Check struct {
	// Name is the acceptance point: goroutines, rss, place-p99, lockout
	// or load.
	Name string
	Pass bool
	// Detail gives the numbers the verdict rests on.
	Detail string
}

// Judge returns the verdicts of a soak: goroutines and RSS at the end of
// PhaseLeave against the end of PhaseBaseline, the Place p99 of every
// window of the run, the lockout probes, and whether the load was
// delivered.
func Judge(l Limits, samples []Sample, windows []WindowStat, load Load) []Check {
	base, okB := lastOf(samples, PhaseBaseline)
	end, okE := lastOf(samples, PhaseLeave)
	var checks []Check
	for _, r := range []struct {
		name string
		f    func(Sample) float64
		unit func(float64) string
	}{
		{"goroutines", func(s Sample) float64 { return s.Goroutines }, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
		{"rss", func(s Sample) float64 { return s.RSS }, func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }},
	} {
		if !okB || !okE {
			checks = append(checks, Check{r.name, false, "no baseline or no end sample"})
			continue
		}
		b, e, limit := r.f(base), r.f(end), r.f(base)*(1+l.Growth)
		peak := b
		for _, s := range samples {
			if s.Phase == PhaseRun {
				peak = max(peak, r.f(s))
			}
		}
		checks = append(checks, Check{r.name, e <= limit, fmt.Sprintf("start %s, peak %s, end %s (%+.1f%%; limit %s, +%.0f%%) after %.0f s without clients; live jobs %.0f -> %.0f, nodes %.0f -> %.0f",
			r.unit(b), r.unit(peak), r.unit(e), 100*(e/b-1), r.unit(limit), 100*l.Growth, (end.At - firstOf(samples, PhaseLeave).At).Seconds(),
			base.LiveJobs, end.LiveJobs, base.LiveNodes, end.LiveNodes)})
	}
	checks = append(checks, judgeP99(l, windows, load), judgeProbes(load), judgeLoad(load))
	return checks
}

// judgeP99 passes when every window's calls all succeeded and their p99
// is below l.P99. Its detail says when the client's own wake-up lag
// reached half the bound: then the client's core, not only the server,
// made calls late, and a failure is not the server's alone.
func judgeP99(l Limits, windows []WindowStat, load Load) Check {
	if len(windows) == 0 {
		return Check{"place-p99", false, "no Place calls"}
	}
	pass, worst, errs, empty := true, windows[0], uint64(0), 0
	for _, w := range windows {
		errs += w.Errors
		if w.P99 > worst.P99 {
			worst = w
		}
		if w.OK == 0 {
			empty++
		}
		pass = pass && w.Errors == 0 && w.OK > 0 && w.P99 < l.P99
	}
	over := 0
	for _, w := range windows {
		if w.P99 >= l.P99 {
			over++
		}
	}
	detail := fmt.Sprintf("worst window p99 %s (window at %.0f s), %d of %d windows at or over %s, %d without an answer, %d failed calls",
		ms(worst.P99), worst.Start.Seconds(), over, len(windows), ms(l.P99), empty, errs)
	if load.ServedPlace > 0 {
		detail += fmt.Sprintf("; inside the server %.2f%% of the run's %.0f Place calls on that listener took under %s",
			100*load.ServedWithin/load.ServedPlace, load.ServedPlace, ms(l.P99))
	}
	if load.PlaceLagP99 >= l.P99/2 {
		detail += fmt.Sprintf("; the client's own wake-up lag p99 was %s: its core limited the measurement", ms(load.PlaceLagP99))
	}
	return Check{"place-p99", pass, detail}
}

// judgeProbes passes when every probe of every listener succeeded.
func judgeProbes(load Load) Check {
	pass := len(load.Probes) > 0
	var parts []string
	for _, name := range sortedKeys(load.Probes) {
		p := load.Probes[name]
		pass = pass && p.Failed == 0 && p.OK > 0
		s := fmt.Sprintf("%s %d/%d", name, p.OK, p.OK+p.Failed)
		if p.LastError != "" {
			s += fmt.Sprintf(" (last error: %s)", p.LastError)
		}
		parts = append(parts, s)
	}
	return Check{"lockout", pass, "probes answered: " + strings.Join(parts, ", ")}
}

// judgeLoad passes when at least 90% of the asked agent sessions ran,
// every job's Reports were accepted and every listener's slowloris
// opened connections: otherwise the other verdicts judged a lighter
// load than asked.
func judgeLoad(load Load) Check {
	pass := float64(load.AgentSessions) >= 0.9*float64(load.AgentsAsked) && load.JobsReported == uint64(load.JobsAsked)
	var slow []string
	for _, name := range sortedKeys(load.Slow) {
		s := load.Slow[name]
		pass = pass && s.Opened > 0
		life := ""
		if s.Closed > 0 {
			life = fmt.Sprintf(" after a median %.1f s", s.MedianLife.Seconds())
		}
		slow = append(slow, fmt.Sprintf("%s %d opened, %d refused at once, %d closed by the server%s, at most %d open at once",
			name, s.Opened, s.Refused, s.Closed, life, s.MaxOpen))
	}
	return Check{"load", pass, fmt.Sprintf("agent sessions %d of %d asked (%d failed); jobs reported %d of %d (%d Reports failed); Place client's wake-up lag p99 %s, max %s; %d failed samples of /metrics; slowloris: %s",
		load.AgentSessions, load.AgentsAsked, load.AgentFailures, load.JobsReported, load.JobsAsked, load.ReportErrors,
		ms(load.PlaceLagP99), ms(load.PlaceLagMax), load.SampleFailures, strings.Join(slow, "; "))}
}

// lastOf returns the last sample of phase.
func lastOf(samples []Sample, phase string) (Sample, bool) {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].Phase == phase {
			return samples[i], true
		}
	}
	return Sample{}, false
}

// firstOf returns the first sample of phase (the zero Sample if none).
func firstOf(samples []Sample, phase string) Sample {
	for _, s := range samples {
		if s.Phase == phase {
			return s
		}
	}
	return Sample{}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ms formats d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// Stable reports whether the last n samples are all of phase, with the
// same goroutine count and RSS within spread (a share of the smallest)
// of each other: the server has settled.
func Stable(samples []Sample, phase string, n int, spread float64) bool {
	if len(samples) < n || n <= 0 {
		return false
	}
	last := samples[len(samples)-n:]
	lo, hi := last[0].RSS, last[0].RSS
	for _, s := range last {
		if s.Phase != phase || s.Goroutines != last[0].Goroutines {
			return false
		}
		lo, hi = min(lo, s.RSS), max(hi, s.RSS)
	}
	return hi <= lo*(1+spread)
}

// BackWithin reports whether the last n samples are all of PhaseLeave
// and within growth of the baseline (the last PhaseBaseline sample),
// goroutines and RSS both.
func BackWithin(samples []Sample, n int, growth float64) bool {
	base, ok := lastOf(samples, PhaseBaseline)
	if !ok || len(samples) < n || n <= 0 {
		return false
	}
	k := 1 + growth
	for _, s := range samples[len(samples)-n:] {
		if s.Phase != PhaseLeave || s.Goroutines > k*base.Goroutines || s.RSS > k*base.RSS {
			return false
		}
	}
	return true
}
