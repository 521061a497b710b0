package profile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// tracesDir returns ../shared/traces/pollux_apps beside the repository root
// (found by walking up to go.mod), skipping the test when it is absent.
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
	p := filepath.Join(dir, "..", "shared", "traces", "pollux_apps")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("traces absent: %v", err)
	}
	return p
}

var (
	allOnce sync.Once
	allMeas map[string]*Measured
	allErr  error
)

// loadAll loads the six Pollux profiles once per test binary.
func loadAll(t testing.TB) map[string]*Measured {
	t.Helper()
	root := tracesDir(t)
	allOnce.Do(func() { allMeas, allErr = LoadAll(root) })
	if allErr != nil {
		t.Fatal(allErr)
	}
	return allMeas
}
