package trace

import (
	"fmt"
	"math/rand/v2"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/background"
	"github.com/drover-sched/drover/env/jitter"
)

// Stragglers configures the per-worker model (env.Workers) of a replay.
type Stragglers struct {
	// Background is the nodes' background load: "builtin" (the embedded
	// stochastic process fitted to the Alibaba v2018 machine usage),
	// "none", or the path of a machine_usage.csv(.gz) to replay.
	Background string
	// Load multiplies the background utilisation (1 = as fitted).
	Load float64
	// NoJitter turns the calibrated per-worker jitter off.
	NoJitter bool
	// Seed seeds the background process and the jitter.
	Seed uint64
	// Threshold is the straggler threshold (0: env's default, 20%).
	Threshold float64
	// Mitigation is env.MitigationNone ("" too) or env.MitigationSTRET.
	Mitigation string
}

// Workers builds the env.Workers for a cluster of n nodes.
func (st Stragglers) Workers(nodes int) (*env.Workers, error) {
	w := &env.Workers{Seed: st.Seed, Threshold: st.Threshold}
	switch st.Mitigation {
	case "", env.MitigationNone:
	case env.MitigationSTRET:
		w.STRET = true
	default:
		return nil, fmt.Errorf("trace: unknown mitigation %q (want %s or %s)", st.Mitigation, env.MitigationNone, env.MitigationSTRET)
	}
	var src background.Source
	switch st.Background {
	case "", "builtin":
		// Sample the fitted process at the model's refresh period: the
		// same process at every sixth step, for a sixth of the cost.
		p, err := background.Default.Coarsened(env.DefaultWorkerPeriod)
		if err != nil {
			return nil, err
		}
		s, err := background.NewStochastic(p, nodes, st.Seed)
		if err != nil {
			return nil, err
		}
		src = s
	case "none":
	default:
		ms, err := datasets.ReadMachineUsage(st.Background)
		if err != nil {
			return nil, err
		}
		r, err := background.NewReplay(MachineSeries(ms), nodes, background.DefaultStep)
		if err != nil {
			return nil, fmt.Errorf("background %s: %w", st.Background, err)
		}
		src = r
	}
	if src != nil {
		if st.Load > 0 && st.Load != 1 {
			src = background.Scaled(src, st.Load)
		}
		w.Background = loads{src}
	}
	if !st.NoJitter {
		w.NewJitter = func(workers int, r rand.Source) env.Jitter {
			p, err := jitter.New(jitter.Default, workers, r)
			if err != nil {
				panic(err) // jitter.Default is validated when embedded
			}
			return p
		}
	}
	return w, nil
}

// loads adapts a background.Source to env.Background.
type loads struct{ background.Source }

// Load implements env.Background.
func (l loads) Load(node int, t float64) env.Usage {
	u := l.At(node, t)
	return env.Usage{CPU: u.CPU, MemBW: u.MemBW, Net: u.Net}
}

// MachineSeries converts the Alibaba v2018 machine usage to background
// series: time, CPU and memory bandwidth as recorded, network the larger of
// in and out.
func MachineSeries(ms []datasets.MachineSeries) []background.Series {
	out := make([]background.Series, len(ms))
	for i, m := range ms {
		out[i] = background.FromTraffic(m.Time, m.CPU, m.MemBW, m.NetIn, m.NetOut)
	}
	return out
}
