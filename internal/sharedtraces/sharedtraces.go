package sharedtraces

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared traces directory, ../shared/traces relative to
// the repository root (the nearest directory above the working directory
// holding go.mod). It skips tb when either is not found.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("repository root (go.mod) not found")
		}
		dir = parent
	}
	tr := filepath.Join(filepath.Dir(dir), "shared", "traces")
	if _, err := os.Stat(tr); err != nil {
		tb.Skipf("trace directory %s absent", tr)
	}
	return tr
}

// Path returns the path of elems below the shared traces directory,
// skipping tb when the directory is absent.
func Path(tb testing.TB, elems ...string) string {
	tb.Helper()
	return filepath.Join(append([]string{Dir(tb)}, elems...)...)
}
