package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/agents/dqn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
)

func TestSnakeCase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Seed", "seed"},
		{"TotalSteps", "total_steps"},
		{"LR", "lr"},
		{"AnnealLR", "anneal_lr"},
		{"NumEnvs", "num_envs"},
		{"NumMinibatches", "num_minibatches"},
		{"MaxGradNorm", "max_grad_norm"},
		{"EntCoef", "ent_coef"},
		{"StartE", "start_e"},
		{"EndE", "end_e"},
		{"ExplorationFraction", "exploration_fraction"},
		{"HTTPServer", "http_server"},
		{"GPUsPerNode", "gpus_per_node"},
		{"NumGPUs", "num_gpus"},
		{"IDs", "ids"},
		{"AvgJCT", "avg_jct"},
		{"IntraRackGbps", "intra_rack_gbps"},
		{"Hidden2", "hidden2"},
		{"Layer2Width", "layer2_width"},
		{"X", "x"},
	}
	for _, tt := range tests {
		if got := SnakeCase(tt.in); got != tt.want {
			t.Errorf("SnakeCase(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// trainSection is the kind of struct `drover train` keeps for its own
// settings.
type trainSection struct {
	Env      string
	Algo     string
	Steps    int
	Seed     uint64
	Out      string `yaml:"out_dir"`
	Eval     time.Duration
	Seeds    []uint64
	internal int      //nolint:unused // unexported: left out
	Skip     string   `yaml:"-"`
	Hook     func()   // a func: left out
	Extra    struct { // a nested mapping
		Plot bool
	}
}

func configs() (*ppo.Config, *dqn.Config, *trainSection, []Section) {
	p, d := ppo.DefaultConfig(), dqn.DefaultConfig()
	tr := &trainSection{Env: "cartpole", Algo: "ppo", Steps: 500000, Seed: 1, Eval: time.Minute}
	return &p, &d, tr, []Section{{"train", tr}, {"ppo", &p}, {"dqn", &d}}
}

func TestOverlayConfig(t *testing.T) {
	p, d, tr, sections := configs()
	const text = `# a run's config
train:
  steps: 100000
  seed: 7
  out_dir: runs/x
  eval: 90s
  seeds: [1001, 1002]
  extra: {plot: true}
ppo:
  lr: 3.0e-4
  anneal_lr: false
  gamma: 0.995
  hidden: [128, 1.28e2]
  num_envs: 8
  total_steps: 1e6
dqn:
  double: true
  start_e: 0.5
`
	if err := OverlayConfig("cfg.yaml", []byte(text), sections...); err != nil {
		t.Fatal(err)
	}
	wantP := ppo.DefaultConfig()
	wantP.LR, wantP.AnnealLR, wantP.Gamma, wantP.Hidden, wantP.NumEnvs = 3e-4, false, 0.995, []int{128, 128}, 8
	wantP.TotalSteps = 1000000 // a float without a fraction sets an int
	wantD := dqn.DefaultConfig()
	wantD.Double, wantD.StartE = true, 0.5
	wantT := trainSection{Env: "cartpole", Algo: "ppo", Steps: 100000, Seed: 7, Out: "runs/x", Eval: 90 * time.Second, Seeds: []uint64{1001, 1002}}
	wantT.Extra.Plot = true
	opt := cmpopts.IgnoreFields(trainSection{}, "Hook")
	if diff := cmp.Diff(wantT, *tr, opt, cmp.AllowUnexported(trainSection{})); diff != "" {
		t.Errorf("train (-want,+got)\n%s", diff)
	}
	if diff := cmp.Diff(wantP, *p); diff != "" {
		t.Errorf("ppo (-want,+got)\n%s", diff)
	}
	if diff := cmp.Diff(wantD, *d); diff != "" {
		t.Errorf("dqn (-want,+got)\n%s", diff)
	}
}

func TestOverlayConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // in the error
	}{
		{"unknown key", "ppo:\n  lr: 1e-3\n  lrr: 1e-3\n", `cfg.yaml:3:3: unknown key "ppo.lrr" (ppo has: seed, total_steps, lr, anneal_lr,`},
		{"unknown section", "ppo:\n  lr: 1e-3\nsac:\n  tau: 1\n", `cfg.yaml:3:1: unknown section "sac" (the document has: train, ppo, dqn)`},
		{"unknown nested key", "train:\n  extra:\n    plot: true\n    plots: 3\n", `cfg.yaml:4:5: unknown key "train.extra.plots"`},
		{"Go field name", "ppo:\n  NumEnvs: 8\n", `cfg.yaml:2:3: unknown key "ppo.NumEnvs"`},
		{"left-out field", "train:\n  hook: 1\n", `cfg.yaml:2:3: unknown key "train.hook"`},
		{"yaml:- field", "train:\n  skip: x\n", `cfg.yaml:2:3: unknown key "train.skip"`},
		{"twice", "ppo:\n  lr: 1\n  gamma: 0.9\n  lr: 2\n", `cfg.yaml:4:3: key "ppo.lr" given twice (first at line 2)`},
		{"null", "ppo:\n  lr:\n", `cfg.yaml:2:6: key "ppo.lr" has no value`},
		{"wrong type", "ppo:\n  num_envs: four\n", "cfg.yaml:2:13: ppo.num_envs: cannot unmarshal !!str `four` into int"},
		{"fraction into int", "ppo:\n  total_steps: 2.5\n", "cfg.yaml:2:16: ppo.total_steps: 2.5 is not a whole number, want int"},
		{"fraction in list", "ppo:\n  hidden: [64, 6.4e1, 0.5]\n", "cfg.yaml:2:23: ppo.hidden[2]: 0.5 is not a whole number, want int"},
		{"negative seed", "train:\n  seed: -1\n", "cfg.yaml:2:9: train.seed: cannot unmarshal !!int `-1` into uint64"},
		{"bad duration", "train:\n  eval: soon\n", "cfg.yaml:2:9: train.eval"},
		{"scalar for list", "ppo:\n  hidden: 64\n", "cfg.yaml:2:11: ppo.hidden"},
		{"section not a mapping", "ppo: 3\n", `cfg.yaml:1:6: ppo must be a mapping`},
		{"document not a mapping", "- ppo\n", `cfg.yaml:1:1: the document must be a mapping`},
		{"two documents", "ppo:\n  lr: 1\n---\ndqn:\n  lr: 1\n", "cfg.yaml:3: a second YAML document"},
		{"syntax", "ppo:\n  lr: 1\n gamma: 2\n", "cfg.yaml:2: did not find expected key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, d, tr, sections := configs()
			p0, d0, tr0 := *p, *d, *tr
			err := OverlayConfig("cfg.yaml", []byte(tt.text), sections...)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v, want ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, tt.want)
			}
			// Nothing changed, even where the document set a key
			// before the bad one.
			if !cmp.Equal(p0, *p) || !cmp.Equal(d0, *d) || !cmp.Equal(tr0, *tr, cmpopts.IgnoreFields(trainSection{}, "Hook"), cmp.AllowUnexported(trainSection{})) {
				t.Errorf("a failed overlay changed the configs")
			}
		})
	}
}

func TestOverlayConfigEmpty(t *testing.T) {
	for _, text := range []string{"", "# nothing\n", "---\n", "null\n"} {
		p, _, _, sections := configs()
		if err := OverlayConfig("cfg.yaml", []byte(text), sections...); err != nil {
			t.Errorf("%q: %v", text, err)
		}
		if !cmp.Equal(*p, ppo.DefaultConfig()) {
			t.Errorf("%q changed the config", text)
		}
	}
}

func TestConfigProgrammerErrors(t *testing.T) {
	type dup struct {
		NumEnvs int
		Envs    int `yaml:"num_envs"`
	}
	var p ppo.Config
	tests := []struct {
		name     string
		sections []Section
	}{
		{"not a pointer", []Section{{"ppo", ppo.DefaultConfig()}}},
		{"nil", []Section{{"ppo", (*ppo.Config)(nil)}}},
		{"same name", []Section{{"ppo", &p}, {"ppo", &p}}},
		{"same key", []Section{{"dup", &dup{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(r.(string), "runlog: ") {
					t.Errorf("panic %v, want one naming runlog", r)
				}
			}()
			OverlayConfig("cfg.yaml", nil, tt.sections...)
		})
	}
}

func TestRenderConfig(t *testing.T) {
	tr := &trainSection{Env: "placement", Algo: "ppo", Steps: 100000, Seed: 1, Out: "runs/a b", Eval: 90 * time.Second, Seeds: []uint64{1001, 1002}}
	p := ppo.Config{LR: 2.5e-4, Gamma: 0.99, Hidden: []int{64, 64}, AnnealLR: true}
	got, err := RenderConfig(Section{"train", tr}, Section{"ppo", &p})
	if err != nil {
		t.Fatal(err)
	}
	// The text follows Section's mapping: keys in declaration order, the
	// float32 0.99 in its shortest float32 form.
	want := `train:
  env: placement
  algo: ppo
  steps: 100000
  seed: 1
  out_dir: runs/a b
  eval: 1m30s
  seeds: [1001, 1002]
  extra:
    plot: false
ppo:
  seed: 0
  total_steps: 0
  lr: 0.00025
  anneal_lr: true
  num_envs: 0
  num_steps: 0
  gamma: 0.99
  lambda: 0
  num_minibatches: 0
  update_epochs: 0
  norm_adv: false
  clip: 0
  ent_coef: 0
  vf_coef: 0
  max_grad_norm: 0
  hidden: [64, 64]
  parallel: false
  action_prior: []
  critic_warmup: 0
  backend: ""
  device: ""
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
}

// TestRenderRoundTrip renders the real configs (the agents' defaults and
// the placement environment's) and overlays the text onto zero values:
// every field comes back.
func TestRenderRoundTrip(t *testing.T) {
	p, d := ppo.DefaultConfig(), dqn.DefaultConfig()
	p.Gamma, d.LR = 0.1+0.2, 1.0/3
	e := placement.Config{Cluster: env.Homogeneous(16, 4), RestartDelay: env.DefaultRestartDelay, StragglerWeight: 0.25, Sync: true}
	tr := trainSection{Env: "sync", Seeds: []uint64{1, 2}, Eval: time.Millisecond}
	text, err := RenderConfig(Section{"train", &tr}, Section{"ppo", &p}, Section{"dqn", &d}, Section{"env", &e})
	if err != nil {
		t.Fatal(err)
	}
	var p2 ppo.Config
	var d2 dqn.Config
	var e2 placement.Config
	var tr2 trainSection
	if err := OverlayConfig("config.yaml", text, Section{"train", &tr2}, Section{"ppo", &p2}, Section{"dqn", &d2}, Section{"env", &e2}); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if diff := cmp.Diff(p, p2); diff != "" {
		t.Errorf("ppo (-want,+got)\n%s", diff)
	}
	if diff := cmp.Diff(d, d2); diff != "" {
		t.Errorf("dqn (-want,+got)\n%s", diff)
	}
	if diff := cmp.Diff(tr, tr2, cmpopts.IgnoreFields(trainSection{}, "Hook"), cmp.AllowUnexported(trainSection{})); diff != "" {
		t.Errorf("train (-want,+got)\n%s", diff)
	}
	// The placement config's Jobs, Cluster.Nodes and NewModel are left out
	// (a slice of structs, a func); the rest comes back.
	e.Cluster.Nodes = nil
	if diff := cmp.Diff(e, e2, cmpopts.IgnoreFields(placement.Config{}, "NewModel")); diff != "" {
		t.Errorf("env (-want,+got)\n%s", diff)
	}
	if strings.Contains(string(text), "nodes") || strings.Contains(string(text), "new_model") {
		t.Errorf("left-out fields rendered:\n%s", text)
	}
}

func TestLoadWriteConfig(t *testing.T) {
	dir := t.TempDir()
	p := ppo.DefaultConfig()
	p.NumEnvs = 16
	if err := WriteConfig(dir, Section{"ppo", &p}); err != nil {
		t.Fatal(err)
	}
	var got ppo.Config
	if err := LoadConfig(filepath.Join(dir, ConfigFile), Section{"ppo", &got}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want config.yaml alone", len(entries))
	}
	if err := LoadConfig(filepath.Join(dir, "missing.yaml"), Section{"ppo", &got}); !errors.Is(err, ErrConfig) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
