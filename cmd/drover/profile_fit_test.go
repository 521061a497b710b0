package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestProfileFitEmptyDir reproduces issue 18: `profile fit` on an empty
// directory wrote {} and exited 0 without a word. It is now an error
// naming the directory, and no output file is written.
func TestProfileFitEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("no profiles here"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fit.json")
	code, stdout, stderr := drover(t, "profile", "fit", "-o", out, dir)
	if code == 0 || !strings.Contains(stderr, "no model profiles") || !strings.Contains(stderr, dir) {
		t.Fatalf("exit %d, stderr %q: want an error naming %s", code, stderr, dir)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written for an empty directory", out)
	}
}

// TestProfileFitReports checks that profile fit says what it fits (the
// models, on stderr), shows its progress, and where it wrote them.
func TestProfileFitReports(t *testing.T) {
	root := sharedtraces.Path(t, "pollux_apps")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "cifar10"), os.DirFS(filepath.Join(root, "cifar10"))); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "fit.json")
	code, _, stderr := drover(t, "profile", "fit", "-o", out, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"fitting 1 model profiles from " + dir + ": cifar10", "profile fit: 1/1", "wrote 1 fitted profiles to " + out} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), `"cifar10"`) {
		t.Errorf("%s: %v\n%s", out, err, b)
	}
}
