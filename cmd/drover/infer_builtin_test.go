package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// droverIn runs this test binary as drover (TestMain) in dir, where no
// ../shared/traces exists, and returns its exit code and output.
func droverIn(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), execEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// TestInferSimWithoutShared: drover infer sim on a machine without
// ../shared (run from an empty directory) falls back to the built-in
// roofline with one line saying so, prints a summary marked derived, and
// gives the same summary as --perf builtin (which prints no fallback
// line); a --perf FILE that is missing stays an error, and so does the
// default path named explicitly.
func TestInferSimWithoutShared(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := droverIn(t, dir, "infer", "sim", "--requests", "200")
	if code != 0 {
		t.Fatalf("drover infer sim: exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "using the built-in roofline model"); n != 1 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr has the fallback line %d times in %d lines, want once, alone:\n%s", n, strings.Count(errOut, "\n"), errOut)
	}
	for _, want := range []string{"200 finished of 200", "TTFT", "E2E (JCT)", "latencies  derived (built-in roofline)", "extrapolated  none: every instance ran on its own type's rows of the built-in table"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out2, errOut2 := droverIn(t, dir, "infer", "sim", "--requests", "200", "--perf", "builtin")
	if code != 0 || errOut2 != "" {
		t.Fatalf("--perf builtin: exit %d, stderr %q", code, errOut2)
	}
	strip := func(s string) string {
		i := strings.Index(s, "simulated ")
		return s[:i]
	}
	if strip(out) != strip(out2) {
		t.Errorf("the fallback and --perf builtin differ:\n%s\n%s", out, out2)
	}
	for _, perf := range []string{"missing.csv", "../shared/traces/llm/calibration/splitwise_perf_model.csv"} {
		code, _, errOut = droverIn(t, dir, "infer", "sim", "--requests", "200", "--perf", perf)
		if code == 0 || !strings.Contains(errOut, "--perf: ") || strings.Contains(errOut, "built-in") {
			t.Errorf("--perf %s (absent): exit %d, stderr %q; want an error and no fallback", perf, code, errOut)
		}
	}
}

// TestInferSimBuiltinJSON: --perf builtin marks the JSON summary's
// latencies derived; the measured table's are measured; both run the
// default workload to the end.
func TestInferSimBuiltinJSON(t *testing.T) {
	code, o, e := drover(t, "infer", "sim", "--json", "--requests", "100", "--perf", "builtin")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if !strings.Contains(o, `"latencies": "derived (built-in roofline)`) || !strings.Contains(o, `"finished": 100`) {
		t.Errorf("--perf builtin JSON lacks the derived mark or 100 finished:\n%s", o)
	}
	perf := inferPerfFlag(t)
	code, o, e = drover(t, append([]string{"infer", "sim", "--json", "--requests", "100"}, perf...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if !strings.Contains(o, `"latencies": "measured`) {
		t.Errorf("measured table's JSON lacks the measured mark:\n%s", o)
	}
}
