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

var strnBCOnce struct {
	sync.Once
	dir, stdout, stderr string
	code                int
}

// strnBC returns the run directory of drover train --env strn-rl --algo
// bc --eval-seeds 0 --quiet (behaviour cloning of STRN, the direct
// policy's default run) and what it printed, trained once for the
// package's tests; they may read the checkpoint and start runs from it
// (--resume, --init) but must not write into it.
func strnBC(t *testing.T) (dir, stdout string) {
	t.Helper()
	root := fixtureDir(t)
	strnBCOnce.Do(func() {
		strnBCOnce.dir = filepath.Join(root, "strn-rl-bc")
		strnBCOnce.code, strnBCOnce.stdout, strnBCOnce.stderr = drover(t, "train", "--env", "strn-rl", "--algo", "bc", "--eval-seeds", "0", "--quiet", "--out", strnBCOnce.dir)
	})
	if strnBCOnce.code != 0 {
		t.Fatalf("drover train --env strn-rl --algo bc: exit %d: %s", strnBCOnce.code, strnBCOnce.stderr)
	}
	return strnBCOnce.dir, strnBCOnce.stdout
}

var pdrlBCOnce struct {
	sync.Once
	dir, stdout, stderr string
	code                int
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
	root := fixtureDir(t)
	pdrlBCOnce.Do(func() {
		pdrlBCOnce.dir = filepath.Join(root, "pd-rl-bc")
		pdrlBCOnce.code, pdrlBCOnce.stdout, pdrlBCOnce.stderr = drover(t, "train", "--env", "pd-rl", "--algo", "bc", "--eval-seeds", "1", "--quiet", "--out", pdrlBCOnce.dir)
	})
	if pdrlBCOnce.code != 0 {
		t.Fatalf("drover train --env pd-rl --algo bc: exit %d: %s", pdrlBCOnce.code, pdrlBCOnce.stderr)
	}
	return pdrlBCOnce.dir, pdrlBCOnce.stdout
}
