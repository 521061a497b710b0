package datasets

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "regenerate builtin/synth_params.json and builtin/default.csv from the Philly trace")

// tracesDir returns ../shared/traces relative to the repository root (the
// directory holding go.mod), skipping the test when it is absent.
func tracesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	tr := filepath.Join(dir, "..", "shared", "traces")
	if _, err := os.Stat(tr); err != nil {
		t.Skipf("trace directory %s absent", tr)
	}
	return tr
}

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
