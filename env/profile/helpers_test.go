package profile

import (
	"sync"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// tracesDir returns the shared pollux_apps profiles directory, skipping
// the test when it is absent.
func tracesDir(t testing.TB) string { return sharedtraces.Path(t, "pollux_apps") }

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
