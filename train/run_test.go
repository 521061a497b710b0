package train

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/checkpoints"
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
	r, _ := newRun(t, Config{Env: "sas-rl", Algo: "bandit", Steps: 100, Seed: 1, Workers: -2})
	if _, err := r.Execute(); err == nil {
		t.Error("Workers -2 accepted")
	}
}
