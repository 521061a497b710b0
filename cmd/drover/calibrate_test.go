package main

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/drover-sched/drover/env/jitter"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

func TestCalibrateReal(t *testing.T) {
	dir := sharedtraces.Path(t, "alibaba_v2020_minibatch")
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	var out, errb bytes.Buffer
	if err := runCalibrate([]string{"--regime", "shared", "--data", dir, "--seed", "1"}, &out, &errb); err != nil {
		t.Fatalf("runCalibrate: %v\n%s", err, errb.String())
	}
	t.Logf("output:\n%s", out.String())
	m := regexp.MustCompile(`KS distance \(pooled CoV, sim vs real\)\s+([0-9.]+)\s+(PASS|FAIL)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no KS line in the output:\n%s", out.String())
	}
	ks, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	if ks > jitter.Target || m[2] != "PASS" {
		t.Errorf("KS %v %s, want <= %v PASS", ks, m[2], jitter.Target)
	}
	for _, want := range []string{"p50", "p99", "job_1_norm.csv", "job_4_norm.csv.gz", "pooled"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCalibrateDedicated runs the dedicated regime's check on three seeds
// (the command's default is twenty; env/trace's TestDedicatedCalibration
// asserts the targets over more): every workload's line says PASS, and
// the command exits zero.
func TestCalibrateDedicated(t *testing.T) {
	dir := sharedtraces.Dir(t)
	if raceEnabled {
		t.Skip("82k Philly jobs are too slow under the race detector")
	}
	var out, errb bytes.Buffer
	if err := runCalibrate([]string{"--regime", "dedicated", "--traces", dir, "--dedicated-seeds", "1-3", "--quiet"}, &out, &errb); err != nil {
		t.Fatalf("runCalibrate: %v\n%s\n%s", err, out.String(), errb.String())
	}
	t.Logf("output:\n%s", out.String())
	for _, name := range []string{"builtin", "philly", "helios"} {
		m := regexp.MustCompile(`(?m)^` + name + `\s.*\s(PASS|FAIL.*)$`).FindStringSubmatch(out.String())
		if m == nil || m[1] != "PASS" {
			t.Errorf("%s: verdict %q, want PASS", name, m)
		}
	}
	// An unknown regime is refused.
	if err := runCalibrate([]string{"--regime", "exclusive"}, &out, &errb); err == nil {
		t.Error("--regime exclusive accepted")
	}
}

func TestCalibrateMissingData(t *testing.T) {
	var out, errb bytes.Buffer
	err := runCalibrate([]string{"--regime", "shared", "--data", t.TempDir() + "/absent"}, &out, &errb)
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("err = %v, want a not-found error", err)
	}
}
