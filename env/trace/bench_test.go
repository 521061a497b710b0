package trace_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/internal/cputime"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/firstfit"
)

var (
	phillyOnce sync.Once
	philly     *datasets.Workload
	phillyErr  error
)

// BenchmarkSim replays the whole Philly job list (82k jobs) under first-fit
// on 125 nodes x 8 GPUs, event-driven, with the embedded profiles: with the
// job-level drover model (model=job) and with the per-worker model
// (model=worker: fitted background load, the dedicated regime's jitter),
// and reports simulated events per second of wall time. Like the profiles,
// the dedicated regime's reference (a per-configuration precomputation:
// env.Reference's factors, which drover eval shares between its runs) is
// built once, before the timed replays; model=worker/cold builds it in
// every replay, as a lone drover sim does.
//
//	go test ./env/trace -run '^$' -bench Sim -count 6 | tee new.txt; benchstat new.txt
func BenchmarkSim(b *testing.B) {
	path := filepath.Join(tracesDir(b), "philly", "pollux_philly.csv.gz")
	phillyOnce.Do(func() { philly, phillyErr = datasets.ReadFile(path, datasets.FormatPhilly, datasets.Options{}) })
	if phillyErr != nil {
		b.Fatal(phillyErr)
	}
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		st    *trace.Stragglers
		nodes int
		cold  bool // build the reference in every replay
	}{
		{"model=job", nil, 125, false},
		{"model=worker", &trace.Stragglers{Background: "builtin", Seed: 1}, 125, false},
		// A cluster four times larger, where jobs hardly queue under
		// either model: the ratio of the two then shows the per-worker
		// model's own cost, without the longer queue it causes.
		{"model=job/nodes=500", nil, 500, false},
		{"model=worker/nodes=500", &trace.Stragglers{Background: "builtin", Seed: 1}, 500, false},
		{"model=worker/cold/nodes=500", &trace.Stragglers{Background: "builtin", Seed: 1}, 500, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			st := tt.st
			if st != nil && !tt.cold {
				// The regime Run resolves for a homogeneous cluster.
				shared := *st
				shared.Regime = trace.RegimeDedicated
				ref, err := shared.NewReference(tt.nodes)
				if err != nil {
					b.Fatal(err)
				}
				shared.Reference = ref
				st = &shared
				// Warm it: one replay outside the timing.
				p, _ := firstfit.New(policies.Config{})
				if _, err := trace.Run(trace.Options{Workload: philly, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
					Nodes: tt.nodes, GPUsPerNode: 8, Interval: 0, RestartDelay: -1, Stragglers: st}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			events := 0
			cpu0 := cputime.Seconds()
			for b.Loop() {
				p, _ := firstfit.New(policies.Config{})
				res, err := trace.Run(trace.Options{Workload: philly, Model: trace.ModelDrover, Profiles: profiles, Policy: p,
					Nodes: tt.nodes, GPUsPerNode: 8, Interval: 0, RestartDelay: -1, Stragglers: st})
				if err != nil {
					b.Fatal(err)
				}
				events += res.Sim.EventCount()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			// CPU seconds per op (user + system, every thread): on a shared
			// VM the wall time includes the time other tenants take (the
			// steal time), the CPU time much less of it.
			b.ReportMetric((cputime.Seconds()-cpu0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(philly.Jobs)), "jobs/op")
		})
	}
}
