package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/drover-sched/drover/env"
)

// Metric is a per-run figure, lower is better, that the reports rank
// policies by.
type Metric struct {
	// Name labels the metric in reports.
	Name string
	// Key names the metric in the JSON summary.
	Key string
	// Of reads the metric from a run's summary.
	Of func(env.Summary) float64
}

// The metrics the best baseline is chosen by.
var (
	// AvgJCT is the run's average job completion time.
	AvgJCT = Metric{Name: "avg JCT", Key: "avg_jct_s", Of: func(s env.Summary) float64 { return s.AvgJCT }}
	// AvgTTA is the run's average time to accuracy (training time).
	AvgTTA = Metric{Name: "avg TTA", Key: "avg_tta_s", Of: func(s env.Summary) float64 { return s.AvgTTA }}
)

// BestBaseline returns the index in r.Policies of the baseline
// (PolicyResult.Baseline) with the lowest mean of m over its seeds (the
// first among equals), or -1 when no baseline has a number. The choice is
// made on the same runs it is then compared on, which favours the best
// baseline slightly (the winner's curse): a method that beats it does so
// with a margin to spare.
func (r *Result) BestBaseline(m Metric) int {
	best, bestMean := -1, math.Inf(1)
	for i, p := range r.Policies {
		if !p.Baseline {
			continue
		}
		xs := make([]float64, len(p.Runs))
		for k, run := range p.Runs {
			xs[k] = m.Of(run.Summary)
		}
		if mean := MeanCI(xs, 0.95).Mean; mean < bestMean {
			best, bestMean = i, mean
		}
	}
	return best
}

// Relative returns, per policy of r, its paired relative difference from
// policy ref in m: over the seeds where both have a number (and ref's is
// positive), the mean of x/ref - 1 with its 95% Student-t interval. The
// runs of one seed share the workload, background load and jitter, so
// pairing them removes most of the seed-to-seed variation; -0.1 is 10%
// lower (better) than ref. It panics when ref is out of range or the
// policies' seeds differ.
func (r *Result) Relative(m Metric, ref int) []Estimate {
	base := r.Policies[ref].Runs
	out := make([]Estimate, len(r.Policies))
	for i, p := range r.Policies {
		if len(p.Runs) != len(base) {
			panic("compare: policies with different seeds")
		}
		var d []float64
		for k, run := range p.Runs {
			if run.Seed != base[k].Seed {
				panic("compare: policies with different seeds")
			}
			x, b := m.Of(run.Summary), m.Of(base[k].Summary)
			if math.IsNaN(x) || math.IsInf(x, 0) || !(b > 0) || math.IsInf(b, 0) {
				continue
			}
			d = append(d, x/b-1)
		}
		out[i] = MeanCI(d, 0.95)
	}
	return out
}

// baselineMetrics are the metrics WriteTable and WriteJSON compare with
// the best baseline.
var baselineMetrics = []Metric{AvgJCT, AvgTTA}

// writeVersusBest writes the comparison with the best baseline by each
// of baselineMetrics: which baseline is best, then a table of every
// policy's paired relative difference from it. It writes nothing without
// baselines.
func writeVersusBest(b *strings.Builder, r *Result) {
	best := make([]int, len(baselineMetrics))
	n := 0
	for _, p := range r.Policies {
		if p.Baseline {
			n++
		}
	}
	var names []string
	for k, m := range baselineMetrics {
		best[k] = r.BestBaseline(m)
		if best[k] < 0 {
			return
		}
		names = append(names, fmt.Sprintf("by %s %s", m.Name, r.Policies[best[k]].Name))
	}
	fmt.Fprintf(b, "\nbest baseline (lowest mean of the %d baselines): %s\n\n", n, strings.Join(names, "; "))
	b.WriteString("| policy |")
	for k, m := range baselineMetrics {
		fmt.Fprintf(b, " %s vs %s |", m.Name, r.Policies[best[k]].Name)
	}
	b.WriteString("\n|---|")
	for range baselineMetrics {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	rel := make([][]Estimate, len(baselineMetrics))
	for k, m := range baselineMetrics {
		rel[k] = r.Relative(m, best[k])
	}
	for i, p := range r.Policies {
		name := p.Name
		if !p.Baseline {
			name = "**" + name + "**"
		}
		fmt.Fprintf(b, "| %s |", name)
		for k := range baselineMetrics {
			fmt.Fprintf(b, " %s |", pct(rel[k][i]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\npaired over seeds: mean of (policy / best baseline - 1) ± the half-width of its 95% t-interval; negative is better; bold: not a baseline\n")
}

// pct formats a relative difference as a signed percentage "± half-width".
func pct(e Estimate) string {
	if math.IsNaN(e.Mean) {
		return "-"
	}
	s := fmt.Sprintf("%+.1f%%", 100*e.Mean)
	if !math.IsNaN(e.HalfWidth) {
		s = fmt.Sprintf("%+.1f ± %.1f%%", 100*e.Mean, 100*e.HalfWidth)
	}
	return s
}

// TeacherOf returns the index in r.Policies of policy i's teacher
// (PolicyResult.Teacher), or -1 when it has none or the teacher is not
// among the policies.
func (r *Result) TeacherOf(i int) int {
	t := r.Policies[i].Teacher
	if t == "" {
		return -1
	}
	for k, p := range r.Policies {
		if p.Name == t && k != i {
			return k
		}
	}
	return -1
}

// VersusTeacher returns, by metric key of baselineMetrics (avg JCT, avg
// TTA), each policy's paired relative difference from its teacher
// (Result.Relative against TeacherOf); policies without a teacher among
// the contenders have no entry. It is nil when no policy has one.
func (r *Result) VersusTeacher() map[string]map[int]Estimate {
	var out map[string]map[int]Estimate
	for i := range r.Policies {
		t := r.TeacherOf(i)
		if t < 0 {
			continue
		}
		if out == nil {
			out = map[string]map[int]Estimate{}
		}
		for _, m := range baselineMetrics {
			if out[m.Key] == nil {
				out[m.Key] = map[int]Estimate{}
			}
			out[m.Key][i] = r.Relative(m, t)[i]
		}
	}
	return out
}

// writeVersusTeacher writes, for every policy whose teacher is among the
// contenders, its paired relative difference from the teacher by each of
// baselineMetrics: the share of a learned policy's gain over a heuristic
// that is not its teacher's. It writes nothing when no policy has one.
func writeVersusTeacher(b *strings.Builder, r *Result) {
	vs := r.VersusTeacher()
	if vs == nil {
		return
	}
	b.WriteString("\nlearned policies against their teachers (the policy each was cloned from):\n\n| policy | teacher |")
	for _, m := range baselineMetrics {
		fmt.Fprintf(b, " %s vs teacher |", m.Name)
	}
	b.WriteString("\n|---|---|")
	for range baselineMetrics {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i, p := range r.Policies {
		if r.TeacherOf(i) < 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %s |", p.Name, p.Teacher)
		for _, m := range baselineMetrics {
			fmt.Fprintf(b, " %s |", pct(vs[m.Key][i]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\npaired over seeds: mean of (policy / teacher - 1) ± the half-width of its 95% t-interval; negative is better\n")
}
