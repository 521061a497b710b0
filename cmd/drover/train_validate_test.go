package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainConfigRefused reproduces issue 18's `drover train --config`
// cases: each exits non-zero before any work (no run directory) with an
// error naming the config file and the field.
func TestTrainConfigRefused(t *testing.T) {
	tests := []struct {
		name, yaml string
		args       []string
		want       string // the field, in stderr
	}{
		{name: "ppo hidden zero", yaml: "train: {env: cartpole}\nppo: {hidden: [0]}\n", want: "hidden"},
		{name: "ppo hidden negative", yaml: "ppo: {hidden: [-5]}\n", want: "hidden"},
		{name: "dqn hidden zero", yaml: "train: {env: cartpole, algo: dqn}\ndqn: {hidden: [0]}\n", want: "hidden"},
		{name: "dqn hidden negative", yaml: "train: {env: cartpole, algo: dqn}\ndqn: {hidden: [-5]}\n", want: "hidden"},
		{name: "hidden out of memory", yaml: "train: {env: cartpole}\nppo: {hidden: [100000, 100000]}\n", want: "hidden"},
		{name: "steps zero", yaml: "train: {env: cartpole, steps: 0}\n", want: "train.steps"},
		{name: "nodes negative", yaml: "train: {env: sas-rl, algo: bandit, nodes: -2}\n", want: "train.nodes"},
		{name: "eval seeds negative", yaml: "train: {env: strn-rl, algo: bc, eval_seeds: -1}\n", want: "train.eval_seeds"},
		{name: "gamma 2.5", yaml: "train: {env: cartpole}\nppo: {gamma: 2.5}\n", want: "gamma"},
		{name: "dqn batch above buffer", yaml: "train: {env: cartpole, algo: dqn}\ndqn: {batch_size: 20000}\n", want: "batch_size"},
		{name: "direct ignores nodes", yaml: "train: {env: strn-rl, algo: ppo, nodes: 32}\n", want: "train.nodes"},
		{name: "direct ignores ppo", yaml: "train: {env: sas-rl, algo: bc}\nppo: {hidden: [32]}\n", want: "ppo.hidden"},
		{name: "flag eval seeds negative", yaml: "train: {env: cartpole}\n", args: []string{"--eval-seeds", "-1"}, want: "--eval-seeds"},
		{name: "flag steps zero", yaml: "train: {env: cartpole}\n", args: []string{"--steps", "0"}, want: "--steps"},
		{name: "flag nodes negative", yaml: "train: {env: cartpole}\n", args: []string{"--nodes", "-3"}, want: "--nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "cfg.yaml")
			if err := os.WriteFile(cfg, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "run")
			args := append([]string{"train", "--config", cfg, "--quiet", "--out", out}, tt.args...)
			code, _, stderr := drover(t, args...)
			if code == 0 {
				t.Fatalf("exit 0; want a refusal naming %s", tt.want)
			}
			if !strings.Contains(stderr, tt.want) || (tt.args == nil && !strings.Contains(stderr, "cfg.yaml")) {
				t.Errorf("stderr %q: want the file cfg.yaml and %s", stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the refused run wrote %s", out)
			}
		})
	}
}
