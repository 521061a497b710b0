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
	if err := runCalibrate([]string{"--data", dir, "--seed", "1"}, &out, &errb); err != nil {
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

func TestCalibrateMissingData(t *testing.T) {
	var out, errb bytes.Buffer
	err := runCalibrate([]string{"--data", t.TempDir() + "/absent"}, &out, &errb)
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("err = %v, want a not-found error", err)
	}
}
