package trace_test

import (
	"flag"
	"fmt"
	"sync"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/cputime"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

var (
	scaleMax   = flag.Int("scale.maxjobs", 100000, "BenchmarkScale: the largest job count to run (1000000 for the 1M-job cells)")
	scaleEager = flag.Bool("scale.eager", false, "BenchmarkScale: advance every running job at every event (env.Config's default) instead of lazily")
	scaleLoad  = flag.Float64("scale.load", datasets.DefaultScaleLoad, "BenchmarkScale: the workload's offered load on the cluster")
)

var scaleWorkloads sync.Map // "jobs/gpus/load" -> *datasets.Workload

// scaleWorkload returns the scaled synthetic workload of jobs jobs for a
// cluster of gpus GPUs (drover trace synth -jobs -nodes), generated once.
func scaleWorkload(b *testing.B, jobs, gpus int) *datasets.Workload {
	key := fmt.Sprint(jobs, "/", gpus, "/", *scaleLoad)
	if w, ok := scaleWorkloads.Load(key); ok {
		return w.(*datasets.Workload)
	}
	w := &datasets.Workload{Name: "scale", Format: datasets.FormatJobs, Jobs: make([]datasets.Job, 0, jobs)}
	if _, err := datasets.GenerateScaled(datasets.ScaleSpec{Jobs: jobs, GPUs: gpus, Load: *scaleLoad, Seed: datasets.DefaultSeed},
		func(js []datasets.Job) error { w.Jobs = append(w.Jobs, js...); return nil }, nil); err != nil {
		b.Fatal(err)
	}
	scaleWorkloads.Store(key, w)
	return w
}

// BenchmarkScale replays the scaled synthetic workload (drover trace synth
// -jobs J -nodes G/8, offered load 0.5) on G GPUs (8 per node), event
// driven, with the embedded profiles, under first-fit, Tiresias, STRN and
// SAS, with the job-level model (model=job) and the per-worker one
// (model=worker: the fitted background, the dedicated regime), running
// jobs advanced lazily (env.Config.LazyAdvance; -scale.eager for the
// default). It reports simulated events per second of wall time and CPU
// seconds per replay. Cells above -scale.maxjobs (100k) are skipped; pick
// cells with the sub-benchmark names, one process per cell for the peak
// RSS (scripts/scale.sh):
//
//	go test ./env/trace -run '^$' -bench 'Scale/jobs=100000/gpus=10000/first-fit/model=job' -benchtime 1x
func BenchmarkScale(b *testing.B) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		b.Fatal(err)
	}
	reg := builtin.Registry()
	for _, jobs := range []int{10000, 100000, 1000000} {
		for _, gpus := range []int{1000, 10000, 100000} {
			for _, policy := range []string{"first-fit", "tiresias", "strn", "sas"} {
				for _, model := range []string{"job", "worker"} {
					name := fmt.Sprintf("jobs=%d/gpus=%d/%s/model=%s", jobs, gpus, policy, model)
					b.Run(name, func(b *testing.B) {
						if jobs > *scaleMax {
							b.Skipf("%d jobs: above -scale.maxjobs %d", jobs, *scaleMax)
						}
						w := scaleWorkload(b, jobs, gpus)
						var st *trace.Stragglers
						if model == "worker" {
							st = &trace.Stragglers{Background: "builtin", Seed: 1}
						}
						events, decisions := 0, 0
						var sum float64
						cpu0 := cputime.Seconds()
						for b.Loop() {
							p, err := reg.New(policy, policies.Config{Seed: 1})
							if err != nil {
								b.Fatal(err)
							}
							res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
								Nodes: gpus / 8, GPUsPerNode: 8, Interval: 0, RestartDelay: -1, Stragglers: st, LazyAdvance: !*scaleEager})
							if err != nil {
								b.Fatal(err)
							}
							events += res.Sim.EventCount()
							decisions += res.Sim.DecisionPoints()
							sum = res.Summary.AvgQueue
						}
						b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
						b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N), "cpu-s/op")
						b.ReportMetric(float64(events)/float64(b.N), "events/op")
						b.ReportMetric(float64(decisions)/float64(b.N), "decisions/op")
						b.ReportMetric(sum, "avg-queue-s")
					})
				}
			}
		}
	}
}
