package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/drover-sched/drover/env"
)

// RankRule states the order Rank puts policies in.
const RankRule = "fewest jobs that missed their target first, then lowest avg TTA (over the jobs that reached it); both means over seeds"

// Rank returns the indices of r's policies from best to worst by
// RankRule: a job that never reaches its target is worse than any time
// to reach it, so a policy with fewer missed targets (mean over seeds of
// env.Summary.Missed) ranks first, and among equals the lower mean of
// avg TTA (env.Summary.AvgTTA, over the jobs that reached their target).
// A policy without a mean avg TTA (no run with a number: none finished or
// none reached its target) ranks last; equals keep their report order.
func (r *Result) Rank() []int {
	type key struct{ missed, tta float64 }
	keys := make([]key, len(r.Policies))
	for i, p := range r.Policies {
		keys[i] = key{meanOf(p.Runs, func(s env.Summary) float64 { return float64(s.Missed) }),
			meanOf(p.Runs, func(s env.Summary) float64 { return s.AvgTTA })}
	}
	last := func(x float64) float64 { // NaN after every number
		if math.IsNaN(x) {
			return math.Inf(1)
		}
		return x
	}
	idx := make([]int, len(r.Policies))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		if na, nb := math.IsNaN(ka.tta), math.IsNaN(kb.tta); na != nb { // no number: last
			if na {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(last(ka.missed), last(kb.missed)); c != 0 {
			return c
		}
		return cmp.Compare(last(ka.tta), last(kb.tta))
	})
	return idx
}

// meanOf is the mean of f over the runs' summaries where it is a finite
// number, NaN with none.
func meanOf(runs []Run, f func(env.Summary) float64) float64 {
	sum, n := 0.0, 0
	for _, r := range runs {
		if x := f(r.Summary); !math.IsNaN(x) && !math.IsInf(x, 0) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Top returns the names of the first k policies of Rank (all of them when
// there are fewer).
func (r *Result) Top(k int) []string {
	var out []string
	for _, i := range r.Rank()[:min(k, len(r.Policies))] {
		out = append(out, r.Policies[i].Name)
	}
	return out
}

// RankingCheck says whether the top of a comparison's ranking (Rank)
// holds across the bands of a Sweep.
type RankingCheck struct {
	// Rule is RankRule.
	Rule string `json:"rule"`
	// Bands names the bands, the first the one the others are held to.
	Bands []string `json:"bands"`
	// Top holds, per band, the names of its top policies in order.
	Top [][]string `json:"top"`
	// Holds says whether every band's top is the first band's, in the
	// same order.
	Holds bool `json:"holds"`
}

// CheckRanking returns whether the top k of the ranking (Rank) of
// results[0] holds, in order, in every other result: results are a
// Sweep's, one per band, named by bands.
func CheckRanking(k int, bands []string, results []*Result) RankingCheck {
	if len(bands) != len(results) {
		panic("compare: CheckRanking: a name per result")
	}
	c := RankingCheck{Rule: RankRule, Bands: slices.Clone(bands), Holds: true}
	for i, r := range results {
		c.Top = append(c.Top, r.Top(k))
		if i > 0 && !slices.Equal(c.Top[i], c.Top[0]) {
			c.Holds = false
		}
	}
	return c
}

// String returns the check as one line: whether the ranking holds, the
// top at each band and the rule.
func (c RankingCheck) String() string {
	var tops []string
	for i, b := range c.Bands {
		tops = append(tops, fmt.Sprintf("%s: %s", b, strings.Join(c.Top[i], " > ")))
	}
	n := 0
	if len(c.Top) > 0 {
		n = len(c.Top[0])
	}
	verdict := "holds"
	if !c.Holds {
		var breaks []string
		for i := 1; i < len(c.Bands); i++ {
			if !slices.Equal(c.Top[i], c.Top[0]) {
				breaks = append(breaks, c.Bands[i])
			}
		}
		verdict = "does not hold (changes at " + strings.Join(breaks, " and ") + ")"
	}
	return fmt.Sprintf("ranking of the top %d across the convergence band %s: %s (rank: %s)", n, verdict, strings.Join(tops, "; "), c.Rule)
}
