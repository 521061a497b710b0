package direct_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/policies/strn"
)

func replay(t *testing.T, p policies.Policy) env.Summary {
	t.Helper()
	prof, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trace.Run(trace.Options{Workload: datasets.Builtin(), Model: trace.ModelDrover, Profiles: prof, Policy: p,
		Nodes: 16, GPUsPerNode: 4, RestartDelay: -1, Stragglers: &trace.Stragglers{Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary
}

// TestTeacherIsTheHeuristic: recording a heuristic's decisions does not
// change them: the run is STRN's, bit for bit, and every job it starts
// is a sample whose action is valid.
func TestTeacherIsTheHeuristic(t *testing.T) {
	cfg, _ := direct.Config(direct.STRNRL, 8, false)
	s, _ := strn.New(policies.Config{})
	want := replay(t, s)
	var samples []direct.Sample
	s2, _ := strn.New(policies.Config{})
	got := replay(t, direct.Teacher(cfg, s2.(env.Proposer), nil, func(x direct.Sample) { samples = append(samples, x) }))
	if got != want {
		t.Errorf("teacher run %+v, want STRN's %+v", got, want)
	}
	if len(samples) != got.Finished {
		t.Errorf("%d samples of %d jobs started", len(samples), got.Finished)
	}
	for i, x := range samples {
		if !x.Mask[x.Action] {
			t.Fatalf("sample %d: the teacher's action %d is masked out", i, x.Action)
		}
	}
}

// TestCheckpointRoundTrip saves a direct policy's network and settings,
// loads them back, and checks the loaded policy decides as the original.
func TestCheckpointRoundTrip(t *testing.T) {
	cfg, _ := direct.Config(direct.SASRL, 6, true)
	enc, _ := sched.NewEncoder(cfg, &env.Cluster{Nodes: []env.Node{{GPUs: 4}}})
	a := ppo.NewAgent(enc.ObsDim(), enc.Actions(), []int{16}, rand.NewPCG(1, 2))
	m := checkpoints.Meta{Env: direct.SASRL, Algo: "bc", ObsDim: enc.ObsDim(), Actions: enc.Actions(), Hidden: []int{16},
		Activation: "tanh", Networks: []string{"actor", "critic"}, Hyperparams: map[string]float64{}}
	if err := direct.PutConfig(m.Hyperparams, cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := checkpoints.Save(dir, m, map[string]*nn.MLP{"actor": a.Actor, "critic": a.Critic}); err != nil {
		t.Fatal(err)
	}
	meta, mk, err := direct.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := direct.ConfigOf(meta)
	if err != nil {
		t.Fatal(err)
	}
	if got.Groups != 6 || got.Grouping != sched.GroupLoad || !got.Hold || !got.PSRebalance || len(got.Syncs) != len(sched.DefaultSyncs) || got.Syncs[3] != sched.DefaultSyncs[3] {
		t.Errorf("config read back %+v, want 6 load groups, hold, PS rebalance, the default syncs", got)
	}
	if s1, s2 := replay(t, direct.New(cfg, direct.Greedy(a.Actor))), replay(t, mk()); s1 != s2 {
		t.Errorf("loaded policy's run %+v, original's %+v", s2, s1)
	}
	// Not a direct checkpoint, and corrupt settings.
	m2 := m
	m2.Hyperparams = map[string]float64{}
	dir2 := t.TempDir()
	_ = checkpoints.Save(dir2, m2, map[string]*nn.MLP{"actor": a.Actor, "critic": a.Critic})
	if _, _, err := direct.Load(dir2); err == nil {
		t.Error("a checkpoint without the direct settings loaded")
	}
	m.Hyperparams["groups"] = 2.5
	dir3 := filepath.Join(t.TempDir(), "x")
	_ = os.MkdirAll(dir3, 0o755)
	_ = checkpoints.Save(dir3, m, map[string]*nn.MLP{"actor": a.Actor, "critic": a.Critic})
	if _, _, err := direct.Load(dir3); !errors.Is(err, checkpoints.ErrCorrupt) {
		t.Errorf("groups 2.5: error %v, want ErrCorrupt", err)
	}
}

// TestInvalidActionFallsBack: an actor that answers out of the mask gets
// the first valid action, and the count says so.
func TestInvalidActionFallsBack(t *testing.T) {
	cfg, _ := direct.Config(direct.STRNRL, 8, false)
	p := direct.New(cfg, func([]float64, []bool) int { return -5 })
	s := replay(t, p)
	decided, held, invalid := p.Counts()
	if decided != s.Finished || held != 0 || invalid != decided {
		t.Errorf("counts %d decided, %d held, %d invalid; %d jobs finished", decided, held, invalid, s.Finished)
	}
}
