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

// TestCalibrateConvergence runs drover calibrate --convergence (with -o
// and with --out): it exits zero (the only failed checks are the known
// disagreements), names every family and every fitted parameter, prints
// one verdict line per check of converge's Model.Checks with the verdict
// Checks gives (PASS, FAIL known for a failure with a Known reason,
// FAIL), and writes a decodable PNG per family.
func TestCalibrateConvergence(t *testing.T) {
	m := converge.Default()
	checks := m.Checks(converge.Measurements())
	for _, flag := range []string{"-o", "--out"} {
		dir := filepath.Join(t.TempDir(), "figures")
		var out, errb bytes.Buffer
		if err := runCalibrate([]string{"--convergence", flag, dir}, &out, &errb); err != nil {
			t.Fatalf("%s: runCalibrate: %v\n%s\n%s", flag, err, out.String(), errb.String())
		}
		text := out.String()
		if flag == "-o" {
			t.Logf("output:\n%s", text)
		}
		for _, name := range m.Names() {
			png := filepath.Join(dir, name+".png")
			if !strings.Contains(text, fmt.Sprintf("-- %s (figure %s)", name, png)) {
				t.Errorf("%s: no section for family %s", flag, name)
			}
			decodePNG(t, png)
			for _, p := range m.Families[name].Params() {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(p.Name) + `\s+\S`).MatchString(text) {
					t.Errorf("%s: parameter %s not printed", flag, p.Name)
				}
			}
		}
		verdicts := regexp.MustCompile(`(?m)^(PASS|FAIL known|FAIL)  +(.+?)  +\S+  +\[`).FindAllStringSubmatch(text, -1)
		if len(verdicts) != len(checks) {
			t.Fatalf("%s: %d verdict lines, %d checks", flag, len(verdicts), len(checks))
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
				t.Errorf("%s: line %d: %q %q, want %q %q", flag, i, got[0], got[1], want, c.Name)
			}
		}
		summary := fmt.Sprintf("summary: %d families, %d checks: %d PASS, %d FAIL (%d of them known disagreements doc.go documents, 0 unexpected): PASS",
			len(m.Names()), len(checks), len(checks)-known, known, known)
		if !strings.Contains(text, summary) {
			t.Errorf("%s: no line %q", flag, summary)
		}
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
// summary says FAIL.
func TestCalibrateConvergenceUnexpectedFailure(t *testing.T) {
	ms := converge.Measurements()
	m, err := converge.Fit(ms)
	if err != nil {
		t.Fatal(err)
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
