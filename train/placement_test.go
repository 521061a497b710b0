package train

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestTrainProfiles checks Config.Profiles: empty and "builtin" give the
// embedded fitted profiles, a directory of measured ones gives those
// (measured and fitted disagree on a model's step time), and a missing
// directory is an error naming the option.
func TestTrainProfiles(t *testing.T) {
	_, _, fitted, err := builtinEnvConfig(4, 4, "")
	if err != nil {
		t.Fatal(err)
	}
	_, _, named, err := builtinEnvConfig(4, 4, "builtin")
	if err != nil {
		t.Fatal(err)
	}
	if len(fitted) == 0 || len(fitted) != len(named) {
		t.Fatalf("builtin profiles: %d by default, %d by name", len(fitted), len(named))
	}
	if _, _, _, err := builtinEnvConfig(4, 4, filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "train.profiles") {
		t.Errorf("missing directory: err = %v, want one naming train.profiles", err)
	}
	_, _, measured, err := builtinEnvConfig(4, 4, sharedtraces.Path(t, "pollux_apps"))
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
