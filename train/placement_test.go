package train

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestTrainProfiles checks Config.Profiles: empty and "builtin" give the
// embedded fitted profiles, a directory of measured ones gives those
// (measured and fitted disagree on a model's step time), and a missing
// directory is an error naming the option.
func TestTrainProfiles(t *testing.T) {
	_, _, fitted, err := builtinEnvConfig(4, 4, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, named, err := builtinEnvConfig(4, 4, "builtin", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fitted) == 0 || len(fitted) != len(named) {
		t.Fatalf("builtin profiles: %d by default, %d by name", len(fitted), len(named))
	}
	if _, _, _, err := builtinEnvConfig(4, 4, filepath.Join(t.TempDir(), "nope"), nil); err == nil || !strings.Contains(err.Error(), "train.profiles") {
		t.Errorf("missing directory: err = %v, want one naming train.profiles", err)
	}
	_, _, measured, err := builtinEnvConfig(4, 4, sharedtraces.Path(t, "pollux_apps"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, q := measured["cifar10"], fitted["cifar10"]
	if p == nil || q == nil {
		t.Fatalf("cifar10 missing: measured %v, fitted %v", p != nil, q != nil)
	}
	if reflect.TypeOf(p) == reflect.TypeOf(q) {
		t.Errorf("measured and fitted cifar10 profiles are both %T", p)
	}
}

// The episodes of the built-in setup and of a trace workload share one
// env.Reference (not a fresh one per episode, whose Monte Carlo dominated
// sas-rl's bandit training), and an episode on a reference that an
// earlier episode filled runs as it does on a fresh one.
func TestEpisodesShareReference(t *testing.T) {
	ref := func(m env.Model) *env.Reference { return m.(*env.Drover).Workers.Reference }
	pcfg, _, _, err := builtinEnvConfig(16, 4, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ref(pcfg.NewModel(1)), ref(pcfg.NewModel(2)); a == nil || a != b {
		t.Errorf("built-in setup: seeds 1 and 2 have references %p and %p, want one", a, b)
	}
	tw, err := traceWorkload(tinyTrace, 0.5, 0, env.Homogeneous(4, 4), "")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ref(tw.newModel(1)), ref(tw.newModel(2)); a == nil || a != b {
		t.Errorf("trace workload: seeds 1 and 2 have references %p and %p, want one", a, b)
	}
	warm := envMaker(pcfg)(0).(*placement.Env)
	warm.Run(5, placement.FirstValid)
	got := warm.Run(7, placement.FirstValid)
	fcfg, _, _, err := builtinEnvConfig(16, 4, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := envMaker(fcfg)(0).(*placement.Env).Run(7, placement.FirstValid)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seed 7 after seed 5 on a shared reference vs on a fresh one (-fresh, +shared):\n%s", diff)
	}
}
