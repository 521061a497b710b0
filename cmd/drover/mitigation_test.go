package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSimMitigation(t *testing.T) {
	tests := []struct {
		mitigation string
		line       string // the mitigation's line in the text output ("" for none)
	}{
		{"none", ""},
		{"stret", "STRET      relay "},
		{"replace", "replace    "},
	}
	for _, tt := range tests {
		t.Run(tt.mitigation, func(t *testing.T) {
			jobs := filepath.Join(t.TempDir(), "jobs.csv")
			code, out, errOut := drover(t, "sim", "--quiet", "--policy", "first-fit", "--mitigation", tt.mitigation, "--jobs-out", jobs)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			has := strings.Contains(out, "STRET ") || strings.Contains(out, "\nreplace ")
			if tt.line == "" && has || tt.line != "" && !strings.Contains(out, tt.line) {
				t.Errorf("want line %q:\n%s", tt.line, out)
			}
			f, err := os.Open(jobs)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for _, col := range []string{"relayed", "relay_changes", "withheld", "tunings", "replacements", "gpus"} {
				if !slices.Contains(rows[0], col) {
					t.Errorf("--jobs-out lacks column %s: %v", col, rows[0])
				}
			}
			code, out, errOut = drover(t, "sim", "--quiet", "--json", "--policy", "first-fit", "--mitigation", tt.mitigation)
			if code != 0 {
				t.Fatalf("--json: exit %d: %s", code, errOut)
			}
			var js struct {
				Mitigation *struct {
					Name string `json:"name"`
				} `json:"mitigation"`
			}
			if err := json.Unmarshal([]byte(out), &js); err != nil {
				t.Fatal(err)
			}
			if (js.Mitigation == nil) != (tt.mitigation == "none") || js.Mitigation != nil && js.Mitigation.Name != tt.mitigation {
				t.Errorf("--json mitigation %+v for %s", js.Mitigation, tt.mitigation)
			}
		})
	}
	if code, _, errOut := drover(t, "sim", "--quiet", "--mitigation", "restart"); code == 0 || !strings.Contains(errOut, `--mitigation "restart": want`) {
		t.Errorf("--mitigation restart: exit %d, %s", code, errOut)
	}
	if code, _, errOut := drover(t, "sim", "--quiet", "--mitigation", "stret", "--stret-off", "relay,restart"); code == 0 || !strings.Contains(errOut, "unknown STRET stage") {
		t.Errorf("--stret-off relay,restart: exit %d, %s", code, errOut)
	}
	code, out, errOut := drover(t, "sim", "--quiet", "--policy", "first-fit", "--mitigation", "stret", "--stret-off", "relay,withhold,tune")
	if code != 0 || !strings.Contains(out, "relay 0 worker-iterations in 0 jobs") || !strings.Contains(out, "batch tuned in 0 jobs") {
		t.Errorf("--stret-off relay,withhold,tune: exit %d, %s\n%s", code, errOut, out)
	}
}
