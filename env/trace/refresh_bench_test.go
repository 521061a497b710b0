package trace_test

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
)

// BenchmarkRefresh measures one per-worker refresh of a running job (the
// calibrated jitter, the builtin background, burst noise) on a job of w
// workers, packed 8 to a node or spread one to a node: the unit of the
// per-worker model's extra cost in BenchmarkSim.
func BenchmarkRefresh(b *testing.B) {
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		w      int
		spread bool
	}{{1, false}, {8, false}, {16, true}, {32, false}} {
		b.Run(fmt.Sprintf("w=%d/spread=%v", tt.w, tt.spread), func(b *testing.B) {
			wk, err := trace.Stragglers{Background: "builtin", Seed: 1}.Workers(64)
			if err != nil {
				b.Fatal(err)
			}
			m := &env.Drover{Profiles: profiles, GPUsPerNode: 8, Workers: wk}
			c := env.Cluster{Nodes: make([]env.Node, 64)}
			for i := range c.Nodes {
				c.Nodes[i] = env.Node{GPUs: 8, Speed: 1}
			}
			s, err := env.New(env.Config{Cluster: c, Model: m}, []env.JobSpec{{Name: "j", GPUs: tt.w, Model: "imagenet", Duration: 1e9}})
			if err != nil {
				b.Fatal(err)
			}
			v, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			var nodes []int
			for i := range tt.w {
				if tt.spread {
					nodes = append(nodes, i)
				} else {
					nodes = append(nodes, i/8)
				}
			}
			if err := s.Apply([]env.Decision{{Job: v.Active[0].ID, Nodes: nodes}}); err != nil {
				b.Fatal(err)
			}
			j := &s.Jobs()[0]
			now := 0.0
			for b.Loop() {
				now += env.DefaultWorkerPeriod
				m.Refresh(j, &c, now)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tt.w), "ns/worker")
		})
	}
}
