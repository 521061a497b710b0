package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInferMM runs drover infer mm sim and eval on short windows: the
// outputs name what the issue asks for (per-modality TTFT, SLO, GPU-hours,
// the derived costs; the ladder table and its PNG), and bad flags are
// refused naming the flag.
func TestInferMM(t *testing.T) {
	code, out, errOut := drover(t, "infer", "mm", "sim", "-model", "internvl-2.5-26b", "-scale", "5", "-minutes", "10")
	if code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"internvl-2.5-26b, modserve: [0 48 20]", "TTFT image", "TTFT text", "attainment", "GPU-hours", "cost Encode: derived:"} {
		if !strings.Contains(out, want) {
			t.Errorf("sim output lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	code, out, errOut = drover(t, "infer", "mm", "eval", "-quiet", "-models", "llama-3.2-11b-vision", "-scales", "5,10", "-minutes", "10", "-out", dir)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"| llama-3.2-11b-vision | 5 |", "modserve-decoup", "P99 ordered"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"table.md", "ttft.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("eval -out: %s: %v", f, err)
		}
	}
	for _, args := range [][]string{
		{"infer", "mm", "sim", "-scale", "0"},
		{"infer", "mm", "sim", "-router", "nope"},
		{"infer", "mm", "sim", "-link", "carrier-pigeon"},
		{"infer", "mm", "eval", "-scales", "5,x"},
		{"infer", "mm", "frobnicate"},
	} {
		if code, _, errOut := drover(t, args...); code == 0 {
			t.Errorf("%v: exit 0, want an error (%s)", args, errOut)
		}
	}
	for _, sub := range []string{"sim", "eval"} {
		if code, _, errOut := drover(t, "infer", "mm", sub, "-h"); code != 0 {
			t.Errorf("infer mm %s -h: exit %d: %s", sub, code, errOut)
		}
	}
}
