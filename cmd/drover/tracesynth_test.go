package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/datasets"
)

// TestTraceSynthScaled checks drover trace synth -jobs -nodes: the file
// reads back as that many jobs at the asked load, the same seed
// writes the same bytes, stdout gets the same file, and bad flags are
// refused.
func TestTraceSynthScaled(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for _, out := range []string{a, b} {
		if code, _, e := drover(t, "trace", "synth", "-jobs", "3000", "-nodes", "40", "-load", "0.6", "-o", out); code != 0 || !strings.Contains(e, "load 0.600 on 320 GPUs") {
			t.Fatalf("exit %d: %s", code, e)
		}
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if string(ba) != string(bb) {
		t.Fatal("the same seed wrote different files")
	}
	if code, out, e := drover(t, "trace", "synth", "-jobs", "3000", "-nodes", "40", "-load", "0.6", "-quiet"); code != 0 || out != string(ba) || e != "" {
		t.Fatalf("stdout: exit %d, %d bytes against %d; stderr %q", code, len(out), len(ba), e)
	}
	w, err := datasets.ReadFile(a, datasets.FormatJobs, datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 3000 {
		t.Fatalf("%d jobs", len(w.Jobs))
	}
	span, gs := w.Jobs[len(w.Jobs)-1].Submit-w.Jobs[0].Submit, 0.0
	for _, j := range w.Jobs {
		gs += float64(j.GPUs) * min(j.Duration, span)
	}
	if l := gs / (span * 320); l < 0.599 || l > 0.601 {
		t.Errorf("load %v, want 0.6", l)
	}
	for _, args := range [][]string{
		{"-jobs", "0", "-nodes", "4"},
		{"-jobs", "10", "-nodes", "-1"},
		{"-jobs", "10", "-nodes", "4", "-load", "0"},
		{"-jobs", "10", "-load", "0.5"},
		{"-jobs", "10", "-nodes", "4", "-gpus-per-node", "0"},
	} {
		if code, _, _ := drover(t, append([]string{"trace", "synth", "-quiet", "-o", filepath.Join(dir, "c.csv")}, args...)...); code == 0 {
			t.Errorf("%v: accepted", args)
		}
	}
}
