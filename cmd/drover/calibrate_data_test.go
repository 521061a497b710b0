package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrateBadData reproduces issue 18's calibrate data cases: a NaN
// or negative mini-batch time was dropped silently and a CoV of 1e308
// accepted. Each is now refused with file:line and the field; only the
// iterations that lack a worker (the PAI jobs' last ones) are left out,
// and the report counts them.
func TestCalibrateBadData(t *testing.T) {
	const cov = ",0,1,2\njob_00,0.5,0.25,0.3\njob_01,0.1,0.2,\n"
	const head = ",worker,gpu,time,batch_time_norm\n"
	good := head + "0,0,25,1,400\n1,1,25,1,500\n2,0,25,2,410\n3,1,25,2,520\n"
	tests := []struct {
		name      string
		cov, job1 string
		want      []string // in the error
	}{
		{name: "NaN time", cov: cov, job1: good + "4,0,25,3,NaN\n5,1,25,3,1\n", want: []string{"job_1_norm.csv:6", "batch_time_norm"}},
		{name: "negative time", cov: cov, job1: good + "4,0,25,3,-7\n5,1,25,3,1\n", want: []string{"job_1_norm.csv:6", "batch_time_norm", "negative"}},
		{name: "time 1e308", cov: cov, job1: good + "4,0,25,3,1e308\n5,1,25,3,1\n", want: []string{"job_1_norm.csv:6", "batch_time_norm", "out of range"}},
		{name: "conflicting repeat", cov: cov, job1: good + "4,1,25,2,521\n", want: []string{"job_1_norm.csv:6", "duplicate"}},
		{name: "CoV 1e308", cov: ",0,1\njob_00,0.5,1e308\n", job1: good, want: []string{"coefficient_variation.csv.gz:2", "field 1", "out of range"}},
		{name: "CoV NaN", cov: ",0,1\njob_00,NaN,1\n", job1: good, want: []string{"coefficient_variation.csv.gz:2", "field 0"}},
		{name: "CoV negative", cov: ",0,1\njob_00,0.5,-1\n", job1: good, want: []string{"coefficient_variation.csv.gz:2", "negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := calibrationData(t, tt.cov, tt.job1, good)
			var out, errb bytes.Buffer
			err := runCalibrate([]string{"--regime", "shared", "--data", dir, "--seed", "1"}, &out, &errb)
			if err == nil {
				t.Fatalf("bad data accepted:\n%s", out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}

	// An incomplete last iteration and an exact repeat are left out and
	// counted in the report.
	dir := calibrationData(t, cov, good+"4,1,25,2,520\n5,0,25,3,430\n", good)
	var out, errb bytes.Buffer
	err := runCalibrate([]string{"--regime", "shared", "--data", dir, "--seed", "1"}, &out, &errb)
	if err != nil && err != errCalibrationFailed {
		t.Fatalf("runCalibrate: %v", err)
	}
	if !strings.Contains(out.String(), "job_1_norm.csv: left out 1 iterations that lack a worker and 1 repeated rows (2 rows in all)") {
		t.Errorf("the report does not count the left-out iteration:\n%s", out.String())
	}
}

// calibrationData writes a mini-batch data directory: the CoV table (not
// gzipped, under its usual name), job_1_norm.csv, and rest as every other
// job file.
func calibrationData(t *testing.T, cov, job1, rest string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"coefficient_variation.csv.gz": cov, "job_1_norm.csv": job1}
	for _, f := range minibatchFiles[1:] {
		files[f] = rest
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
