package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClaimsScriptZeroBaseline runs docs/results/claims.py's self-test: on
// a summary whose baseline is zero on one of three seeds, the row says it
// pairs 2 of 3 seeds (mean -15.0% ± 63.5: the two ratios 0.9 and 0.8, t
// quantile 12.706 at one degree of freedom) and the zero seed gets a line
// of its own with both figures, once; a seed whose accuracy is unknown
// gets one too; the accuracy claim is held to the baseline with the
// highest accuracy; every row gives the missed targets, and the ranking
// table says whether the top three hold across the convergence band.
// Skipped without python3.
func TestClaimsScriptZeroBaseline(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	out, err := exec.Command(py, "../../docs/results/claims.py", "--self-test").CombinedOutput()
	if err != nil {
		t.Fatalf("claims.py --self-test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "claims self-test: ok") {
		t.Fatalf("claims.py --self-test printed %q", out)
	}
}
