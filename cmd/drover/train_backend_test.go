//go:build !torch

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainBackendRefused: in the default (pure-Go) build, --backend torch
// and a config's ppo.backend: torch say how to get the backend, a CUDA
// device on the Go backend and an unknown backend are refused, all before
// the run directory is made.
func TestTrainBackendRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(cfg, []byte("train: {env: cartpole}\nppo: {backend: torch}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "torch"}, "-tags torch"},
		{[]string{"--config", cfg}, "-tags torch"},
		{[]string{"--algo", "dqn", "--backend", "torch"}, "-tags torch"},
		{[]string{"--device", "cuda"}, "cpu only"},
		{[]string{"--backend", "jax"}, "jax"},
	} {
		out := filepath.Join(dir, "run")
		code, _, stderr := drover(t, append([]string{"train", "--env", "cartpole", "--quiet", "--out", out}, tt.args...)...)
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want a refusal with %q", tt.args, code, stderr, tt.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the refused run wrote %s", tt.args, out)
		}
	}
}
