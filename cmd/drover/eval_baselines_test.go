package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/builtin"
)

// TestEvalDefaultPolicies: with no --policies, drover eval compares the
// methods with every baseline, the papers' comparison systems
// (Sync-Switch and LB-BSP on each baseline placement, Themis) and the
// oracle-sync upper bounds, all of which resolve; the LB-BSP rows run
// BSP under the lb-bsp mitigation.
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
		"first-fit+sync-switch", "tiresias+sync-switch", "gandiva+sync-switch",
		"first-fit+bsp~lb-bsp", "tiresias+bsp~lb-bsp", "gandiva+bsp~lb-bsp",
		"themis",
		"first-fit+oracle-sync", "tiresias+oracle-sync", "gandiva+oracle-sync"}
	if !slices.Equal(names, want) {
		t.Errorf("default policies:\n got %v\nwant %v", names, want)
	}
	contenders, got, err := evalContenders(builtin.Registry(), defaultEvalPolicies, env.Sync{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("evalContenders names:\n got %v\nwant %v", got, want)
	}
	baselines := 0
	for _, c := range contenders {
		if c.Baseline {
			baselines++
		}
		if want := map[bool]string{true: "lb-bsp"}[strings.HasSuffix(c.Name, "~lb-bsp")]; c.Mitigation != want {
			t.Errorf("%s: mitigation %q, want %q", c.Name, c.Mitigation, want)
		}
	}
	if baselines != 23 {
		t.Errorf("%d baselines in the default set, want 23 (3 placements x 5 syncs, optimus; Sync-Switch and LB-BSP on 3 placements, Themis)", baselines)
	}
}

// TestEvalMitigationRows: a row "<policy>~<mitigation>" runs under that
// mitigation whatever --mitigation says: first-fit+bsp~lb-bsp in a run
// under --mitigation none gives, seed by seed, the figures of first-fit+bsp
// under --mitigation lb-bsp, and they differ from first-fit+bsp's without
// it (the mitigation did something); a bad mitigation is refused.
func TestEvalMitigationRows(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := func(mitigation, policies string) map[string][]map[string]any {
		out := filepath.Join(dir, mitigation)
		code, _, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
			"--load", "3", "--mitigation", mitigation, "--policies", policies, "--seeds", "1-2", "--out", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Policies []struct {
				Name string           `json:"name"`
				Runs []map[string]any `json:"runs"`
			} `json:"policies"`
		}
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatal(err)
		}
		m := map[string][]map[string]any{}
		for _, p := range sum.Policies {
			for _, r := range p.Runs {
				delete(r, "schedule_time_s") // wall time
			}
			m[p.Name] = p.Runs
		}
		return m
	}
	rows := runs("none", "first-fit+bsp,first-fit+bsp~lb-bsp")
	lb := runs("lb-bsp", "first-fit+bsp")
	if diff := cmp.Diff(lb["first-fit+bsp"], rows["first-fit+bsp~lb-bsp"]); diff != "" {
		t.Errorf("first-fit+bsp~lb-bsp differs from first-fit+bsp under --mitigation lb-bsp (-want,+got):\n%s", diff)
	}
	if cmp.Equal(rows["first-fit+bsp"], rows["first-fit+bsp~lb-bsp"]) {
		t.Error("lb-bsp changed nothing: the test proves nothing")
	}
	code, _, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--policies", "first-fit~lbbsp", "--seeds", "1")
	if code == 0 || !strings.Contains(stderr, `unknown mitigation "lbbsp"`) {
		t.Errorf("first-fit~lbbsp: exit %d, %s", code, stderr)
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
