package train

import (
	"errors"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/train/runlog"
)

// TestDecodeConfigRefuses reproduces issue 18's `drover train --config`
// cases: each is an error naming the file and the field, before any work,
// and r is left as it was.
func TestDecodeConfigRefuses(t *testing.T) {
	tests := []struct {
		name, yaml, key string
	}{
		{name: "ppo hidden zero", yaml: "ppo: {hidden: [0]}", key: "hidden"},
		{name: "ppo hidden negative", yaml: "ppo: {hidden: [-5]}", key: "hidden"},
		{name: "ppo hidden huge", yaml: "ppo: {hidden: [100000, 100000]}", key: "hidden"},
		{name: "dqn hidden zero", yaml: "train: {env: cartpole, algo: dqn}\ndqn: {hidden: [0]}", key: "hidden"},
		{name: "dqn hidden negative", yaml: "train: {env: cartpole, algo: dqn}\ndqn: {hidden: [-5]}", key: "hidden"},
		{name: "dqn hidden huge", yaml: "dqn: {hidden: [100000, 100000]}", key: "hidden"},
		{name: "steps zero", yaml: "train: {steps: 0}", key: "train.steps"},
		{name: "steps negative", yaml: "train: {steps: -3}", key: "train.steps"},
		{name: "nodes negative", yaml: "train: {nodes: -4}", key: "train.nodes"},
		{name: "eval seeds negative", yaml: "train: {eval_seeds: -1}", key: "train.eval_seeds"},
		{name: "gamma 2.5", yaml: "ppo: {gamma: 2.5}", key: "gamma"},
		{name: "dqn batch above buffer", yaml: "train: {env: cartpole, algo: dqn}\ndqn: {batch_size: 20000, buffer_size: 10000}", key: "batch_size"},
		{name: "unknown env", yaml: "train: {env: pong}", key: "train.env"},
		{name: "algo for env", yaml: "train: {env: placement, algo: dqn}", key: "train.algo"},
		{name: "split one", yaml: "train: {split: 1}", key: "train.split"},
		{name: "objective", yaml: "train: {objective: speed}", key: "train.objective"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRun(Config{Env: "placement", Algo: "ppo", Seed: 1, EvalSeeds: 5})
			before := *r
			err := DecodeConfig("bad.yaml", []byte(tt.yaml), r)
			if err == nil {
				t.Fatalf("DecodeConfig(%q) accepted it", tt.yaml)
			}
			if !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("error %q does not name the file bad.yaml and the field %s", err, tt.key)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			if r.Train != before.Train || len(r.PPO.Hidden) != len(before.PPO.Hidden) || r.PPO.Gamma != before.PPO.Gamma || r.DQN.BatchSize != before.DQN.BatchSize {
				t.Fatalf("a refused config changed the run")
			}
		})
	}
}

// TestDecodeConfigSteps checks that leaving train.steps out keeps the
// flag's value (0: the env's default) and that a given value is kept.
func TestDecodeConfigSteps(t *testing.T) {
	r := NewRun(Config{Env: "cartpole", Algo: "ppo", Steps: 0})
	if err := DecodeConfig("a.yaml", []byte("train: {seed: 3}"), r); err != nil || r.Train.Steps != 0 || r.Train.Seed != 3 {
		t.Fatalf("no steps key: steps %d seed %d err %v; want 0, 3, nil", r.Train.Steps, r.Train.Seed, err)
	}
	if err := DecodeConfig("a.yaml", []byte("train: {steps: 512}"), r); err != nil || r.Train.Steps != 512 {
		t.Fatalf("steps 512: got %d, %v", r.Train.Steps, err)
	}
}

// TestValidateLibrary checks Run.Validate for a library user who sets the
// configs directly rather than through a file.
func TestValidateLibrary(t *testing.T) {
	r := NewRun(Config{Env: "cartpole", Algo: "dqn"})
	r.DQN.Hidden = []int{-5}
	if err := r.Validate(); !errors.Is(err, nn.ErrSize) {
		t.Fatalf("Validate() = %v, want nn.ErrSize", err)
	}
	if _, err := r.Execute(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Execute() = %v, want ErrInvalidConfig", err)
	}
}

// FuzzTrainConfig checks that no YAML makes DecodeConfig panic, that an
// error leaves the run as it was and wraps runlog.ErrConfig (the file
// does not parse) or ErrInvalidConfig (it names bad values), and that
// what it accepts validates and renders back to a config it accepts.
func FuzzTrainConfig(f *testing.F) {
	f.Add([]byte("train: {env: cartpole, algo: dqn, steps: 1000}\ndqn: {batch_size: 32}\n"))
	f.Add([]byte("ppo: {hidden: [0]}"))
	f.Add([]byte("ppo: {hidden: [-5]}"))
	f.Add([]byte("ppo: {hidden: [100000, 100000]}"))
	f.Add([]byte("train: {steps: 0}"))
	f.Add([]byte("train: {steps: -9223372036854775808}"))
	f.Add([]byte("train: {nodes: -1, eval_seeds: -1}"))
	f.Add([]byte("ppo: {gamma: 2.5}"))
	f.Add([]byte("dqn: {batch_size: 20000}"))
	f.Add([]byte("train: {env: sas-rl, algo: bandit, heads: 5, lower_z: 1, support: job, split: 0.3}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewRun(Config{Env: "placement", Algo: "ppo", Seed: 1, EvalSeeds: 5})
		before := r.Train
		err := DecodeConfig("fuzz.yaml", data, r)
		if err != nil {
			if !errors.Is(err, runlog.ErrConfig) && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("error %v wraps neither runlog.ErrConfig nor ErrInvalidConfig", err)
			}
			if r.Train != before {
				t.Fatalf("a refused config changed the run")
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("DecodeConfig accepted a config that does not validate: %v", err)
		}
		text, err := runlog.RenderConfig(r.Sections()...)
		if err != nil {
			t.Fatalf("render the accepted config: %v", err)
		}
		again := NewRun(Config{})
		if err := DecodeConfig("rendered.yaml", text, again); err != nil && r.Train.Steps != 0 {
			t.Fatalf("the accepted config rendered does not decode: %v\n%s", err, text)
		}
	})
}

// TestVariantClusterTooSmall: strn-rl and sas-rl on a cluster smaller than
// the built-in workload's largest job are refused before training, naming
// the fields (the placement environment panicked at its first reset:
// "job yolov3-174 asks for 16 GPUs, the cluster has 8"); on 24 GPUs, the
// largest job's, they build.
func TestVariantClusterTooSmall(t *testing.T) {
	for _, env := range []string{"strn-rl", "sas-rl"} {
		for _, algo := range []string{"bandit", "rerank-ppo"} {
			r := NewRun(Config{Env: env, Algo: algo, Seed: 1, Steps: 10, Nodes: 4, GPUsPerNode: 2})
			newProp, err := Proposer(variantHeuristic[env])
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, _, err = variantConfig(r, newProp)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "train.gpus_per_node") || !strings.Contains(err.Error(), "asks for 24") {
				t.Errorf("%s %s on 4 x 2 GPUs: %v, want an invalid config naming train.gpus_per_node and the 24-GPU job", env, algo, err)
			}
			r = NewRun(Config{Env: env, Algo: algo, Seed: 1, Steps: 10, Nodes: 6, GPUsPerNode: 4})
			if _, _, _, _, err := variantConfig(r, newProp); err != nil {
				t.Errorf("%s %s on 6 x 4 GPUs: %v", env, algo, err)
			}
		}
	}
}
