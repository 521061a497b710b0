package sas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// BenchmarkPredictorForecast measures a sample of every node and then each
// node's Forecast (what SAS's regrouping reads), with the learned model
// and with the window, on full rings of random loads.
//
//	go test -run '^$' -bench PredictorForecast -count 10 ./policies/sas/ | benchstat -
func BenchmarkPredictorForecast(b *testing.B) {
	const nodes = 256
	for _, c := range []struct {
		name string
		m    *forecast.Model
	}{{"learned", forecast.Default()}, {"window", nil}} {
		b.Run(fmt.Sprintf("%s/nodes=%d", c.name, nodes), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			p := NewPredictor(nodes, DefaultHistory, DefaultSamplePeriod)
			p.Model = c.m
			loads := make([]env.Usage, nodes)
			draw := func() {
				for n := range loads {
					loads[n] = env.Usage{CPU: rng.Float64(), MemBW: 0.1 * rng.Float64(), Net: 0.3 + 0.1*rng.Float64()}
				}
			}
			now := 0.0
			for range DefaultHistory {
				draw()
				p.Observe(now, loads)
				now += DefaultSamplePeriod
			}
			b.ReportAllocs()
			for b.Loop() {
				draw()
				p.Observe(now, loads)
				now += DefaultSamplePeriod
				for n := range nodes {
					_ = p.Forecast(n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes), "ns/node")
		})
	}
}
