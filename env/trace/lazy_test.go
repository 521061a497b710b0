package trace_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// TestLazyAdvance replays the builtin workload and the Helios trace with
// and without env.Config.LazyAdvance, under policies that are
// ProgressBlind (first-fit, Tiresias, STRN, SAS) and one that is not
// (Optimus, which asks the model's Oracle about running jobs), with both
// models: the same events for the same jobs, and times and summaries
// equal up to rounding. The Helios replays are long (make test-long; the
// test took 182 s of the race run with them, issue 31).
func TestLazyAdvance(t *testing.T) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	type workload struct {
		w            *datasets.Workload
		nodes, gpn   int
		workerModels bool
	}
	wls := []workload{{datasets.Builtin(), 16, 4, true}}
	if longtest.Enabled() {
		helios, err := datasets.ReadFile(filepath.Join(tracesDir(t), "helios", "helios_venus_2vc_sept.csv"), datasets.FormatAuto, datasets.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wls = append(wls, workload{helios, 22, 8, false})
	}
	reg := builtin.Registry()
	for _, wl := range wls {
		for _, policy := range []string{"first-fit", "tiresias", "strn", "sas", "optimus"} {
			for _, worker := range []bool{false, true} {
				if worker && !wl.workerModels {
					continue // the Helios per-worker replays are slow under -race
				}
				run := func(lazy bool) *trace.Result {
					p, err := reg.New(policy, policies.Config{Seed: 1})
					if err != nil {
						t.Fatal(err)
					}
					var st *trace.Stragglers
					if worker {
						st = &trace.Stragglers{Background: "builtin", Seed: 1}
					}
					res, err := trace.Run(trace.Options{Workload: wl.w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
						Nodes: wl.nodes, GPUsPerNode: wl.gpn, Interval: 0, RestartDelay: -1, Log: true, Stragglers: st, LazyAdvance: lazy})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				eager, lazy := run(false), run(true)
				name := wl.w.Name + "/" + policy
				if worker {
					name += "/worker"
				}
				if len(eager.Events) != len(lazy.Events) {
					t.Fatalf("%s: %d events eager, %d lazy", name, len(eager.Events), len(lazy.Events))
				}
				for i, e := range eager.Events {
					l := lazy.Events[i]
					if e.Kind != l.Kind || e.Job != l.Job || !near(e.Time, l.Time) {
						t.Fatalf("%s: event %d: %+v eager, %+v lazy", name, i, e, l)
					}
				}
				a, b := eager.Summary, lazy.Summary
				for _, p := range [][2]float64{{a.AvgJCT, b.AvgJCT}, {a.P99JCT, b.P99JCT}, {a.GPUHours, b.GPUHours}, {a.AvgTTA, b.AvgTTA}, {a.Stragglers, b.Stragglers}, {a.StragglerFrac, b.StragglerFrac}} {
					if !near(p[0], p[1]) {
						t.Errorf("%s: summary %+v eager, %+v lazy", name, a, b)
						break
					}
				}
			}
		}
	}
}

// near reports whether a and b agree to 1e-9 relative (or both are 0).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestLazyAdvanceDeterministic replays the built-in workload twice with
// lazy advance (drover sim's default) under the per-worker model, with a
// policy that reads progress (Optimus) and one that does not (SAS): the
// two runs give the same event log and summary bit for bit.
func TestLazyAdvanceDeterministic(t *testing.T) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"optimus", "sas"} {
		t.Run(policy, func(t *testing.T) {
			var runs [2]*trace.Result
			for i := range runs {
				p, err := builtin.Registry().New(policy, policies.Config{Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				runs[i], err = trace.Run(trace.Options{Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: profiles, Policy: p,
					Nodes: 16, GPUsPerNode: 4, Interval: 0, RestartDelay: -1, Log: true,
					Stragglers: &trace.Stragglers{Background: "builtin", Seed: 3}, LazyAdvance: true})
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(runs[0].Events) == 0 {
				t.Fatal("no events")
			}
			if diff := cmp.Diff(runs[0].Events, runs[1].Events); diff != "" {
				t.Errorf("events (-first,+second):\n%s", diff)
			}
			if diff := cmp.Diff(runs[0].Summary, runs[1].Summary); diff != "" {
				t.Errorf("summary (-first,+second):\n%s", diff)
			}
		})
	}
}
