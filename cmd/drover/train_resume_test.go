package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
)

// TestTrainOutNotEmpty reproduces issue 18's `train --out EXISTING`,
// which mixed the old run's tfevents and PNG with the new run's: a
// directory holding files is refused before any work, with the fix in the
// message, and its files are left alone; an empty one is fine.
func TestTrainOutNotEmpty(t *testing.T) {
	out := t.TempDir()
	old := filepath.Join(out, "events.out.tfevents.1.host")
	if err := os.WriteFile(old, []byte("old run"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := drover(t, "train", "--env", "cartpole", "--steps", "512", "--quiet", "--out", out)
	if code == 0 || !strings.Contains(stderr, "not empty") || !strings.Contains(stderr, "--out") || !strings.Contains(stderr, "--resume") {
		t.Fatalf("exit %d, stderr %q: want a refusal saying the directory is not empty and what to do", code, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("the refused run changed %s: %v", out, ents)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := drover(t, "train", "--env", "cartpole", "--steps", "512", "--quiet", "--out", empty); code != 0 {
		t.Fatalf("an empty --out: exit %d: %s", code, stderr)
	}
}

// TestTrainResume checks --resume: a PPO run starts from an earlier run's
// checkpoint into a new directory (marked init = 1 in its metadata); a
// DQN run, whose trainer cannot start from a network, and a checkpoint of
// another environment are refused before any work.
func TestTrainResume(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	if code, _, stderr := drover(t, "train", "--env", "cartpole", "--steps", "512", "--quiet", "--out", first); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	second := filepath.Join(dir, "second")
	code, stdout, stderr := drover(t, "train", "--env", "cartpole", "--steps", "512", "--quiet", "--resume", first, "--out", second)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "starting from "+first) {
		t.Errorf("stdout does not say where it started from:\n%s", stdout)
	}
	meta, _, err := checkpoints.Load(second)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Hyperparams["init"] != 1 {
		t.Errorf("resumed checkpoint's hyperparameters %v lack init = 1", meta.Hyperparams)
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "dqn", args: []string{"--env", "cartpole", "--algo", "dqn"}, want: "cannot start from a checkpoint"},
		{name: "other env", args: []string{"--env", "placement"}, want: "of cartpole"},
		{name: "missing", args: []string{"--env", "cartpole", "--resume", filepath.Join(dir, "none")}, want: "--resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"train", "--steps", "512", "--quiet", "--out", out, "--resume", first}, tt.args...)
			code, _, stderr := drover(t, args...)
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q: want a refusal with %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(out, "meta.json")); err == nil {
				t.Errorf("the refused run saved a checkpoint")
			}
		})
	}
}

// TestTrainResumeDirect checks --resume for a direct policy: behaviour
// cloning starts from the checkpoint's actor (direct.Config.InitFrom),
// marked init = 1; DQN, which has no actor to start from, is refused.
func TestTrainResumeDirect(t *testing.T) {
	dir := t.TempDir()
	first, _ := strnBC(t)
	second := filepath.Join(dir, "second")
	code, stdout, stderr := drover(t, "train", "--env", "strn-rl", "--algo", "bc", "--eval-seeds", "0", "--quiet", "--resume", first, "--out", second)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "starting from "+first) {
		t.Errorf("stdout does not say where it started from:\n%s", stdout)
	}
	if meta, _, err := checkpoints.Load(second); err != nil || meta.Hyperparams["init"] != 1 {
		t.Errorf("resumed checkpoint: %v, hyperparameters %v lack init = 1", err, meta.Hyperparams)
	}
	code, _, stderr = drover(t, "train", "--env", "strn-rl", "--algo", "dqn", "--eval-seeds", "0", "--quiet", "--resume", first, "--out", filepath.Join(dir, "dqn"))
	if code == 0 || !strings.Contains(stderr, "DQN does not start from an actor") {
		t.Errorf("dqn --resume: exit %d, stderr %q", code, stderr)
	}
}
