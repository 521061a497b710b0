package train

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/train/runlog"
)

// newRun returns a run of cfg into a fresh directory, its report in the
// buffer, with PPO updates of 4 x 64 steps so that a smoke test of about
// 200 steps makes one.
func newRun(t *testing.T, cfg Config) (*Run, *bytes.Buffer) {
	t.Helper()
	r := NewRun(cfg)
	r.PPO.NumSteps = 64
	var out bytes.Buffer
	r.Dir, r.Out = filepath.Join(t.TempDir(), "run"), &out
	return r, &out
}

// heuristicTable is the start of each row of the placement and sync envs'
// final table: the learned policy's and each heuristic's.
var heuristicTable = []string{"\nlearned (ppo)  ", "\nfirst-fit  ", "\ntiresias  ", "\nstrn  ", "\nsas  "}

// Every environment trains for about 200 steps and leaves a run directory:
// the config, the logs and a checkpoint of the networks its algorithm
// saves, with the report naming the directory (and for placement and
// sync, the table of the learned policy against every heuristic).
func TestRunSmoke(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		networks []string
		report   string // a line the report holds
		table    []string
	}{
		{name: "cartpole ppo", cfg: Config{Env: "cartpole", Algo: "ppo", Steps: 256}, networks: []string{"actor", "critic"}, report: "the 475 target; CleanRL's ppo"},
		{name: "cartpole dqn", cfg: Config{Env: "cartpole", Algo: "dqn", Steps: 200}, networks: []string{"q"}, report: "the 475 target; CleanRL's dqn"},
		{name: "placement", cfg: Config{Env: "placement", Algo: "ppo", Steps: 256}, networks: []string{"actor", "critic"}, report: "gate vs first-fit", table: heuristicTable},
		{name: "sync", cfg: Config{Env: "sync", Algo: "ppo", Steps: 256}, networks: []string{"actor", "critic"}, report: "gate vs first-fit", table: heuristicTable},
		{name: "sas-rl bandit", cfg: Config{Env: "sas-rl", Algo: "bandit", Steps: 200}, networks: []string{"q"}, report: "no held-out evaluation (--eval-seeds 0): not converged"},
		{name: "strn-rl ppo", cfg: Config{Env: "strn-rl", Algo: "ppo", Steps: 256}, networks: []string{"actor", "critic"}, report: "PPO chooses among strn's candidates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Seed = 1
			r, out := newRun(t, tt.cfg)
			res, err := r.Execute()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.networks, res.Meta.Networks); diff != "" {
				t.Errorf("networks (-want,+got):\n%s", diff)
			}
			if m := res.Meta; m.Env != tt.cfg.Env || m.Algo != tt.cfg.Algo || m.Steps != tt.cfg.Steps || m.Seed != 1 {
				t.Errorf("meta says %s/%s, %d steps, seed %d; want %s/%s, %d, 1", m.Env, m.Algo, m.Steps, m.Seed, tt.cfg.Env, tt.cfg.Algo, tt.cfg.Steps)
			}
			for _, f := range []string{runlog.ConfigFile, runlog.CSVFile, checkpoints.MetaFile, checkpoints.WeightsFile} {
				if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
					t.Error(err)
				}
			}
			for _, want := range append([]string{"run " + r.Dir + "\n", tt.report, "checkpoint " + r.Dir + "\n", "logs " + r.Dir}, tt.table...) {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// A config the pipeline cannot run is an error: a value Validate refuses
// (the field named) or the wrong algorithm for an environment before
// anything is written, a workload setting that needs files (the cluster's
// node list) once the run has started.
func TestRunRejects(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
		written bool // whether the run directory exists by then
	}{
		{name: "unknown environment", cfg: Config{Env: "pong", Algo: "ppo"}, wantErr: "train.env: \"pong\""},
		{name: "bandit on cartpole", cfg: Config{Env: "cartpole", Algo: "bandit"}, wantErr: "train.algo: \"bandit\" with env cartpole"},
		{name: "dqn on sync", cfg: Config{Env: "sync", Algo: "dqn"}, wantErr: "train.algo: \"dqn\" with env sync"},
		{name: "dqn on sas-rl", cfg: Config{Env: "sas-rl", Algo: "dqn"}, wantErr: "trains with --algo ppo or bandit"},
		{name: "credit", cfg: Config{Env: "sas-rl", Algo: "bandit", Steps: 100, Credit: "nope"}, wantErr: "train.credit"},
		{name: "support", cfg: Config{Env: "sas-rl", Algo: "bandit", Steps: 100, Support: "box"}, wantErr: "train.support"},
		{name: "workers", cfg: Config{Env: "sas-rl", Algo: "bandit", Steps: 100, Workers: -2}, wantErr: "train.workers: -2"},
		{name: "split", cfg: Config{Env: "strn-rl", Algo: "bandit", Steps: 100, Workload: tinyTrace, Split: 1.5}, wantErr: "train.split"},
		{name: "cluster", cfg: Config{Env: "strn-rl", Algo: "ppo", Steps: 100, Cluster: "nowhere.csv"}, wantErr: "train.cluster", written: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRun(t, tt.cfg)
			_, err := r.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
			}
			if _, err := os.Stat(r.Dir); (err == nil) != tt.written {
				t.Errorf("run directory written: %v, want %v", err == nil, tt.written)
			}
		})
	}
}

// Config.Cluster trains a learned variant on a node list: a PAI-format
// list of eight nodes of two GPU types (24 GPUs), which the report names,
// with a tilted GPU mix at a given offered load (named too).
func TestTrainVariantOnNodeList(t *testing.T) {
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\n"
	for i := range 8 {
		typ, gpus := "V100M32", 4
		if i%2 == 1 {
			typ, gpus = "T4", 2
		}
		nodes += "node-" + string(rune('a'+i)) + ",96000,786432," + string(rune('0'+gpus)) + "," + typ + "\n"
	}
	list := filepath.Join(dir, "nodes.csv")
	if err := os.WriteFile(list, []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	r, out := newRun(t, Config{Env: "sas-rl", Algo: "bandit", Steps: 200, Seed: 1, Workload: "synthetic", Tilt: 1, OfferedLoad: 0.8, Cluster: list})
	if _, err := r.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "PAI node list "+list+": 8 nodes, 24 GPUs") || !strings.Contains(out.String(), "a uniform in [0, 1], offered load 0.8") {
		t.Errorf("report does not name the training cluster:\n%s", out)
	}
}

// The counterfactual replays run on Config.Workers environments at once;
// the checkpoint does not depend on how many. The tiny trace's six-job
// windows make 50 short episodes: the learner is fitted ten times, and
// decides from the sixth episode on.
func TestTrainBanditWorkers(t *testing.T) {
	var weights [][]byte
	for _, w := range []int{1, 3} {
		r, out := newRun(t, Config{Env: "sas-rl", Algo: "bandit", Steps: 300, Seed: 1, Workers: w, Workload: tinyTrace})
		if _, err := r.Execute(); err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		for _, want := range []string{"workers: " + string(rune('0'+w)) + "\n", "episode 50 (300 steps)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("workers %d: the report lacks %q:\n%s", w, want, out)
			}
		}
		b, err := os.ReadFile(filepath.Join(r.Dir, checkpoints.WeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		weights = append(weights, b)
	}
	if !bytes.Equal(weights[0], weights[1]) {
		t.Error("1 and 3 workers train different weights")
	}
}
