package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/policies/direct"
)

// writeServedLog writes a decision log of 40 jobs of the built-in models
// to dir with declog's Writer: job i arrives 45 s after job i-1, asks for
// 1 + i%4 GPUs, and reports started then finished 300 + 20i s later.
func writeServedLog(t *testing.T, dir string) {
	t.Helper()
	w, err := declog.NewWriter(dir, declog.WithMaxRecords(50))
	if err != nil {
		t.Fatal(err)
	}
	models := []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for i := range 40 {
		arrive := t0.Add(time.Duration(45*i) * time.Second)
		id := fmt.Sprintf("job-%d", i)
		d := declog.Decision{Time: arrive, RequestID: "req-" + id, JobID: id, Source: "heuristic:strn", Sync: "bsp",
			JobModel: models[i%6], JobGPUs: 1 + i%4, JobArch: "ring", JobExpectedDuration: 1800}
		for k := range d.JobGPUs {
			d.Workers = append(d.Workers, fmt.Sprintf("n%d", (i+k)%16))
		}
		start := arrive.Add(3 * time.Second)
		if err := w.Append(d.Record(),
			declog.Outcome{Time: start, RequestID: d.RequestID, JobID: id, Kind: declog.Started}.Record(),
			declog.Outcome{Time: start.Add(time.Duration(300+20*i) * time.Second), RequestID: d.RequestID, JobID: id, Kind: declog.Finished, JCT: float64(303 + 20*i)}.Record(),
		); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// drover train --from-log fine-tunes a small strn-rl checkpoint on a
// served log: it says what it replays and what it cannot learn from,
// judges the result against the init checkpoint and the heuristic, and
// writes a checkpoint direct.Load reads, with the init's shape, the
// judgement in meta.Eval and the actor moved from the init's.
func TestTrainFromLogCLI(t *testing.T) {
	tmp := t.TempDir()
	logDir, out := filepath.Join(tmp, "log"), filepath.Join(tmp, "tuned")
	initDir, _ := strnBC(t)
	writeServedLog(t, logDir)
	code, stdout, stderr := drover(t, "train", "--env", "strn-rl", "--algo", "bc", "--from-log", logDir, "--init", initDir, "--eval-seeds", "1", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		// 40 decisions, 80 outcomes in 120 records, files of 50: 3 files.
		"40 decisions, 80 outcomes of 40 jobs in 3 files: 40 jobs replayed over 1755 s (run time from outcomes 40, reported JCT 0, expected 0)",
		"not from the node loads", "starting from " + initDir,
		"gate on the log's replays, strn-rl vs init", "gate on the log's replays, strn-rl vs strn",
		"not marked converged", "checkpoint " + out,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	meta, mk, err := direct.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	im, inets, err := checkpoints.Load(initDir)
	if err != nil {
		t.Fatal(err)
	}
	_, nets, err := checkpoints.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Env != "strn-rl" || meta.Converged || mk() == nil || !slices.Equal(meta.Hidden, im.Hidden) || meta.ObsDim != im.ObsDim || meta.Actions != im.Actions {
		t.Errorf("meta %+v, init %+v", meta, im)
	}
	for _, k := range []string{"avg_tta_log_strn-rl", "avg_tta_log_init", "avg_tta_log_strn", "gate_log_vs_init_mean_gain", "gate_log_vs_strn_lower"} {
		if _, ok := meta.Eval[k]; !ok {
			t.Errorf("meta.Eval lacks %s: %v", k, meta.Eval)
		}
	}
	if meta.Hyperparams["log_jobs"] != 40 || meta.Hyperparams["init"] != 1 {
		t.Errorf("hyperparams %v", meta.Hyperparams)
	}
	if slices.Equal(nets["actor"].Params()[0].Value, inets["actor"].Params()[0].Value) {
		t.Error("the fine-tuned actor's first layer equals the init's")
	}
}

// drover train refuses --from-log and its flags where they do not apply,
// and an init checkpoint of the other policy.
func TestTrainFromLogRefused(t *testing.T) {
	tmp := t.TempDir()
	logDir := filepath.Join(tmp, "log")
	initDir, _ := strnBC(t)
	writeServedLog(t, logDir)
	corrupt := filepath.Join(tmp, "corrupt")
	bad := filepath.Join(corrupt, declog.FileName(1))
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("PAR1 not parquet PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"placement", []string{"--env", "placement", "--from-log", logDir}, "--from-log trains a direct policy"},
		{"bandit", []string{"--env", "sas-rl", "--algo", "bandit", "--from-log", logDir}, "--from-log trains a direct policy"},
		{"init alone", []string{"--env", "strn-rl", "--algo", "bc", "--init", initDir}, "--init goes with --from-log"},
		{"cluster alone", []string{"--env", "strn-rl", "--algo", "bc", "--cluster", "pai"}, "--cluster goes with --from-log"},
		{"other policy", []string{"--env", "sas-rl", "--algo", "bc", "--from-log", logDir, "--init", initDir}, "init checkpoint is of strn-rl, training sas-rl"},
		{"dqn from actor", []string{"--env", "strn-rl", "--algo", "dqn", "--from-log", logDir, "--init", initDir}, "DQN does not start from an actor"},
		{"missing log", []string{"--env", "strn-rl", "--algo", "bc", "--from-log", filepath.Join(tmp, "nope")}, "nope"},
		{"corrupt log", []string{"--env", "strn-rl", "--algo", "bc", "--from-log", corrupt}, bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"train", "--quiet", "--eval-seeds", "0", "--out", filepath.Join(tmp, "x-"+tt.name)}, tt.args...)
			code, _, stderr := drover(t, args...)
			if code == 0 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q: want an error saying %q", code, stderr, tt.want)
			}
		})
	}
}
