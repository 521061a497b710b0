package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/compare"
)

// TestEvalDefaultPolicies: with no --policies, drover eval compares the
// methods with every baseline and the oracle-sync upper bounds, all of
// which resolve.
func TestEvalDefaultPolicies(t *testing.T) {
	names, dirs, err := evalPolicies(defaultEvalPolicies)
	if err != nil || len(dirs) != 0 {
		t.Fatalf("evalPolicies(default) = %v, %v, %v", names, dirs, err)
	}
	want := []string{"strn", "sas",
		"first-fit+bsp", "first-fit+asp", "first-fit+local(4)", "first-fit+local(8)", "first-fit+strn-sync",
		"tiresias+bsp", "tiresias+asp", "tiresias+local(4)", "tiresias+local(8)", "tiresias+strn-sync",
		"gandiva+bsp", "gandiva+asp", "gandiva+local(4)", "gandiva+local(8)", "gandiva+strn-sync",
		"optimus",
		"first-fit+oracle-sync", "tiresias+oracle-sync", "gandiva+oracle-sync"}
	if !slices.Equal(names, want) {
		t.Errorf("default policies:\n got %v\nwant %v", names, want)
	}
	if _, err := compare.Heuristics(builtin.Registry(), names, env.Sync{}); err != nil {
		t.Error(err)
	}
	baselines := 0
	for _, n := range names {
		if builtin.IsBaseline(n) {
			baselines++
		}
	}
	if baselines != 16 {
		t.Errorf("%d baselines in the default set, want 16 (3 placements x 5 syncs, optimus)", baselines)
	}
}

// TestEvalBaselines: the table names the best baseline and compares every
// contender with it; summary.json says the same.
func TestEvalBaselines(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "strn,first-fit+asp,tiresias+strn-sync,gandiva+oracle-sync", "--seeds", "1-2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"best baseline (lowest mean of the 2 baselines): by avg JCT ", "| **strn** | ", "| **gandiva+oracle-sync** | ",
		"| first-fit+asp | ", "| tiresias+strn-sync | "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Best     map[string]string `json:"best_baseline"`
		Policies []struct {
			Name     string `json:"name"`
			Baseline bool   `json:"baseline"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"avg_jct_s", "avg_tta_s"} {
		if b := sum.Best[k]; b != "first-fit+asp" && b != "tiresias+strn-sync" {
			t.Errorf("best baseline by %s = %q, want one of the two baselines", k, b)
		}
	}
	var got []bool
	for _, p := range sum.Policies {
		got = append(got, p.Baseline)
	}
	if want := []bool{false, true, true, false}; !slices.Equal(got, want) {
		t.Errorf("baseline flags %v, want %v", got, want)
	}
}
