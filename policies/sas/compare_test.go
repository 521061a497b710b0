package sas_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/firstfit"
	"github.com/drover-sched/drover/policies/sas"
	"github.com/drover-sched/drover/policies/tiresias"
)

// TestCompare replays the builtin workload (16 x 4 GPUs) and the Helios
// trace (22 x 8 GPUs) under the per-worker model with SAS, first-fit and
// Tiresias, under three background/jitter seeds, and prints their summaries. It is slow, so it runs only when
// SAS_COMPARE is set: SAS_COMPARE=1 go test -run Compare -v ./policies/sas/
func TestCompare(t *testing.T) {
	if os.Getenv("SAS_COMPARE") == "" {
		t.Skip("set SAS_COMPARE=1 to run")
	}
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	type workload struct {
		name        string
		w           *datasets.Workload
		nodes, gpus int
	}
	ws := []workload{{"builtin", datasets.Builtin(), 16, 4}}
	helios := filepath.Join("..", "..", "..", "shared", "traces", "helios", "helios_venus_2vc_sept.csv")
	if w, err := datasets.ReadFile(helios, datasets.FormatHelios, datasets.Options{}); err == nil {
		ws = append(ws, workload{"helios", w, 22, 8})
	} else {
		t.Logf("helios: %v", err)
	}
	factories := []struct {
		name string
		f    policies.Factory
	}{{sas.Name, sas.New}, {firstfit.Name, firstfit.New}, {tiresias.Name, tiresias.New}}
	for _, w := range ws {
		for _, seed := range []uint64{1, 2, 3} {
			for _, f := range factories {
				p, err := f.f(policies.Config{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				res, err := trace.Run(trace.Options{
					Workload: w.w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
					Nodes: w.nodes, GPUsPerNode: w.gpus, Interval: -1, RestartDelay: -1,
					Stragglers: &trace.Stragglers{Seed: seed},
				})
				if err != nil {
					t.Fatalf("%s/%s: %v", w.name, f.name, err)
				}
				s := res.Summary
				fmt.Printf("%-8s seed %d %-10s jobs %d/%d avgJCT %.0f s p50 %.0f p99 %.0f avgTTA %.0f s queue %.0f stragglerFrac %.4f GPUh %.1f (%.1fs)\n",
					w.name, seed, f.name, s.Finished, s.Jobs, s.AvgJCT, s.P50JCT, s.P99JCT, s.AvgTTA, s.AvgQueue, s.StragglerFrac, s.GPUHours, time.Since(start).Seconds())
			}
		}
	}
}
