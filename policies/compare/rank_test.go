package compare

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ranked is a hand-made result: per policy, its runs' (missed, avg TTA)
// over two seeds.
func ranked(pols map[string][2][2]float64, order []string) *Result {
	r := &Result{Seeds: []uint64{1, 2}}
	for _, n := range order {
		var runs []Run
		for s, x := range pols[n] {
			runs = append(runs, Run{Seed: uint64(s + 1), Summary: env.Summary{Missed: int(x[0]), AvgTTA: x[1]}})
		}
		r.Policies = append(r.Policies, summarize(n, runs))
	}
	return r
}

// TestRank: the rule puts fewer missed targets first whatever the TTA,
// then the lower mean avg TTA; a policy with no number is last; equals
// keep report order.
func TestRank(t *testing.T) {
	order := []string{"a", "b", "c", "d", "e", "f"}
	r := ranked(map[string][2][2]float64{
		"a": {{0, 300}, {0, 100}},               // mean TTA 200
		"b": {{1, 50}, {0, 50}},                 // fastest, but missed 0.5 on average
		"c": {{0, 150}, {0, 150}},               // 150: first
		"d": {{0, 100}, {0, 300}},               // 200, as a: after it
		"e": {{0, math.NaN()}, {0, math.NaN()}}, // no number
		"f": {{0, 190}, {0, 190}},               // 190
	}, order)
	var got []string
	for _, i := range r.Rank() {
		got = append(got, r.Policies[i].Name)
	}
	if want := []string{"c", "f", "a", "d", "b", "e"}; !slices.Equal(got, want) {
		t.Errorf("Rank = %v, want %v", got, want)
	}
	if got, want := r.Top(3), []string{"c", "f", "a"}; !slices.Equal(got, want) {
		t.Errorf("Top(3) = %v, want %v", got, want)
	}
}

// TestCheckRanking: the top three at the fit hold at both ends, or change
// at one (a policy that misses targets only at the high end drops out of
// the top three there, however fast).
func TestCheckRanking(t *testing.T) {
	order := []string{"x", "y", "z", "w"}
	fit := ranked(map[string][2][2]float64{
		"x": {{0, 100}, {0, 100}}, "y": {{0, 200}, {0, 200}}, "z": {{0, 300}, {0, 300}}, "w": {{0, 400}, {0, 400}},
	}, order)
	low := ranked(map[string][2][2]float64{ // every TTA lower, the order kept
		"x": {{0, 90}, {0, 90}}, "y": {{0, 180}, {0, 190}}, "z": {{0, 250}, {0, 260}}, "w": {{0, 300}, {0, 500}},
	}, order)
	high := ranked(map[string][2][2]float64{ // x misses a target on one seed
		"x": {{1, 80}, {0, 100}}, "y": {{0, 200}, {0, 200}}, "z": {{0, 300}, {0, 300}}, "w": {{0, 400}, {0, 400}},
	}, order)

	holds := CheckRanking(3, []string{"fit", "low", "high"}, []*Result{fit, low, fit})
	if want := (RankingCheck{Rule: RankRule, Bands: []string{"fit", "low", "high"}, Holds: true,
		Top: [][]string{{"x", "y", "z"}, {"x", "y", "z"}, {"x", "y", "z"}}}); !cmp.Equal(holds, want) {
		t.Errorf("holding check (-want,+got):\n%s", cmp.Diff(want, holds))
	}
	if s := holds.String(); !strings.HasPrefix(s, "ranking of the top 3 across the convergence band holds: fit: x > y > z; low: x > y > z; high: x > y > z (rank: fewest") {
		t.Errorf("line %q", s)
	}

	breaks := CheckRanking(3, []string{"fit", "low", "high"}, []*Result{fit, low, high})
	if want := (RankingCheck{Rule: RankRule, Bands: []string{"fit", "low", "high"}, Holds: false,
		Top: [][]string{{"x", "y", "z"}, {"x", "y", "z"}, {"y", "z", "w"}}}); !cmp.Equal(breaks, want) {
		t.Errorf("breaking check (-want,+got):\n%s", cmp.Diff(want, breaks))
	}
	if s := breaks.String(); !strings.Contains(s, "does not hold (changes at high): fit: x > y > z; low: x > y > z; high: y > z > w") {
		t.Errorf("line %q", s)
	}
}

// TestSweepReusesBSPOnlyRuns: a BSP-only policy's runs at the band's ends
// are the fit's with the accuracy recomputed, and equal what simulating
// them at each end gives (every figure; the mean accuracy to rounding:
// the simulator weighs each job's accuracy by its work); a policy that
// trains under ASP is simulated at each end, and there differs from the
// fit.
func TestSweepReusesBSPOnlyRuns(t *testing.T) {
	cfg := tiny(t, 2)
	ps, err := Heuristics(builtin.Registry(), []string{"first-fit+bsp", "first-fit+asp"}, env.Sync{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policies = ps
	bands := []Band{{Name: "fit"}, {Name: "low", Convergence: &env.Convergence{Band: converge.BandLow}},
		{Name: "high", Convergence: &env.Convergence{Band: converge.BandHigh}}}
	res, err := Sweep(cfg, bands)
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range bands[1:] {
		end := res[k+1]
		c := cfg
		c.Options = bandOptions(cfg.Options, b)
		direct, err := Compare(c)
		if err != nil {
			t.Fatal(err)
		}
		bsp, asp := end.Policies[0], end.Policies[1]
		for s := range cfg.Seeds {
			fitRun, got, want := res[0].Policies[0].Runs[s], bsp.Runs[s], direct.Policies[0].Runs[s]
			if !fitRun.BSPOnly || !got.Recomputed || want.Recomputed {
				t.Fatalf("%s seed %d: BSPOnly %v, recomputed %v (simulated %v)", b.Name, s, fitRun.BSPOnly, got.Recomputed, want.Recomputed)
			}
			if diff := cmp.Diff(want.Summary, got.Summary, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("%s seed %d: recomputed summary differs from the simulated one (-simulated,+recomputed):\n%s", b.Name, s, diff)
			}
			if got.Summary.AvgAccuracy == fitRun.Summary.AvgAccuracy {
				t.Errorf("%s seed %d: accuracy %v as at the fit: the band changed nothing", b.Name, s, got.Summary.AvgAccuracy)
			}
			if r := asp.Runs[s]; r.BSPOnly || r.Recomputed || cmp.Equal(r.Summary, res[0].Policies[1].Runs[s].Summary) {
				t.Errorf("%s seed %d: the ASP run was reused or is the fit's", b.Name, s)
			}
			if !cmp.Equal(asp.Runs[s].Summary, direct.Policies[1].Runs[s].Summary) {
				t.Errorf("%s seed %d: the ASP run differs from a direct one at the band", b.Name, s)
			}
		}
	}
	// recompute refuses a run that trained a job under another strategy,
	// and one whose jobs are not known.
	jobs := make([]finishedJob, res[0].Policies[1].Runs[0].Summary.Finished)
	for i := range jobs {
		jobs[i] = finishedJob{"cifar10", 4}
	}
	if _, ok := recompute(res[0].Policies[1].Runs[0], jobs, nil, bands[1].Convergence); ok {
		t.Error("recompute took an ASP run")
	}
	if _, ok := recompute(res[0].Policies[0].Runs[0], nil, nil, bands[2].Convergence); ok {
		t.Error("recompute took a run without its jobs")
	}
	// Without the per-worker model a band is refused.
	c := cfg
	c.Options = func(seed uint64) (trace.Options, error) {
		o, err := cfg.Options(seed)
		o.Stragglers = nil
		return o, err
	}
	if _, err := Sweep(c, bands); err == nil || !strings.Contains(err.Error(), "per-worker model") {
		t.Errorf("job-level sweep: %v", err)
	}
}
