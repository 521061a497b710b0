package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/train"
	"github.com/drover-sched/drover/train/runlog"
)

// A run directory holds config.yaml (the effective config, the file's
// values over the defaults), the TensorBoard events and scalars.csv with
// CleanRL's tags, and the checkpoint; a bad key fails with its line.
func TestTrainRunDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(cfg, []byte("train:\n  steps: 2048\nppo:\n  lr: 0.001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, stdout, stderr := drover(t, "train", "--env", "cartpole", "--config", cfg, "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "lr: 0.001") || !strings.Contains(stdout, "total_steps: 2048") {
		t.Errorf("the config printed at start lacks the file's values:\n%s", stdout)
	}
	for _, f := range []string{runlog.ConfigFile, runlog.CSVFile, "meta.json", "weights.safetensors", train.CurveFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, runlog.CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := runlog.DecodeCSV(csv)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]int{}
	for _, r := range rows {
		tags[r.Tag]++
	}
	events, _ := filepath.Glob(filepath.Join(out, "events.out.tfevents.*"))
	if len(events) != 1 {
		t.Fatalf("event files %v", events)
	}
	f, err := os.Open(events[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := runlog.ReadEvents(f)
	if err != nil {
		t.Fatal(err)
	}
	scalars := 0
	for _, e := range evs {
		scalars += len(e.Values)
	}
	// 2048 steps = 4 updates of 512; each logs 9 scalars plus its episodes.
	if tags[runlog.TagEpisodicReturn] == 0 || tags[runlog.TagPolicyLoss] != 4 || scalars != len(rows) {
		t.Errorf("tags %v; %d scalars in the event file, %d rows", tags, scalars, len(rows))
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("ppo:\n  lr: 0.001\n  lrr: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = drover(t, "train", "--env", "cartpole", "--config", bad, "--quiet", "--out", filepath.Join(dir, "bad"))
	if code == 0 || !strings.Contains(stderr, "bad.yaml:3") || !strings.Contains(stderr, "lrr") {
		t.Errorf("exit %d, stderr %q: want the file, line 3 and the key", code, stderr)
	}
}

// sas-rl with the contextual bandit trains, saves a Q-network checkpoint
// of the candidate observation's shape, and drover eval replays it.
// (train's TestRun trains it on the built-in workload.)
func TestTrainBanditVariant(t *testing.T) {
	dir := t.TempDir()
	out, meta, nets, _, _, stdout := banditRun(t, dir, "", "300")
	if !strings.Contains(stdout, "contextual bandit") || !strings.Contains(stdout, "not converged") {
		t.Errorf("output:\n%s", stdout)
	}
	if meta.Algo != "bandit" || len(nets) != 1 || nets["q"] == nil {
		t.Fatalf("algo %q, networks %v: want bandit and one Q-network, q", meta.Algo, meta.Networks)
	}
	code, stdout, stderr := drover(t, "eval", "--quiet", "--workload", filepath.Join(dir, "tiny.csv"), "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "sas,"+out, "--seeds", "1", "--out", filepath.Join(dir, "eval"))
	if code != 0 || !strings.Contains(stdout, "sas-rl@run") {
		t.Errorf("eval: exit %d\n%s%s", code, stdout, stderr)
	}
}

// banditRun trains sas-rl's contextual bandit for steps with the train
// section's further lines train (indented by two spaces) into dir/run, on
// tinyJobs (dir/tiny.csv: episodes of its first six jobs, 2 to 8 GPUs) and
// 16 x 4 GPUs, where most decisions have several candidates, so a few
// hundred steps are dozens of episodes with fits and deviations. It
// returns the run directory, its checkpoint, the checkpoint's two files and
// what the run printed.
func banditRun(t *testing.T, dir, train, steps string) (string, checkpoints.Meta, map[string]*nn.MLP, []byte, []byte, string) {
	t.Helper()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "cfg.yaml")
	yaml := "train:\n  workload: " + wl + "\n  nodes: 16\n  gpus_per_node: 4\n" + train
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, stdout, stderr := drover(t, "train", "--env", "sas-rl", "--algo", "bandit", "--config", cfg, "--steps", steps, "--eval-seeds", "0", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mb, err := os.ReadFile(filepath.Join(out, checkpoints.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	wb, err := os.ReadFile(filepath.Join(out, checkpoints.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	meta, nets, err := checkpoints.Decode(mb, wb)
	if err != nil {
		t.Fatal(err)
	}
	return out, meta, nets, mb, wb, stdout
}

// train.heads makes the bandit a bootstrapped ensemble: its checkpoint
// holds every head and the rule's parameters, and drover eval replays it.
func TestTrainBanditEnsemble(t *testing.T) {
	dir := t.TempDir()
	out, meta, nets, _, _, _ := banditRun(t, dir, "  heads: 3\n  lower_z: 0.5\n  margin: 0.25\n", "300")
	h := meta.Hyperparams
	if len(nets) != 3 || nets["q0"] == nil || nets["q2"] == nil || h["heads"] != 3 || h["lower_z"] != 0.5 || h["margin"] != 0.25 {
		t.Errorf("networks %v, hyperparameters %v: want q0-q2, heads 3, lower_z 0.5, margin 0.25", meta.Networks, h)
	}
	code, stdout, stderr := drover(t, "eval", "--quiet", "--workload", filepath.Join(dir, "tiny.csv"), "--profiles", "builtin", "--nodes", "4", "--gpus-per-node", "4",
		"--policies", "sas,"+out, "--seeds", "1", "--out", filepath.Join(dir, "eval"))
	if code != 0 || !strings.Contains(stdout, "sas-rl@run") {
		t.Errorf("eval: exit %d\n%s%s", code, stdout, stderr)
	}
}

// drover trace convert -late writes the jobs drover train judges as the
// "late" part (train.LateWorkload), so that drover eval can judge a
// checkpoint on it with more seeds; its flags are checked.
func TestTraceConvertLate(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(wl, []byte(tinyJobs), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := datasets.Load(wl, datasets.FormatAuto, datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, late, err := train.LateWorkload(all, 0.5, 0.7, 4)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "late.csv")
	if code, _, e := drover(t, "trace", "convert", "-late", "0.5", "-offered-load", "0.7", "-gpus", "4", "-o", out, wl); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	got, err := datasets.Load(out, datasets.FormatAuto, datasets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := late.Jobs
	if len(got.Jobs) != len(want) {
		t.Fatalf("%d jobs written, want the late part's %d", len(got.Jobs), len(want))
	}
	for i, j := range got.Jobs {
		// The CSV keeps submit times to the microsecond.
		if j.Name != want[i].Name || j.GPUs != want[i].GPUs || math.Abs(j.Submit-want[i].Submit) > 1e-6 {
			t.Errorf("job %d: %+v, want %+v", i, j, want[i])
		}
	}
	for _, args := range [][]string{
		{"-late", "1.5"},
		{"-late", "0.5", "-offered-load", "0.7"},
		{"-offered-load", "0.7", "-gpus", "4"},
		{"-late", "0.5", "-offered-load", "NaN", "-gpus", "4"},
	} {
		args = append(append([]string{"trace", "convert"}, args...), "-o", out, wl)
		if code, _, _ := drover(t, args...); code == 0 {
			t.Errorf("%v accepted", args)
		}
	}
}

// train.support records the box of training contexts in the checkpoint,
// and drover eval keeps the heuristic's choice outside it: a bandit told
// to deviate at any price (margin -1000) differs from SAS, and the same
// checkpoint with a box no job falls in replays SAS exactly.
func TestTrainBanditSupport(t *testing.T) {
	dir := t.TempDir()
	_, meta, _, mb, wb, _ := banditRun(t, dir, "  margin: -1000\n  support: job\n", "300")
	s := meta.Support
	if s == nil || len(s.Lo) != placement.JobFeatures {
		t.Fatalf("support %+v, want %d dimensions", s, placement.JobFeatures)
	}
	// The training jobs (tinyJobs' first six) have 2 to 8 GPUs, and the
	// job-size feature is log2(1+g)/6: the box spans exactly that (float32).
	if lo, hi := math.Log2(3)/6, math.Log2(9)/6; math.Abs(s.Lo[0]-lo) > 1e-6 || math.Abs(s.Hi[0]-hi) > 1e-6 {
		t.Errorf("job-size range [%v, %v], want [%v, %v]", s.Lo[0], s.Hi[0], lo, hi)
	}
	// The same checkpoint with a box every context falls in, and with one
	// no context falls in (a job size of -1): the box the training run
	// recorded depends on which contexts its episodes met, so the test of
	// how drover eval applies a box uses boxes of its own.
	i := strings.Index(string(mb), `"support"`)
	j := strings.Index(string(mb), `"converged"`)
	if i < 0 || j < i {
		t.Fatalf("meta.json has no support before converged:\n%s", mb)
	}
	withBox := func(name, lo, hi string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		edited := string(mb[:i]) + `"support": {"lo": [` + lo + `], "hi": [` + hi + `]},` + "\n  " + string(mb[j:])
		if err := os.WriteFile(filepath.Join(d, checkpoints.MetaFile), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, checkpoints.WeightsFile), wb, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	box := func(v string) string { return strings.Repeat(v+", ", placement.JobFeatures-1) + v }
	inside := withBox("inside", box("-1e9"), box("1e9"))
	outside := withBox("outside", box("-1"), box("-1"))
	code, _, stderr := drover(t, "eval", "--quiet", "--workload", filepath.Join(dir, "tiny.csv"), "--profiles", "builtin", "--nodes", "16", "--gpus-per-node", "4",
		"--policies", "sas,"+inside+","+outside, "--seeds", "1", "--out", filepath.Join(dir, "eval"))
	if code != 0 {
		t.Fatalf("eval: exit %d\n%s", code, stderr)
	}
	sb, err := os.ReadFile(filepath.Join(dir, "eval", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []struct {
			Name   string `json:"name"`
			AvgTTA struct {
				Mean float64 `json:"mean"`
			} `json:"avg_tta_s"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(sb, &sum); err != nil {
		t.Fatal(err)
	}
	tta := map[string]float64{}
	for _, p := range sum.Policies {
		tta[p.Name] = p.AvgTTA.Mean
	}
	if len(tta) != 3 || tta["sas-rl@inside"] == tta["sas"] {
		t.Errorf("avg TTA %v: want the deviating checkpoint to differ from sas", tta)
	}
	if tta["sas-rl@outside"] != tta["sas"] {
		t.Errorf("avg TTA %v: want the checkpoint gated outside its support to replay sas", tta)
	}
}

// drover train --env strn-rl --algo bc trains the direct policy: a
// checkpoint policies/direct loads, with the learning curve absent (no
// RL) and the behaviour-cloning figures printed.
func TestTrainDirectCLI(t *testing.T) {
	out, stdout := strnBC(t)
	if !strings.Contains(stdout, "behaviour cloning:") || !strings.Contains(stdout, "checkpoint "+out) {
		t.Errorf("stdout:\n%s", stdout)
	}
	meta, mk, err := direct.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Env != "strn-rl" || meta.Algo != "bc" || meta.Converged || mk() == nil {
		t.Errorf("meta %+v", meta)
	}
}
