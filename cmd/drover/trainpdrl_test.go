package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestTrainPDRL: drover train --env pd-rl --algo bc clones the speed-aware
// rule (policies/pdrl.Speed), which the gate finds faster than HACK on the
// held-out windows by more than its 2% margin (13.3% on these 9 episodes,
// the rule's own gain on the 27 of drover train's default is 12.8%): the
// checkpoint says converged.
func TestTrainPDRL(t *testing.T) {
	sharedtraces.Path(t, "llm") // skips where ../shared/traces is missing
	t.Chdir(filepath.Join("..", ".."))
	out, trained := pdrlBC(t)
	if !strings.Contains(trained, "; converged: mean gain") || !strings.Contains(trained, "over 9 paired episodes") {
		t.Fatalf("output:\n%s", trained)
	}
	var stdout, stderr bytes.Buffer
	m, _, err := checkpoints.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Env != "pd-rl" || !m.Converged || !(m.Eval["gate_mean_gain"] > 0.02) || !(m.Eval["heldout_mean_jct"] < m.Eval["heldout_mean_jct_hack"]) {
		t.Fatalf("meta %+v", m)
	}
	// --judge re-judges the saved checkpoint as training judged it, on as
	// many seeds as its meta.json records (1, not the flag's default 5): the
	// same figures, bit for bit, and the same verdict.
	stdout.Reset()
	if rc := run([]string{"train", "--env", "pd-rl", "--judge", out}, &stdout, &stderr); rc != 0 {
		t.Fatalf("--judge: rc %d: %s", rc, stderr.String())
	}
	if !strings.Contains(stdout.String(), "over 9 paired episodes") || !strings.Contains(stdout.String(), "now: converged true (the same figures)") {
		t.Fatalf("--judge output:\n%s", stdout.String())
	}
	if m2, _, err := checkpoints.Load(out); err != nil || m2.Converged != m.Converged || m2.Eval["heldout_mean_jct"] != m.Eval["heldout_mean_jct"] {
		t.Fatalf("--judge changed the checkpoint: %+v, %v", m2, err)
	}
	if rc := run([]string{"train", "--env", "pd-rl", "--algo", "dqn"}, &stdout, &stderr); rc == 0 {
		t.Fatal("--algo dqn accepted")
	}
}

// TestTrainTeacherFlag: --teacher picks pd-rl's behaviour-cloning teacher
// and is refused, naming itself, with another value or another env; so is
// --judge with another env, with a training flag or with no held-out seeds.
func TestTrainTeacherFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--env", "pd-rl", "--teacher", "x"}, `--teacher "x": want speed or hack`},
		{[]string{"train", "--env", "sync", "--teacher", "hack"}, "--teacher given without --env pd-rl"},
		{[]string{"train", "--env", "sync", "--judge", "checkpoints/pd-rl"}, "--judge given without --env pd-rl"},
		{[]string{"train", "--env", "pd-rl", "--judge", "checkpoints/pd-rl", "--steps", "5"}, "does not take --steps"},
		{[]string{"train", "--env", "pd-rl", "--judge", "checkpoints/pd-rl", "--eval-seeds", "0"}, "--eval-seeds 0: want 1 to 1000"},
	} {
		var stdout, stderr bytes.Buffer
		if rc := run(c.args, &stdout, &stderr); rc == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: rc %d, stderr %q, want an error with %q", c.args, rc, stderr.String(), c.want)
		}
	}
}
