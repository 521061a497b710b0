package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// evalSummary is what TestEvalConvergence reads of a summary.json.
type evalSummary struct {
	Convergence string `json:"convergence"`
	Ranking     *struct {
		Bands []string   `json:"bands"`
		Top   [][]string `json:"top"`
		Holds bool       `json:"holds"`
	} `json:"ranking"`
	Policies []struct {
		Name     string                  `json:"name"`
		Accuracy struct{ Mean *float64 } `json:"avg_accuracy"`
		Runs     []map[string]any        `json:"runs"`
	} `json:"policies"`
}

func readSummary(t *testing.T, path string) evalSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s evalSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Policies {
		for _, r := range p.Runs {
			delete(r, "schedule_time_s") // wall time
		}
	}
	return s
}

// TestEvalConvergence: --convergence sweep runs the fit for the table and
// both ends of the band, prints and stores whether the ranking of the top
// three holds (naming it at each end), writes each end's table and
// summary, reuses a BSP-only policy's runs at the ends (recomputed) and
// simulates the others there, as --convergence high alone does; bad values
// and a band without the per-worker model are refused before any run.
func TestEvalConvergence(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "first-fit+bsp,tiresias+bsp,first-fit+asp", "--seeds", "1-2"}
	sweep := filepath.Join(dir, "sweep")
	code, stdout, stderr := drover(t, append(common, "--convergence", "sweep", "--out", sweep)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"convergence sweep)", "| final accuracy (%) | missed target |",
		"8 of 12 runs at the ends reused from the fit (every job BSP)", "ranking of the top 3 across the convergence band ",
		"(rank: fewest jobs that missed their target first, then lowest avg TTA"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	table, err := os.ReadFile(filepath.Join(sweep, "table.md"))
	if err != nil || !strings.Contains(string(table), "\nranking of the top 3 across the convergence band ") {
		t.Errorf("table.md lacks the ranking line (%v):\n%s", err, table)
	}
	fit := readSummary(t, filepath.Join(sweep, "summary.json"))
	if fit.Convergence != "fit" || fit.Ranking == nil || !slices.Equal(fit.Ranking.Bands, []string{"fit", "low", "high"}) || len(fit.Ranking.Top) != 3 || len(fit.Ranking.Top[0]) != 3 {
		t.Fatalf("summary.json: convergence %q, ranking %+v", fit.Convergence, fit.Ranking)
	}
	line := "ranking of the top 3 across the convergence band holds"
	if !fit.Ranking.Holds {
		line = "ranking of the top 3 across the convergence band does not hold"
	}
	if !strings.Contains(stdout, line) || !strings.Contains(stdout, "high: "+strings.Join(fit.Ranking.Top[2], " > ")) {
		t.Errorf("the line does not say what summary.json does (%+v):\n%s", fit.Ranking, stdout)
	}
	low := readSummary(t, filepath.Join(sweep, "summary-low.json"))
	high := readSummary(t, filepath.Join(sweep, "summary-high.json"))
	if low.Convergence != "low" || high.Convergence != "high" || low.Ranking != nil {
		t.Errorf("ends' summaries: %q %q %+v", low.Convergence, high.Convergence, low.Ranking)
	}
	for _, f := range []string{"table-low.md", "table-high.md"} {
		if _, err := os.Stat(filepath.Join(sweep, f)); err != nil {
			t.Error(err)
		}
	}
	for i, p := range high.Policies {
		bsp := p.Name != "first-fit+asp"
		for _, r := range p.Runs {
			if r["recomputed"] == true != bsp || r["bsp_only"] != bsp {
				t.Errorf("%s at high: recomputed %v, bsp_only %v", p.Name, r["recomputed"], r["bsp_only"])
			}
		}
		if bsp && *p.Accuracy.Mean == *fit.Policies[i].Accuracy.Mean {
			t.Errorf("%s: accuracy %v at high as at the fit", p.Name, *p.Accuracy.Mean)
		}
	}

	// --convergence high alone simulates every run there: the ASP runs are
	// the sweep's.
	one := filepath.Join(dir, "high")
	if code, _, stderr := drover(t, append(common, "--convergence", "high", "--out", one)...); code != 0 {
		t.Fatalf("--convergence high: exit %d: %s", code, stderr)
	}
	alone := readSummary(t, filepath.Join(one, "summary.json"))
	if diff := cmp.Diff(high.Policies[2].Runs, alone.Policies[2].Runs); alone.Convergence != "high" || diff != "" {
		t.Errorf("first-fit+asp at high: the sweep's runs differ from --convergence high's (%q; -sweep,+alone):\n%s", alone.Convergence, diff)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--convergence", "medium"}, `--convergence "medium": want fit, low, high or sweep`},
		{[]string{"eval", "--convergence", ""}, `--convergence "": want fit, low, high or sweep`},
		{[]string{"eval", "--convergence", "low", "--stragglers=false"}, "--convergence low: needs the per-worker model"},
		{[]string{"eval", "--convergence", "sweep", "--log", dir, "--policies", "first-fit"}, "--convergence sweep: not with --log"},
		{[]string{"sim", "--convergence", "sweep"}, `--convergence "sweep": want fit, low or high`},
		{[]string{"sim", "--convergence", "high", "--stragglers=false"}, "--convergence high: needs the per-worker model"},
	} {
		if code, _, stderr := drover(t, append(tt.args, "--quiet")...); code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %s; want %q", tt.args, code, stderr, tt.want)
		}
	}
}
