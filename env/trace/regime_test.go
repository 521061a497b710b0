package trace_test

import (
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/jitter"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies/firstfit"
)

func TestAutoRegime(t *testing.T) {
	homog := env.Homogeneous(2, 8)
	pai := env.Homogeneous(2, 8)
	pai.Nodes[1].GPUType = "T4"
	tests := []struct {
		name   string
		format datasets.Format
		c      *env.Cluster
		want   string
	}{
		{"philly on a homogeneous cluster", datasets.FormatPhilly, &homog, trace.RegimeDedicated},
		{"helios", datasets.FormatHelios, &homog, trace.RegimeDedicated},
		{"the PAI pod list", datasets.FormatAlibaba, &homog, trace.RegimeShared},
		{"a PAI node list", datasets.FormatPhilly, &pai, trace.RegimeShared},
		{"no cluster", datasets.FormatJobs, nil, trace.RegimeDedicated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trace.AutoRegime(tt.format, tt.c); got != tt.want {
				t.Errorf("AutoRegime = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseRegime(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", trace.RegimeAuto, true},
		{"auto", trace.RegimeAuto, true},
		{"dedicated", trace.RegimeDedicated, true},
		{"shared", trace.RegimeShared, true},
		{"Dedicated", "", false},
		{"exclusive", "", false},
	}
	for _, tt := range tests {
		got, err := trace.ParseRegime(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRegime(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	if _, err := (trace.Stragglers{Regime: "exclusive"}).Workers(4); err == nil {
		t.Error("Workers accepted an unknown regime")
	}
}

func TestRegimeWorkers(t *testing.T) {
	// The dedicated regime: the dedicated jitter, its burst noise, and a
	// reference drawn from the fitted background; the shared one: none of
	// that (today's model).
	d, err := trace.Stragglers{Regime: trace.RegimeDedicated}.Workers(4)
	if err != nil {
		t.Fatal(err)
	}
	if d.Reference == nil || len(d.Reference.Loads) == 0 || d.BurstNoise != trace.DedicatedBurstNoise {
		t.Errorf("dedicated: reference %v, burst noise %v; want a reference with loads and %v", d.Reference, d.BurstNoise, trace.DedicatedBurstNoise)
	}
	s, err := trace.Stragglers{Regime: trace.RegimeShared}.Workers(4)
	if err != nil {
		t.Fatal(err)
	}
	if s.Reference != nil || s.BurstNoise != 0 {
		t.Errorf("shared: reference %v, burst noise %v; want none and the default", s.Reference, s.BurstNoise)
	}
	// The stationary CPU load of the fitted process has the trace's mean
	// (0.337 in env/background's comparison with the trace; the reference
	// draws 4096 nodes).
	mean := 0.0
	for _, u := range d.Reference.Loads {
		mean += u.CPU
	}
	mean /= float64(len(d.Reference.Loads))
	if mean < 0.31 || mean > 0.36 {
		t.Errorf("reference CPU load mean %.3f, want the fitted 0.337 +- 0.025", mean)
	}
	if jitter.Dedicated().LevelSpreadHigh != jitter.Dedicated().LevelSpreadLow || jitter.Dedicated().LevelMedian >= jitter.Default().LevelMedian {
		t.Errorf("jitter.Dedicated() %+v: want a symmetric spread and a lower level than Default's", jitter.Dedicated())
	}
}

// TestDedicatedCalibration is the dedicated regime's acceptance: on the
// built-in workload, Philly and Helios, replayed under first-fit with
// BSP, the median over multi-node jobs of training time over
// straggler-free time is within STRET's 1.5 +- 0.2, communication causes
// most of the delay (and computation some), and on Helios the per-worker
// model's average JCT is within 2x the job-level model's. The built-in
// and Helios cases run everywhere (Helios on seed 1 under the race
// detector); Philly's 82k jobs and Helios's 20 seeds only without it.
func TestDedicatedCalibration(t *testing.T) {
	dir := sharedtraces.Dir(t)
	cases := []struct {
		name, path string
		nodes, gpn int
		jobLevel   bool
		seeds      []uint64
		race       bool // run under the race detector too
	}{
		{"builtin", "builtin", 16, 4, false, seedRange(1, 3), true},
		{"helios", dir + "/helios/helios_venus_2vc_sept.csv", 22, 8, false, seedRange(1, 1), true},
		{"philly", dir + "/philly/pollux_philly.csv.gz", 125, 8, false, seedRange(1, 3), false},
		{"helios 20 seeds", dir + "/helios/helios_venus_2vc_sept.csv", 22, 8, true, seedRange(1, 20), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if raceEnabled && !c.race {
				t.Skip("too slow under the race detector")
			}
			if testing.Short() && c.path != "builtin" {
				t.Skip("short")
			}
			w, err := datasets.Load(c.path, datasets.FormatAuto, datasets.Options{SkipBad: true})
			if err != nil {
				t.Fatal(err)
			}
			prof, _, err := trace.Profiles("", c.path)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := trace.CalibrateDedicated([]trace.CalibrationCase{{Name: c.name, Workload: w, Profiles: prof, Nodes: c.nodes, GPUsPerNode: c.gpn, JobLevel: c.jobLevel}},
				c.seeds, trace.Stragglers{Background: "builtin"}, func() env.Scheduler { return new(firstfit.FirstFit) }, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := rs[0]
			t.Logf("%s: inflation %v (median %.3f), communication %v (median %.2f), multi-node jobs %v, JCT ratio %.2f",
				c.name, r.Inflation, r.MedianInflation(), r.CommShare, r.MedianCommShare(), r.MultiNode, r.JCTRatio())
			if ok, why := r.Pass(); !ok {
				t.Errorf("%s: %s", c.name, why)
			}
		})
	}
}

func seedRange(lo, hi uint64) []uint64 {
	var s []uint64
	for x := lo; x <= hi; x++ {
		s = append(s, x)
	}
	return s
}
