package kv

import (
	"math"
	"strconv"
	"testing"
)

func TestClaims(t *testing.T) {
	for _, c := range Claims() {
		if c.Paper == "" || c.What == "" || c.Value == "" || c.Source == "" {
			t.Errorf("incomplete claim %+v", c)
		}
	}
}

// TestMeasuredReductions recomputes the README's stated JCT reductions
// (lines 234 and 263: 12% and 30%; 7%, 25% and 60%) from its table rows.
func TestMeasuredReductions(t *testing.T) {
	want := map[string]float64{"long@0.15": 12, "long@0.3": 30, "short@0.25": 7, "short@0.5": 25, "short@0.75": 60}
	base := map[string]float64{}
	runs := HKVQMeasured()
	key := func(m MeasuredRun) string {
		return m.Experiment + "@" + strconv.FormatFloat(m.Rate, 'g', -1, 64)
	}
	for _, m := range runs {
		if m.Method == "baseline" {
			base[key(m)] = m.JCT
		}
	}
	for _, m := range runs {
		if m.Method != "hack" {
			continue
		}
		k := key(m)
		got := 100 * (1 - m.JCT/base[k])
		if math.Abs(got-want[k]) > 0.5 {
			t.Errorf("%s: JCT reduction %.1f%%, README says %.0f%%", k, got, want[k])
		}
	}
}
