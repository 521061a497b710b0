package main

import (
	"bytes"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/converge"
)

// TestCalibrateConvergence runs drover calibrate --convergence --out: it
// exits zero (the only failed checks are the known
// disagreements), names every family and every fitted parameter, prints
// one verdict line per check of converge's Model.Checks with the verdict
// Checks gives (PASS, FAIL known for a failure with a Known reason,
// FAIL), and writes a decodable PNG per family. -o is --out: the
// figures' directory it names is the one the command makes (a regular
// file there fails, naming it, before any figure is drawn; drawing them
// takes most of the test's time under -race).
func TestCalibrateConvergence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runCalibrate([]string{"--convergence", "-o", file}, &out, &errb); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("-o naming a regular file: err %v, want one naming it", err)
	}
	m := converge.Default()
	checks := m.Checks(converge.Measurements())
	dir := filepath.Join(t.TempDir(), "figures")
	out.Reset()
	if err := runCalibrate([]string{"--convergence", "--out", dir}, &out, &errb); err != nil {
		t.Fatalf("runCalibrate: %v\n%s\n%s", err, out.String(), errb.String())
	}
	text := out.String()
	t.Logf("output:\n%s", text)
	for _, name := range m.Names() {
		png := filepath.Join(dir, name+".png")
		if !strings.Contains(text, fmt.Sprintf("-- %s (figure %s)", name, png)) {
			t.Errorf("no section for family %s", name)
		}
		decodePNG(t, png)
		for _, p := range m.Families[name].Params() {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p.Name) + `\s+\S`).MatchString(text) {
				t.Errorf("parameter %s not printed", p.Name)
			}
		}
	}
	verdicts := regexp.MustCompile(`(?m)^(PASS|FAIL known|FAIL)  +(.+?)  +\S+  +\[`).FindAllStringSubmatch(text, -1)
	if len(verdicts) != len(checks) {
		t.Fatalf("%d verdict lines, %d checks", len(verdicts), len(checks))
	}
	known := 0
	for i, c := range checks {
		want := "PASS"
		switch {
		case !c.Pass && c.Known != "":
			want = "FAIL known"
			known++
		case !c.Pass:
			want = "FAIL"
		}
		if got := verdicts[i][1:]; got[0] != want || got[1] != c.Name {
			t.Errorf("line %d: %q %q, want %q %q", i, got[0], got[1], want, c.Name)
		}
	}
	summary := fmt.Sprintf("summary: %d families, %d checks: %d PASS, %d FAIL (%d of them known disagreements doc.go documents, 0 unexpected): PASS",
		len(m.Names()), len(checks), len(checks)-known, known, known)
	if !strings.Contains(text, summary) {
		t.Errorf("no line %q", summary)
	}
}

// decodePNG fails the test unless path holds an image image.Decode reads
// as a PNG of non-zero size.
func decodePNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	img, format, err := image.Decode(f)
	if err != nil || format != "png" || img.Bounds().Empty() {
		t.Errorf("%s: format %q, err %v", path, format, err)
	}
}

// A check that fails without a Known reason fails the command: a model
// whose resnet32-cifar10 BSP final accuracy is 5 points above every BSP
// run's (0.910-0.926) fails its BSP final-accuracy check, and the
// summary says FAIL. Only that family is checked (and drawn).
func TestCalibrateConvergenceUnexpectedFailure(t *testing.T) {
	ms := converge.Measurements()
	m, err := converge.Fit(ms)
	if err != nil {
		t.Fatal(err)
	}
	for name := range m.Families {
		if name != "resnet32-cifar10" {
			delete(m.Families, name)
		}
	}
	m.Families["resnet32-cifar10"].Staleness.BSPFinal.Value += 0.05
	var out bytes.Buffer
	ok, err := calibrateConvergence(m, ms, t.TempDir(), &out)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if ok {
		t.Errorf("ok with a BSP final accuracy of %.4g:\n%s", m.Families["resnet32-cifar10"].Staleness.BSPFinal.Value, text)
	}
	if !regexp.MustCompile(`(?m)^FAIL  +resnet32-cifar10 bsp on 8 workers: final accuracy  `).MatchString(text) {
		t.Errorf("no FAIL line for the BSP final accuracy:\n%s", text)
	}
	if !regexp.MustCompile(`(?m)^summary: .*, [1-9]\d* unexpected\): FAIL$`).MatchString(text) {
		t.Errorf("summary does not say FAIL:\n%s", text)
	}
}

// --convergence refuses the straggler model's flags, and -o/--out need
// --convergence.
func TestCalibrateConvergenceFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--convergence", "--regime", "shared"},
		{"--convergence", "--fit", "-o", "x"},
		{"-o", "x"},
		{"--out", "x", "--regime", "shared"},
	} {
		var out, errb bytes.Buffer
		err := runCalibrate(args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "convergence") {
			t.Errorf("%q: err %v, want a refusal naming --convergence", args, err)
		}
	}
}
