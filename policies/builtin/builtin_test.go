package builtin_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// run replays the built-in workload (16 nodes x 4 GPUs, per-worker model,
// seed 1) under the named policy.
func run(t *testing.T, name string) *trace.Result {
	t.Helper()
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := builtin.Registry().New(name, policies.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := trace.Run(trace.Options{
		Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: profiles, Policy: p,
		Nodes: 16, GPUsPerNode: 4, Interval: -1, RestartDelay: -1, Log: true,
		Stragglers: &trace.Stragglers{Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSameRun checks that a composition that changes nothing gives the
// same bits as the plain policy: "X+bsp" is X under --sync bsp (every
// placement is BSP either way), and STRN's sync rule on STRN's own
// placements chooses what STRN does, booking the same loads.
func TestSameRun(t *testing.T) {
	tests := []struct{ plain, composed string }{
		{"first-fit", "first-fit+bsp"},
		{"tiresias", "tiresias+bsp"},
		{"gandiva", "gandiva+bsp"},
		{"optimus", "optimus+bsp"},
		{"strn", "strn+strn-sync"},
	}
	for _, tt := range tests {
		t.Run(tt.composed, func(t *testing.T) {
			a, b := run(t, tt.plain), run(t, tt.composed)
			if la, lb := env.LogString(a.Events, a.Sim.Jobs()), env.LogString(b.Events, b.Sim.Jobs()); la != lb {
				t.Errorf("event logs differ")
			}
			if !reflect.DeepEqual(a.Summary, b.Summary) {
				t.Errorf("summaries differ (-%s,+%s):\n- %+v\n+ %+v", tt.plain, tt.composed, a.Summary, b.Summary)
			}
		})
	}
	// And STRN's choices are not all BSP on this workload, so the rule is
	// exercised.
	non := 0
	for _, j := range run(t, "strn").Sim.Jobs() {
		if j.Sync != (env.Sync{}) {
			non++
		}
	}
	if non == 0 {
		t.Error("STRN kept BSP for every job: the strn+strn-sync check proves nothing")
	}
}

func TestBaselines(t *testing.T) {
	want := []string{
		"first-fit+bsp", "first-fit+asp", "first-fit+local(4)", "first-fit+local(8)", "first-fit+strn-sync",
		"tiresias+bsp", "tiresias+asp", "tiresias+local(4)", "tiresias+local(8)", "tiresias+strn-sync",
		"gandiva+bsp", "gandiva+asp", "gandiva+local(4)", "gandiva+local(8)", "gandiva+strn-sync",
		"optimus",
	}
	if got := builtin.Baselines(); !slices.Equal(got, want) {
		t.Errorf("Baselines() = %v, want %v", got, want)
	}
	if got, want := builtin.UpperBounds(), []string{"first-fit+oracle-sync", "tiresias+oracle-sync", "gandiva+oracle-sync"}; !slices.Equal(got, want) {
		t.Errorf("UpperBounds() = %v, want %v", got, want)
	}
	wantCS := []string{"first-fit+sync-switch", "tiresias+sync-switch", "gandiva+sync-switch",
		"first-fit+bsp~lb-bsp", "tiresias+bsp~lb-bsp", "gandiva+bsp~lb-bsp", "themis"}
	if got := builtin.ComparisonSystems(); !slices.Equal(got, wantCS) {
		t.Errorf("ComparisonSystems() = %v, want %v", got, wantCS)
	}
	reg := builtin.Registry()
	for _, n := range slices.Concat(builtin.Methods, builtin.Baselines(), builtin.ComparisonSystems(), builtin.UpperBounds()) {
		p, m := builtin.SplitMitigation(n)
		if _, err := reg.Factory(p); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if m != "" && !slices.Contains(builtin.Mitigations, m) {
			t.Errorf("%s: mitigation %q not in %v", n, m, builtin.Mitigations)
		}
	}
	tests := []struct {
		name string
		want bool
	}{
		{"first-fit", true},
		{"first-fit+asp", true},
		{"tiresias+local(8)", true},
		{"gandiva+strn-sync", true},
		{"optimus", true},
		{"fifo+ssp(3)", true},
		{"first-fit+oracle-sync", false}, // an upper bound
		{"strn", false},                  // a method
		{"sas", false},
		{"strn+bsp", false}, // a method's placement
		{"sas+oracle-sync", false},
		{"nope", false},
		{"first-fit+nope", false},
		{"sas-rl@ckpt", false},
		{"themis", true}, // the comparison systems
		{"tiresias+sync-switch", true},
		{"gandiva+bsp~lb-bsp", true},
		{"first-fit~stret", true},
		{"first-fit~none", true},
		{"first-fit~", false}, // no mitigation after the separator
		{"first-fit~lbbsp", false},
		{"first-fit+bsp~lb-bsp~lb-bsp", false},
		{"strn~lb-bsp", false},
		{"first-fit+oracle-sync~lb-bsp", false},
	}
	for _, tt := range tests {
		if got := builtin.IsBaseline(tt.name); got != tt.want {
			t.Errorf("IsBaseline(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
