package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/strn"
)

// TestServeViewLevelInShadow serves a strn-rl checkpoint (read by a test
// loader whose policy is STRN) beside the random heuristic: the heuristic
// answers, says the learned policy decides in shadow, and the start-up
// line says so too.
func TestServeViewLevelInShadow(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, checkpoints.MetaFile), []byte(`{"version":1,"env":"strn-rl"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.Checkpoints, cfg.Heuristic = dir, "random"
	cfg.Loader = func(string) (checkpoints.Meta, func() policies.Policy, error) {
		return checkpoints.Meta{Env: "strn-rl"}, func() policies.Policy { p, _ := strn.New(policies.Config{Seed: 1}); return p }, nil
	}
	addrs, out, stop := startServe(t, cfg)
	if !strings.Contains(out.String(), "learned@v1 decides in shadow (switch gate)") {
		t.Errorf("start-up output:\n%s", out.String())
	}
	code, o, e := drover(t, "place", "-addr", addrs[0], "-nodes", "8", "-workers", "4")
	if code != 0 || !strings.Contains(o, "policy heuristic:random (fallback: shadow)") {
		t.Errorf("place: exit %d\n%s%s", code, o, e)
	}
	// place -status says how the learned policy is served.
	code, o, e = drover(t, "place", "-addr", addrs[0], "-status")
	if code != 0 || !strings.Contains(o, "switch gate  shadow learned@v1") || !strings.Contains(o, "shadow decisions map[") {
		t.Errorf("place -status: exit %d\n%s%s", code, o, e)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeSwitchFlags: a bad switch mode or gate setting is refused with
// a message that names it; a strn-rl checkpoint that the real loader
// cannot read is refused at start-up.
func TestServeSwitchFlags(t *testing.T) {
	code, _, e := drover(t, "serve", "-switch", "sometimes")
	if code != 1 || !strings.Contains(e, `switch mode "sometimes"`) {
		t.Errorf("-switch sometimes: exit %d: %s", code, e)
	}
	code, _, e = drover(t, "serve", "-gate-seeds", "1")
	if code != 1 || !strings.Contains(e, "-gate-seeds 1: want 2") {
		t.Errorf("-gate-seeds 1: exit %d: %s", code, e)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, checkpoints.MetaFile), []byte(`{"version":1,"env":"strn-rl"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, e = drover(t, "serve", "-addr", "127.0.0.1:0", "-metrics-addr", "", "-checkpoints", dir)
	if code != 1 || !strings.Contains(e, "checkpoint "+dir) {
		t.Errorf("unreadable strn-rl checkpoint: exit %d: %s", code, e)
	}
}

// TestServeShippedDirectCheckpoint serves the shipped sas-rl checkpoint
// through the real loader (policies/direct.Load) with -switch converged,
// its meta marked converged in a copy: Place is answered by the learned
// policy itself, and it places the job.
func TestServeShippedDirectCheckpoint(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{checkpoints.MetaFile, checkpoints.WeightsFile} {
		b, err := os.ReadFile(filepath.Join("../../checkpoints/sas-rl", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == checkpoints.MetaFile {
			b = []byte(strings.Replace(string(b), `"converged": false`, `"converged": true`, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testServeConfig()
	cfg.Checkpoints, cfg.Switch.Mode = dir, "converged"
	addrs, _, stop := startServe(t, cfg)
	code, o, e := drover(t, "place", "-addr", addrs[0], "-nodes", "8", "-workers", "4")
	if code != 0 || !strings.Contains(o, "policy learned@") || strings.Contains(o, "not placed") {
		t.Errorf("place: exit %d\n%s%s", code, o, e)
	}
	t.Logf("place:\n%s", o)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
