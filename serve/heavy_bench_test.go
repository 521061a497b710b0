package serve_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
)

// BenchmarkPlaceBesideHeavy measures a small Place (64 nodes, 2 workers)
// while eight goroutines send Place requests at the work bound (4,096
// nodes x 1,024 workers, 2 GPUs a node, every other node half free) back
// to back: the latency a well-behaved client sees beside expensive ones
// (issue 32: eight 4,096 x 4,096 requests took a small Place from ~3 ms
// to 95-301 ms). It reports the small calls' p50 and p99 and the heavy
// calls answered per second.
func BenchmarkPlaceBesideHeavy(b *testing.B) {
	for _, tt := range []struct {
		name  string
		heavy int
		opts  []serve.Option
	}{
		{"alone", 0, nil},
		{"beside-8-heavy", 8, nil},
		{"beside-8-heavy/unbounded", 8, []serve.Option{serve.WithHeavyWork(0)}},
	} {
		heavy := tt.heavy
		b.Run(tt.name, func(b *testing.B) {
			core, err := serve.NewCore(tt.opts...)
			if err != nil {
				b.Fatal(err)
			}
			big := makeRequest(4096, 2, serve.DefaultMaxWork/4096)
			small := makeRequest(64, 4, 2)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			heavyDone := 0
			for range heavy {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						if _, err := core.Place(ctx, big); err == nil {
							mu.Lock()
							heavyDone++
							mu.Unlock()
						}
					}
				}()
			}
			time.Sleep(50 * time.Millisecond) // the heavy ones are under way
			lat := make([]time.Duration, 0, b.N)
			start := time.Now()
			for b.Loop() {
				t0 := time.Now()
				if _, err := core.Place(context.Background(), small); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				time.Sleep(time.Millisecond) // a paced client, not a closed loop
			}
			el := time.Since(start)
			cancel()
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(heavyDone)/el.Seconds(), "heavy/s")
		})
	}
}
