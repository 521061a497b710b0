package sas_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/sas"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// TestCompareForecaster replays the built-in workload (16 x 4 GPUs) and
// the Helios trace (22 x 8 GPUs) under the per-worker model, as drover
// eval does by default (builtin background, jitter, restart delay 30 s,
// straggler threshold 0.2), with SAS forecasting by the learned model
// (forecast.Default, SAS's default) and by the empirical window
// (Forecaster nil), over seeds 1-20, and prints each variant's means and
// the learned one's paired relative difference: the mean ratio minus 1
// and the geometric mean ratio minus 1, each with its 95% t-interval.
// The learned variant's runs are drover eval --policies sas's. It is slow,
// so it runs only when SAS_FORECAST_COMPARE is set:
//
//	SAS_FORECAST_COMPARE=1 go test -run CompareForecaster -v ./policies/sas/
//
// SAS_FORECAST_COMPARE=replay replays the v2018 machine usage as the
// background instead (drover eval --background FILE), and
// SAS_FORECAST_SEEDS=N runs seeds 1-N.
func TestCompareForecaster(t *testing.T) {
	mode := os.Getenv("SAS_FORECAST_COMPARE")
	if mode == "" {
		t.Skip("set SAS_FORECAST_COMPARE=1 (or replay) to run")
	}
	traces := filepath.Join("..", "..", "..", "shared", "traces")
	background := "builtin"
	if mode == "replay" {
		background = filepath.Join(traces, "alibaba_v2018", "machine_usage.csv.gz")
	}
	type workload struct {
		name, path  string
		w           *datasets.Workload
		nodes, gpus int
	}
	ws := []workload{{"builtin", "builtin", datasets.Builtin(), 16, 4}}
	helios := filepath.Join(traces, "helios", "helios_venus_2vc_sept.csv")
	if w, err := datasets.ReadFile(helios, datasets.FormatHelios, datasets.Options{}); err == nil {
		ws = append(ws, workload{"helios", helios, w, 22, 8})
	} else {
		t.Logf("helios: %v", err)
	}
	variants := []struct {
		name string
		f    *forecast.Model
	}{{"learned", forecast.Default()}, {"window", nil}}
	metrics := []struct {
		name string
		of   func(env.Summary) float64
	}{
		{"avg JCT", func(s env.Summary) float64 { return s.AvgJCT }},
		{"avg TTA", func(s env.Summary) float64 { return s.AvgTTA }},
		{"straggler frac", func(s env.Summary) float64 { return s.StragglerFrac }},
	}
	seeds := 20
	if v := os.Getenv("SAS_FORECAST_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			t.Fatalf("SAS_FORECAST_SEEDS=%q: want a number of seeds, at least 2", v)
		}
		seeds = n
	}
	for _, w := range ws {
		profiles, _, err := trace.Profiles("", w.path)
		if err != nil {
			t.Fatal(err)
		}
		// runs[v][m][seed]
		runs := make([][][]float64, len(variants))
		for v, vr := range variants {
			runs[v] = make([][]float64, len(metrics))
			for seed := range uint64(seeds) {
				seed++
				p, err := sas.New(policies.Config{Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				p.(*sas.SAS).Forecaster = vr.f
				res, err := trace.Run(trace.Options{
					Workload: w.w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
					Nodes: w.nodes, GPUsPerNode: w.gpus, Interval: -1, RestartDelay: 30,
					Stragglers: &trace.Stragglers{Background: background, Load: 1, Seed: seed, Threshold: 0.2, Mitigation: "none"},
				})
				if err != nil {
					t.Fatalf("%s/%s seed %d: %v", w.name, vr.name, seed, err)
				}
				for m, mt := range metrics {
					runs[v][m] = append(runs[v][m], mt.of(res.Summary))
				}
			}
		}
		tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(seeds - 1)}.Quantile(0.975)
		for m, mt := range metrics {
			// The mean of the paired ratios minus 1, as drover eval
			// reports it, and, less swayed by the seeds whose queues
			// blow up, the geometric mean (the mean log ratio) and the
			// seeds where the learned variant is lower.
			rel := make([]float64, seeds)
			logs := make([]float64, seeds)
			wins := 0
			for i := range rel {
				rel[i] = runs[0][m][i]/runs[1][m][i] - 1
				logs[i] = math.Log(runs[0][m][i] / runs[1][m][i])
				if runs[0][m][i] < runs[1][m][i] {
					wins++
				}
			}
			mean, sd := stat.MeanStdDev(rel, nil)
			lmean, lsd := stat.MeanStdDev(logs, nil)
			half := tq / math.Sqrt(float64(seeds))
			fmt.Printf("%-8s %-14s learned %.4g  window %.4g  learned/window-1: mean %+.1f ± %.1f%%, geometric %+.1f%% [%+.1f, %+.1f], lower on %d of %d seeds\n",
				w.name, mt.name, stat.Mean(runs[0][m], nil), stat.Mean(runs[1][m], nil), 100*mean, 100*half*sd,
				100*math.Expm1(lmean), 100*math.Expm1(lmean-half*lsd), 100*math.Expm1(lmean+half*lsd), wins, seeds)
		}
	}
}
