package datasets

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

var update = flag.Bool("update", false, "regenerate builtin/synth_params.json and builtin/default.csv from the Philly trace")

// tracesDir returns the shared traces directory (see internal/sharedtraces).
func tracesDir(t testing.TB) string { return sharedtraces.Dir(t) }

// trace returns the path of a file under the traces directory.
func trace(t testing.TB, rel string) string {
	return filepath.Join(tracesDir(t), filepath.FromSlash(rel))
}

// readTrace reads a trace file's raw (possibly gzipped) bytes.
func readTrace(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(trace(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
