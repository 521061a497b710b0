package sched_test

import (
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/sched"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/cputime"
)

// BenchmarkStep measures the direct policies' scheduling decisions per
// second on 64 nodes x 4 GPUs (8 racks), the builtin workload, with the
// first valid action, for STRN-RL's encoding (grouping=rack) and SAS-RL's
// (grouping=load, PS rebalancing), under the job-level model and the
// per-worker one (with one env.Reference for every episode, as
// train/direct shares one). It reports steps per second of wall clock and
// of the process's CPU time (one core's rate with GOMAXPROCS=1):
//
//	GOMAXPROCS=1 taskset -c 1 go test ./env/sched -run '^$' -bench Step -cpu 1 -count 6 >new.txt
//	benchstat old.txt new.txt
func BenchmarkStep(b *testing.B) {
	const nodes = 64
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		b.Fatal(err)
	}
	ref, err := trace.Stragglers{}.NewReference(nodes)
	if err != nil {
		b.Fatal(err)
	}
	models := map[string]func(uint64) env.Model{
		"job": func(uint64) env.Model { return &env.Drover{Profiles: profiles} },
		"worker": func(seed uint64) env.Model {
			w, err := trace.Stragglers{Seed: seed, Reference: ref}.Workers(nodes)
			if err != nil {
				b.Fatal(err)
			}
			return &env.Drover{Profiles: profiles, Workers: w}
		},
	}
	encoders := []struct {
		name string
		cfg  sched.Config
	}{
		{"rack", sched.Config{Grouping: sched.GroupRack}},
		{"load", sched.Config{Grouping: sched.GroupLoad, PSRebalance: true}},
	}
	for _, enc := range encoders {
		for _, model := range []string{"job", "worker"} {
			b.Run("grouping="+enc.name+"/model="+model, func(b *testing.B) {
				e, err := sched.NewEnv(sched.EnvConfig{Encoder: enc.cfg, Jobs: trace.Specs(datasets.Builtin()),
					Cluster: env.Homogeneous(nodes, 4), NewModel: models[model], RestartDelay: env.DefaultRestartDelay})
				if err != nil {
					b.Fatal(err)
				}
				// One episode untimed first: the shared Reference then
				// knows the workload's factors, as in a run past its first
				// episode.
				var obs []float64
				var mask []bool
				for e.Reset(0); ; {
					mask = e.ActionMask(mask)
					var done bool
					if obs, _, done, _, _ = e.StepInto(obs, slices.Index(mask, true)); done {
						break
					}
				}
				e.Reset(1)
				steps, seed := 0, uint64(1)
				b.ReportAllocs()
				cpu0 := cputime.Seconds()
				for b.Loop() {
					mask = e.ActionMask(mask)
					var done bool
					obs, _, done, _, _ = e.StepInto(obs, slices.Index(mask, true))
					steps++
					if done {
						seed++
						e.Reset(seed)
					}
				}
				b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
				b.ReportMetric(float64(steps)/(cputime.Seconds()-cpu0), "steps/cpu-s")
			})
		}
	}
}
