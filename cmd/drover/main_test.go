package main

import (
	"bytes"

	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
)

// drover runs the command line args in process and returns its exit code
// and output. A place call that sets no -timeout gets testDeadline: place's default of
// 1 s can pass before a loaded machine under -race has answered.
func drover(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if len(args) > 0 && args[0] == "place" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "timeout") }) {
		args = append([]string{"place", "-timeout", testDeadline.String()}, args[1:]...)
	}
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestDefaultRunsBuiltin(t *testing.T) {
	code, out, errOut := drover(t)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"workload   builtin (400 jobs)", "finished   400/400 jobs", "avg JCT"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBadWorkloads(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hdr := "name,time,application,num_replicas,batch_size\n"
	tests := []struct {
		name, body string
		want       []string // in the error message
	}{
		{"malformed.csv", hdr + "a-0,10,cifar10,2,128\na-1,x,cifar10,2,128\n", []string{"malformed.csv:3", "time"}},
		{"unknown.csv", hdr + "a-0,10,gpt5,2,128\n", []string{"unknown.csv:2", "gpt5"}},
		{"zero.csv", hdr + "a-0,10,cifar10,0,128\n", []string{"zero.csv:2", "num_replicas"}},
		{"negative.csv", hdr + "a-0,-5,cifar10,2,128\n", []string{"negative.csv:2", "time"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(tt.name, tt.body)
			code, _, errOut := drover(t, "sim", "--quiet", "--workload", p, "--format", "pollux")
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q does not mention %q", errOut, w)
				}
			}
		})
	}
	// With --skip-bad the bad row is skipped and counted.
	p := write("mixed.csv", hdr+"a-0,10,cifar10,2,128\na-1,20,gpt5,2,128\n")
	code, out, errOut := drover(t, "sim", "--quiet", "--workload", p, "--format", "pollux", "--skip-bad", "--profiles", "builtin")
	if code != 0 {
		t.Fatalf("--skip-bad: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "1 jobs, 1 rows skipped: 1 ") {
		t.Errorf("--skip-bad output lacks the skip count:\n%s", out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"sim", "--no-such-flag"}, {"trace"}, {"trace", "inspect"}} {
		if code, _, _ := drover(t, args...); code != 2 {
			t.Errorf("drover %v: exit %d, want 2", args, code)
		}
	}
	if code, _, err := drover(t, "sim", "--quiet", "--policy", "nope"); code != 1 || !strings.Contains(err, "unknown policy") {
		t.Errorf("unknown policy: exit %d, %q", code, err)
	}
}

func TestTraceConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(dir, "b.parquet")
	if code, _, e := drover(t, "trace", "convert", "-o", pq, "builtin"); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, e)
	}
	code, out, e := drover(t, "trace", "inspect", pq)
	if code != 0 || !strings.Contains(out, "400") {
		t.Fatalf("inspect parquet: exit %d: %s%s", code, out, e)
	}
	// The builtin workload's text form regenerates byte for byte.
	code, synth, _ := drover(t, "trace", "synth")
	csv := filepath.Join(dir, "b.csv")
	if c, _, e := drover(t, "trace", "convert", "-o", csv, "builtin"); c != 0 || code != 0 {
		t.Fatalf("convert csv: exit %d: %s", c, e)
	}
	b, _ := os.ReadFile(csv)
	if string(b) != synth {
		t.Error("drover trace synth differs from the embedded builtin workload")
	}
}

// drover train --env cartpole trains PPO and DQN, reports the mean return
// and saves a checkpoint that loads. 1,024 steps: two PPO updates, DQN's
// rollouts (it starts learning at 10,000 steps); train's TestRunSmoke
// and the agents' tests check the learning.
func TestTrainCartPoleShort(t *testing.T) {
	for _, algo := range []string{"ppo", "dqn"} {
		dir := filepath.Join(t.TempDir(), "ckpt")
		code, out, errOut := drover(t, "train", "--env", "cartpole", "--algo", algo, "--steps", "1024", "--quiet", "--out", dir)
		if code != 0 || !strings.Contains(out, "mean return over the last") {
			t.Fatalf("%s: exit %d: %s%s", algo, code, out, errOut)
		}
		if _, _, err := checkpoints.Load(dir); err != nil {
			t.Errorf("%s: the written checkpoint does not load: %v", algo, err)
		}
	}
}

// drover train --env sync --steps trains the sync env's PPO, prints the
// table of it against the heuristics and saves its checkpoint. (train's
// TestRunSmoke checks the pipeline's table for placement and sync.)
func TestTrainPlacementShort(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	code, out, errOut := drover(t, "train", "--env", "sync", "--steps", "1024", "--quiet", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"learned (ppo)", "first-fit", "tiresias", "strn", "sas", "gate vs first-fit"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if m, _, err := checkpoints.Load(dir); err != nil || m.Env != "sync" {
		t.Errorf("checkpoint %+v: %v", m.Env, err)
	}
}
