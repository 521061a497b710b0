package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestTrainPDRL: drover train --env pd-rl --algo bc clones HACK's router,
// which then routes every held-out window as HACK does: the gate sees a
// gain of exactly 0 and the checkpoint says not converged.
func TestTrainPDRL(t *testing.T) {
	sharedtraces.Path(t, "llm") // skips where ../shared/traces is missing
	out := filepath.Join(t.TempDir(), "run")
	t.Chdir(filepath.Join("..", ".."))
	var stdout, stderr bytes.Buffer
	if rc := run([]string{"train", "--env", "pd-rl", "--algo", "bc", "--eval-seeds", "1", "--quiet", "--out", out}, &stdout, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	if !strings.Contains(stdout.String(), "not converged: mean gain 0.0%, lower bound 0.0% over 9 paired episodes") {
		t.Fatalf("output:\n%s", stdout.String())
	}
	m, _, err := checkpoints.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Env != "pd-rl" || m.Converged || m.Eval["gate_mean_gain"] != 0 || m.Eval["heldout_mean_jct"] != m.Eval["heldout_mean_jct_hack"] {
		t.Fatalf("meta %+v", m)
	}
	if rc := run([]string{"train", "--env", "pd-rl", "--algo", "dqn"}, &stdout, &stderr); rc == 0 {
		t.Fatal("--algo dqn accepted")
	}
}
