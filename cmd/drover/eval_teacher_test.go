package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalAddsTeacher: drover eval with the shipped sas-rl checkpoint and
// no teacher listed adds sas+strn-sync (the policy sas-rl was cloned
// from) just before it, and the table and summary.json compare the two:
// the summary's vs_teacher avg TTA is the mean over seeds of sas-rl's avg
// TTA over its teacher's minus one, recomputed here from the runs.
func TestEvalAddsTeacher(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	ckpt := filepath.Join("..", "..", "checkpoints", "sas-rl")
	code, stdout, stderr := drover(t, "eval", "--quiet", "--workload", wl, "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "first-fit,"+ckpt, "--seeds", "1-2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"policies   first-fit, sas+strn-sync\n", "| policy | teacher | avg JCT vs teacher | avg TTA vs teacher |", "| sas-rl@sas-rl | sas+strn-sync | "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []struct {
			Name      string `json:"name"`
			Teacher   string `json:"teacher"`
			VsTeacher map[string]struct {
				Mean float64 `json:"mean"`
				N    int     `json:"n"`
			} `json:"vs_teacher"`
			Runs []struct {
				AvgTTA float64 `json:"avg_tta_s"`
			} `json:"runs"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range sum.Policies {
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), "first-fit,sas+strn-sync,sas-rl@sas-rl"; got != want {
		t.Fatalf("policies %s, want %s (the teacher beside the learned policy)", got, want)
	}
	teacher, learned := sum.Policies[1], sum.Policies[2]
	if learned.Teacher != "sas+strn-sync" || teacher.Teacher != "" || teacher.VsTeacher != nil {
		t.Fatalf("teacher fields: learned %q, teacher %q %v", learned.Teacher, teacher.Teacher, teacher.VsTeacher)
	}
	want := 0.0
	for k := range learned.Runs {
		want += (learned.Runs[k].AvgTTA/teacher.Runs[k].AvgTTA - 1) / float64(len(learned.Runs))
	}
	got := learned.VsTeacher["avg_tta_s"]
	if got.N != 2 || !(abs(got.Mean-want) < 1e-12) {
		t.Errorf("vs_teacher avg TTA %+v, want mean %g over 2 seeds", got, want)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
