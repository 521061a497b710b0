package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/drover-sched/drover/internal/plot"
)

// WriteTable writes the comparison as a Markdown table (readable as plain
// text too): one row per policy, each cell the mean over seeds ± the
// half-width of its 95% t-interval. A timed comparison (Config.Clock)
// has a last column, DecisionTimeHeader: PolicyResult.DecisionTime, the
// wall time per decision. When some policies are baselines
// (PolicyResult.Baseline), a second table follows: the best baseline by
// average JCT and by average TTA (Result.BestBaseline), and every
// policy's paired relative difference from each (Result.Relative). When
// some policies' teachers are among them (PolicyResult.Teacher), a last
// table gives each such policy's paired relative difference from its
// teacher (Result.VersusTeacher).
func WriteTable(w io.Writer, r *Result) error {
	var b strings.Builder
	timed := r.Timed()
	b.WriteString("| policy | avg JCT (s) | p99 JCT (s) | avg TTA (s) | final accuracy (%) | missed target | straggling worker-iterations | iterations with a straggler | GPU-hours | finished |")
	if timed {
		b.WriteString(" " + DecisionTimeHeader + " |")
	}
	b.WriteString("\n|---|---|---|---|---|---|---|---|---|---|")
	if timed {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, p := range r.Policies {
		frac, acc := p.StragglerFrac, p.Accuracy
		frac.Mean, frac.HalfWidth = 100*frac.Mean, 100*frac.HalfWidth
		acc.Mean, acc.HalfWidth = 100*acc.Mean, 100*acc.HalfWidth
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s%% | %s | %s |", p.Name,
			pm(p.AvgJCT, fmtSec), pm(p.P99JCT, fmtSec), pm(p.AvgTTA, fmtSec), pm(acc, fmt2), pm(p.Missed, fmt1),
			pm(p.Stragglers, fmtG), pm(frac, fmt2), pm(p.GPUHours, fmt1), pm(p.Finished, fmtSec))
		if timed {
			fmt.Fprintf(&b, " %s |", pm(p.DecisionTime, FormatMicros))
		}
		b.WriteString("\n")
	}
	if slices.ContainsFunc(r.Policies, func(p PolicyResult) bool { return !math.IsNaN(p.Accuracy.Mean) }) {
		b.WriteString("\n" + AccuracyNote + "\n")
	}
	for _, p := range r.Policies {
		if p.Deviation == nil {
			continue
		}
		d := *p.Deviation
		d.Mean, d.HalfWidth = 100*d.Mean, 100*d.HalfWidth
		choices := 0
		for _, x := range p.Runs {
			choices += x.Choices
		}
		fmt.Fprintf(&b, "\n%s chose other than its heuristic's own candidate in %s%% of its choices (%d choices among two or more candidates over %d runs)",
			p.Name, pm(d, fmt2), choices, len(p.Runs))
	}
	if r.deviators() {
		b.WriteString("\n")
	}
	writeVersusBest(&b, r)
	writeVersusTeacher(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// AccuracyNote says what WriteTable's TTA, accuracy and missed-target
// columns count.
const AccuracyNote = "avg TTA: over the finished jobs that reached their target; missed target: finished jobs that did not (a strategy that never reaches it: their TTA is infinite and left out of avg TTA); final accuracy: mean over the finished jobs, a diverged job counting 0"

// DecisionTimeHeader is the header of WriteTable's decision-time column.
const DecisionTimeHeader = "decision time (µs)"

// Timed reports whether any policy's runs were timed (Config.Clock set).
func (r *Result) Timed() bool {
	for i := range r.Policies {
		if r.Policies[i].Timed() {
			return true
		}
	}
	return false
}

// FormatMicros formats a time in microseconds with three significant
// digits below 1000 and whole microseconds above ("1.52", "31.2", "312",
// "2105").
func FormatMicros(us float64) string {
	switch a := math.Abs(us); {
	case a < 10:
		return fmt.Sprintf("%.2f", us)
	case a < 100:
		return fmt.Sprintf("%.1f", us)
	}
	return fmt.Sprintf("%.0f", us)
}

// deviators reports whether any policy counted its deviations.
func (r *Result) deviators() bool {
	for _, p := range r.Policies {
		if p.Deviation != nil {
			return true
		}
	}
	return false
}

func fmtSec(x float64) string { return fmt.Sprintf("%.0f", x) }
func fmtG(x float64) string   { return fmt.Sprintf("%.3g", x) }
func fmt1(x float64) string   { return fmt.Sprintf("%.1f", x) }
func fmt2(x float64) string   { return fmt.Sprintf("%.2f", x) }

// pm formats an estimate as "mean ± half-width" ("mean" alone with one
// seed).
func pm(e Estimate, f func(float64) string) string {
	if math.IsNaN(e.Mean) {
		return "-"
	}
	if math.IsNaN(e.HalfWidth) {
		return f(e.Mean)
	}
	return f(e.Mean) + " ± " + f(e.HalfWidth)
}

// Meta describes a comparison for its JSON summary.
type Meta struct {
	// Workload, Model, Cluster and Profiles say what was simulated.
	Workload, Model, Cluster, Profiles string
	// Command is the command line that produced the comparison.
	Command string
	// Convergence names the convergence band the comparison ran under
	// (env.Convergence.Band: "fit", "low", "high"); "" leaves it out.
	Convergence string
	// Ranking, when set, says whether the comparison's ranking holds
	// across the convergence band (CheckRanking over a Sweep).
	Ranking *RankingCheck
}

// SummaryVersion is the version of the JSON summary's layout.
const SummaryVersion = 1

// WriteJSON writes the comparison as an indented JSON summary: the
// metadata, the seeds, and per policy the estimates ({"mean", "ci95", "n"},
// null where undefined) and each run's figures, its Schedule calls and
// decisions among them. Without timing it holds no wall-clock times, so
// the same comparison gives the same bytes; a timed comparison
// (Config.Clock) adds per policy decision_time_us and
// schedule_call_time_us (PolicyResult.DecisionTime and CallTime) and per
// run schedule_time_s, which vary from one execution to the next.
func WriteJSON(w io.Writer, r *Result, m Meta) error {
	type run struct {
		Seed          uint64   `json:"seed"`
		Jobs          int      `json:"jobs"`
		Finished      int      `json:"finished"`
		AvgJCT        *float64 `json:"avg_jct_s"`
		P50JCT        *float64 `json:"p50_jct_s"`
		P99JCT        *float64 `json:"p99_jct_s"`
		AvgTTA        *float64 `json:"avg_tta_s"`
		Missed        int      `json:"missed"`
		TTAPerTarget  *float64 `json:"tta_per_target_s"`
		AvgAccuracy   *float64 `json:"avg_accuracy"`
		AvgQueue      *float64 `json:"avg_queue_s"`
		Makespan      *float64 `json:"makespan_s"`
		GPUHours      *float64 `json:"gpu_hours"`
		GPUUtil       *float64 `json:"gpu_util"`
		Restarts      int      `json:"restarts"`
		Stragglers    *float64 `json:"straggler_worker_iterations"`
		StragglerFrac *float64 `json:"iterations_with_straggler"`
		ScheduleCalls int      `json:"schedule_calls"`
		Decisions     int      `json:"decisions"`
		// BSPOnly and Recomputed: Run's (a Sweep's reuse of BSP-only runs).
		BSPOnly    bool `json:"bsp_only"`
		Recomputed bool `json:"recomputed,omitempty"`
		// ScheduleTime: Run.ScheduleTime in seconds; absent untimed.
		ScheduleTime *float64 `json:"schedule_time_s,omitempty"`
	}
	type policy struct {
		Name          string   `json:"name"`
		AvgJCT        Estimate `json:"avg_jct_s"`
		P99JCT        Estimate `json:"p99_jct_s"`
		AvgTTA        Estimate `json:"avg_tta_s"`
		Stragglers    Estimate `json:"straggler_worker_iterations"`
		StragglerFrac Estimate `json:"iterations_with_straggler"`
		GPUHours      Estimate `json:"gpu_hours"`
		Finished      Estimate `json:"finished"`
		Missed        Estimate `json:"missed"`
		Accuracy      Estimate `json:"avg_accuracy"`
		// Deviation: a learned variant's share of choices not its
		// heuristic's (policies.Deviator); absent for other policies.
		Deviation *Estimate `json:"deviation,omitempty"`
		// Baseline marks a baseline (Policy.Baseline).
		Baseline bool `json:"baseline,omitempty"`
		// VsBest holds, by metric key, the paired relative difference
		// from the best baseline by that metric (Result.Relative);
		// absent without baselines.
		VsBest map[string]Estimate `json:"vs_best_baseline,omitempty"`
		// Teacher names the policy this one was cloned from
		// (Policy.Teacher), and VsTeacher holds, by metric key, the
		// paired relative difference from it (Result.VersusTeacher);
		// absent without a teacher among the policies.
		Teacher   string              `json:"teacher,omitempty"`
		VsTeacher map[string]Estimate `json:"vs_teacher,omitempty"`
		// DecisionTime and CallTime: PolicyResult's, in µs; absent
		// untimed.
		DecisionTime *Estimate `json:"decision_time_us,omitempty"`
		CallTime     *Estimate `json:"schedule_call_time_us,omitempty"`
		Runs         []run     `json:"runs"`
	}
	out := struct {
		Version  int    `json:"version"`
		Command  string `json:"command,omitempty"`
		Workload string `json:"workload"`
		Model    string `json:"model"`
		Cluster  string `json:"cluster"`
		Profiles string `json:"profiles"`
		// Convergence and Ranking: Meta's.
		Convergence string        `json:"convergence,omitempty"`
		Ranking     *RankingCheck `json:"ranking,omitempty"`
		Seeds       []uint64      `json:"seeds"`
		CI          string        `json:"ci"`
		// BestBaseline names, by metric key, the best baseline
		// (Result.BestBaseline); absent without baselines.
		BestBaseline map[string]string `json:"best_baseline,omitempty"`
		Policies     []policy          `json:"policies"`
	}{Version: SummaryVersion, Command: m.Command, Workload: m.Workload, Model: m.Model, Cluster: m.Cluster,
		Profiles: m.Profiles, Convergence: m.Convergence, Ranking: m.Ranking, Seeds: r.Seeds, CI: "95% two-sided Student-t interval over seeds: mean ± ci95"}
	rel := map[string][]Estimate{}
	for _, m := range baselineMetrics {
		if best := r.BestBaseline(m); best >= 0 {
			if out.BestBaseline == nil {
				out.BestBaseline = map[string]string{}
			}
			out.BestBaseline[m.Key] = r.Policies[best].Name
			rel[m.Key] = r.Relative(m, best)
		}
	}
	vsTeacher := r.VersusTeacher()
	for i, p := range r.Policies {
		q := policy{Name: p.Name, AvgJCT: p.AvgJCT, P99JCT: p.P99JCT, AvgTTA: p.AvgTTA, Stragglers: p.Stragglers,
			StragglerFrac: p.StragglerFrac, GPUHours: p.GPUHours, Finished: p.Finished, Missed: p.Missed, Accuracy: p.Accuracy,
			Deviation: p.Deviation, Baseline: p.Baseline}
		if p.Timed() {
			q.DecisionTime, q.CallTime = &p.DecisionTime, &p.CallTime
		}
		for k, e := range rel {
			if q.VsBest == nil {
				q.VsBest = map[string]Estimate{}
			}
			q.VsBest[k] = e[i]
		}
		if r.TeacherOf(i) >= 0 {
			q.Teacher, q.VsTeacher = p.Teacher, map[string]Estimate{}
			for k, e := range vsTeacher {
				q.VsTeacher[k] = e[i]
			}
		}
		for _, x := range p.Runs {
			s := x.Summary
			acc := num(s.AvgAccuracy)
			if math.IsNaN(p.Accuracy.Mean) {
				acc = nil // no convergence model
			}
			q.Runs = append(q.Runs, run{x.Seed, s.Jobs, s.Finished, num(s.AvgJCT), num(s.P50JCT), num(s.P99JCT), num(s.AvgTTA),
				s.Missed, num(s.TTAPerTarget), acc, num(s.AvgQueue), num(s.Makespan), num(s.GPUHours), num(s.GPUUtil), s.Restarts,
				num(s.Stragglers), num(s.StragglerFrac), x.ScheduleCalls, x.Decisions, x.BSPOnly, x.Recomputed, nil})
			if x.Timed {
				q.Runs[len(q.Runs)-1].ScheduleTime = num(x.ScheduleTime.Seconds())
			}
		}
		out.Policies = append(out.Policies, q)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// JCTCDF draws the CDF of the finished jobs' JCTs per policy (every seed's
// jobs pooled) on a log axis, as a PNG.
func JCTCDF(w io.Writer, r *Result, title string) error {
	samples := make([]plot.Sample, len(r.Policies))
	for i, p := range r.Policies {
		samples[i].Name = p.Name
		for _, x := range p.Runs {
			samples[i].Values = append(samples[i].Values, x.JCTs...)
		}
	}
	return plot.CDF(w, plot.Options{Title: title, XLabel: "job completion time (s)", YLabel: "fraction of jobs", LogX: true}, samples)
}

// StragglerRates turns each policy's cumulative straggler series into the
// rate of straggling worker-iterations per hour in bins equal-width bins
// from time 0 to the last run's end, averaged over seeds. The cumulative
// counts are step functions between samples (decision points), so the
// iterations between two decision points count in the bin of the later
// one. The X of each series are the bins' midpoints in hours.
func StragglerRates(r *Result, bins int) []plot.Series {
	end := 0.0
	for _, p := range r.Policies {
		for _, x := range p.Runs {
			if n := len(x.Stragglers.T); n > 0 {
				end = max(end, x.Stragglers.T[n-1])
			}
		}
	}
	if bins <= 0 || end <= 0 {
		return nil
	}
	width := end / float64(bins)
	out := make([]plot.Series, len(r.Policies))
	for i, p := range r.Policies {
		s := plot.Series{Name: p.Name, X: make([]float64, bins), Y: make([]float64, bins)}
		for k := range bins {
			s.X[k] = (float64(k) + 0.5) * width / 3600
		}
		for _, x := range p.Runs {
			prev := 0.0
			for k := range bins {
				c := stepAt(x.Stragglers, float64(k+1)*width)
				if k == bins-1 && len(x.Stragglers.Y) > 0 {
					c = x.Stragglers.Y[len(x.Stragglers.Y)-1]
				}
				s.Y[k] += (c - prev) / (width / 3600) / float64(len(p.Runs))
				prev = c
			}
		}
		out[i] = s
	}
	return out
}

// stepAt returns the series' value at the last sample at or before t (0
// before the first).
func stepAt(s Series, t float64) float64 {
	lo, hi := 0, len(s.T) // first index with T > t
	for lo < hi {
		m := (lo + hi) / 2
		if s.T[m] <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0
	}
	return s.Y[lo-1]
}

// StragglersPlot draws StragglerRates(r, bins) as a PNG line plot.
func StragglersPlot(w io.Writer, r *Result, bins int, title string) error {
	return plot.Lines(w, plot.Options{Title: title, XLabel: "simulated time (h)", YLabel: "straggling worker-iterations per hour"}, StragglerRates(r, bins))
}
