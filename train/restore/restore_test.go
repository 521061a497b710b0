package restore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/placement"
)

// TestPolicy: a sas-rl PPO checkpoint becomes the contender
// "sas-rl@DIR" whose every run gets a policy of its own; the placement
// env's checkpoint (the embedded default) is refused, since drover serve
// serves it; a directory without a checkpoint is the file's error.
func TestPolicy(t *testing.T) {
	dir := t.TempDir()
	obs := placement.CandidateObsDim(placement.DefaultCandidates, 10)
	actor := checkpoints.Build(obs, []int{8}, placement.DefaultCandidates, "tanh")
	critic := checkpoints.Build(obs, []int{8}, 1, "tanh")
	ck := filepath.Join(dir, "sasrl")
	meta := checkpoints.Meta{Env: "sas-rl", Algo: "ppo", ObsDim: obs, Actions: placement.DefaultCandidates, Hidden: []int{8},
		Activation: "tanh", Networks: []string{"actor", "critic"}}
	if err := checkpoints.Save(ck, meta, map[string]*nn.MLP{"actor": actor, "critic": critic}); err != nil {
		t.Fatal(err)
	}
	c, err := Policy(ck)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "sas-rl@sasrl" {
		t.Errorf("name %q, want sas-rl@sasrl", c.Name)
	}
	p1, err1 := c.New(1)
	p2, err2 := c.New(1)
	if err1 != nil || err2 != nil || p1 == nil || p1 == p2 {
		t.Errorf("New: %v %v, %p %p: want two policies", err1, err2, p1, p2)
	}

	def := filepath.Join(dir, "placement")
	if err := os.MkdirAll(def, 0o755); err != nil {
		t.Fatal(err)
	}
	m, w := checkpoints.DefaultFiles()
	os.WriteFile(filepath.Join(def, checkpoints.MetaFile), m, 0o644)
	os.WriteFile(filepath.Join(def, checkpoints.WeightsFile), w, 0o644)
	if _, err := Policy(def); err == nil || !strings.Contains(err.Error(), "served by drover serve") || !strings.HasPrefix(err.Error(), def+": ") {
		t.Errorf("placement checkpoint: %v, want a refusal naming the directory and drover serve", err)
	}
	if _, err := Policy(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no checkpoint: %v, want not found", err)
	}
}
