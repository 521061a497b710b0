package runlog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/train/runlog"
)

// The main loop of a run: name it, save its config, log scalars, read
// them back.
func Example() {
	type trainConfig struct {
		Env   string
		Algo  string
		Seed  uint64
		Steps int
	}
	tr := trainConfig{Env: "cartpole", Algo: "ppo", Seed: 1, Steps: 500000}
	section := runlog.Section{Name: "train", Config: &tr}
	if err := runlog.OverlayConfig("run.yaml", []byte("train:\n  steps: 1024\n"), section); err != nil {
		fmt.Println(err)
		return
	}
	text, _ := runlog.RenderConfig(section)
	fmt.Print(string(text))

	base, _ := os.MkdirTemp("", "runlog")
	defer os.RemoveAll(base)
	start := time.Unix(1700000000, 0)
	name := runlog.RunName(tr.Env, tr.Algo, tr.Seed, start)
	fmt.Println(name)
	clock := func() time.Time { return start }
	lg, err := runlog.Open(filepath.Join(base, name), runlog.Options{Now: clock, Hostname: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for step := 512; step <= tr.Steps; step += 512 {
		lg.Scalar(runlog.TagEpisodicReturn, step, float64(step)/20)
	}
	if err := lg.Close(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(lg.EventPath()))
	b, _ := os.ReadFile(lg.EventPath())
	events, _ := runlog.DecodeEvents(b)
	for _, e := range events {
		fmt.Println(e.Step, e.FileVersion, e.Values)
	}
	// Output:
	// train:
	//   env: cartpole
	//   algo: ppo
	//   seed: 1
	//   steps: 1024
	// cartpole__ppo__1__1700000000
	// events.out.tfevents.1700000000.example
	// 0 brain.Event:2 []
	// 512  [{charts/episodic_return 25.6}]
	// 1024  [{charts/episodic_return 51.2}]
}

// A misspelt key is an error naming its place, not an ignored setting.
func ExampleOverlayConfig() {
	type ppoConfig struct {
		LR      float64
		NumEnvs int
	}
	cfg := ppoConfig{LR: 2.5e-4, NumEnvs: 4}
	err := runlog.OverlayConfig("run.yaml", []byte("ppo:\n  lr: 1e-3\n  num_env: 8\n"), runlog.Section{Name: "ppo", Config: &cfg})
	fmt.Println(err)
	fmt.Println(cfg.LR)
	// Output:
	// runlog: config: run.yaml:3:3: unknown key "ppo.num_env" (ppo has: lr, num_envs)
	// 0.00025
}
