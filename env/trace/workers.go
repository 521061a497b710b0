package trace

import (
	"fmt"
	"math"

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
	// Mitigation is env.MitigationNone ("" too), env.MitigationSTRET, the
	// replace-straggler baseline env.MitigationReplace or load-balanced
	// BSP, env.MitigationLBBSP.
	Mitigation string
	// Regime is RegimeDedicated, RegimeShared or RegimeAuto ("" too).
	// Run resolves RegimeAuto with AutoRegime; Workers, which knows no
	// workload, reads it as RegimeDedicated.
	Regime string
	// Jitter, when set, replaces the regime's jitter params (for
	// calibration and experiments).
	Jitter *jitter.Params
	// BurstNoise, when set, replaces the regime's env.Workers.BurstNoise.
	BurstNoise *float64
	// Reference, when set, is the dedicated regime's reference to use
	// instead of a new one: runs that share one compute each job shape's
	// factor once (see env.Reference; build it with NewReference from
	// Stragglers of the same background, regime and overrides).
	Reference *env.Reference
	// Tune, when set, is called with the built env.Workers last, to
	// adjust any of its knobs (experiments).
	Tune func(*env.Workers)
}

// Workers builds the env.Workers for a cluster of n nodes.
func (st Stragglers) Workers(nodes int) (*env.Workers, error) {
	regime, err := ParseRegime(st.Regime)
	if err != nil {
		return nil, err
	}
	if regime == RegimeAuto {
		regime = RegimeDedicated
	}
	// Zero values mean the defaults; a negative or non-finite value is a
	// mistake the model would otherwise take silently.
	if !(st.Load >= 0 && st.Load <= math.MaxFloat64) {
		return nil, fmt.Errorf("trace: background load multiplier %v, want > 0 (0: as fitted)", st.Load)
	}
	if !(st.Threshold >= 0 && st.Threshold <= math.MaxFloat64) {
		return nil, fmt.Errorf("trace: straggler threshold %v, want > 0 (0: the default, %v)", st.Threshold, 0.2)
	}
	w := &env.Workers{Seed: st.Seed, Threshold: st.Threshold}
	switch st.Mitigation {
	case "", env.MitigationNone:
	case env.MitigationSTRET:
		w.STRET = true
	case env.MitigationReplace:
		w.Replace = true
	case env.MitigationLBBSP:
		w.LBBSP = true
	default:
		return nil, fmt.Errorf("trace: unknown mitigation %q (want %s, %s, %s or %s)", st.Mitigation, env.MitigationNone, env.MitigationSTRET, env.MitigationReplace, env.MitigationLBBSP)
	}
	var src background.Source
	switch st.Background {
	case "", "builtin":
		// Sample the fitted process at the model's refresh period: the
		// same process at every sixth step, for a sixth of the cost.
		p, err := background.Default().Coarsened(env.DefaultWorkerPeriod)
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
	jp := jitter.Default()
	if regime == RegimeDedicated {
		jp = jitter.Dedicated()
		w.BurstNoise = DedicatedBurstNoise
		w.Reference = st.Reference
		if w.Reference == nil {
			w.Reference = &env.Reference{}
			if src != nil {
				if w.Reference.Loads, err = referenceLoads(st.Background, src, nodes); err != nil {
					return nil, err
				}
			}
		}
	}
	if st.Jitter != nil {
		jp = *st.Jitter
	}
	if st.BurstNoise != nil {
		w.BurstNoise = *st.BurstNoise
	}
	if src != nil {
		if st.Load > 0 && st.Load != 1 {
			src = background.Scaled(src, st.Load)
		}
		w.Background = loads{src}
	}
	if !st.NoJitter {
		w.NewJitter = newJitter(jp)
	}
	if st.Tune != nil {
		st.Tune(w)
	}
	return w, nil
}

// NewReference returns the env.Reference that Workers(nodes) would build,
// for runs that share it (Stragglers.Reference), or nil when the regime
// has none (RegimeShared).
func (st Stragglers) NewReference(nodes int) (*env.Reference, error) {
	st.Reference = nil
	w, err := st.Workers(nodes)
	if err != nil {
		return nil, err
	}
	return w.Reference, nil
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
