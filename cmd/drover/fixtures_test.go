package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The package's shared fixtures: runs several tests read and none
// changes, made once under one directory that TestMain removes after
// the tests.
var fixtures struct {
	once sync.Once
	dir  string
	err  error
}

// fixtureDir returns the directory of the shared fixtures, making it on
// first use.
func fixtureDir(t *testing.T) string {
	t.Helper()
	fixtures.once.Do(func() { fixtures.dir, fixtures.err = os.MkdirTemp("", "drover-cmd-fixtures-") })
	if fixtures.err != nil {
		t.Fatal(fixtures.err)
	}
	return fixtures.dir
}

// removeFixtures removes the shared fixtures' directory, if one was made.
func removeFixtures() {
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
}

// trainedRun is a drover train run made once for the package's tests:
// its run directory, what it printed and its exit code.
type trainedRun struct {
	once                sync.Once
	dir, stdout, stderr string
	code                int
}

// get makes the run the first time (drover train with args and --out a
// directory name under the fixtures' directory) and returns its
// directory and what it printed; a failed run fails every test that asks.
func (r *trainedRun) get(t *testing.T, name string, args ...string) (dir, stdout string) {
	t.Helper()
	root := fixtureDir(t)
	r.once.Do(func() {
		r.dir = filepath.Join(root, name)
		r.code, r.stdout, r.stderr = drover(t, append(append([]string{"train"}, args...), "--out", r.dir)...)
	})
	if r.code != 0 {
		t.Fatalf("drover train %v: exit %d: %s", args, r.code, r.stderr)
	}
	return r.dir, r.stdout
}

var strnBCRun, pdrlBCRun trainedRun

// strnBC returns the run directory of drover train --env strn-rl --algo
// bc --eval-seeds 0 --quiet (behaviour cloning of STRN, the direct
// policy's default run) and what it printed, trained once for the
// package's tests; they may read the checkpoint and start runs from it
// (--resume, --init) but must not write into it.
func strnBC(t *testing.T) (dir, stdout string) {
	t.Helper()
	return strnBCRun.get(t, "strn-rl-bc", "--env", "strn-rl", "--algo", "bc", "--eval-seeds", "0", "--quiet")
}

// pdrlBC returns the run directory of drover train --env pd-rl --algo bc
// --eval-seeds 1 --quiet (behaviour cloning of the speed-aware rule,
// judged on one held-out seed) and what it printed, trained once for the
// package's tests (the training, not the judging, is what takes the
// time; --eval-seeds changes meta.json's eval and converged, not the
// weights). The caller's working directory must be the repository root
// (t.Chdir), where drover train finds ../shared. Tests may read the
// checkpoint and judge it (--judge writes nothing) but must not write
// into it.
func pdrlBC(t *testing.T) (dir, stdout string) {
	t.Helper()
	return pdrlBCRun.get(t, "pd-rl-bc", "--env", "pd-rl", "--algo", "bc", "--eval-seeds", "1", "--quiet")
}
