package trace

import (
	"fmt"
	"math/rand/v2"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/background"
	"github.com/drover-sched/drover/env/jitter"
)

// The per-worker model's regimes (Stragglers.Regime).
const (
	// RegimeDedicated is a cluster whose jobs hold whole GPUs (Philly,
	// Helios, the built-in workload): the jitter is jitter.Dedicated, the
	// network's burst noise DedicatedBurstNoise, and the job-level times are taken
	// to include the stragglers of a busy cluster (env.Reference), so the
	// per-worker model reproduces them on average and shows what
	// stragglers cost against the straggler-free time.
	RegimeDedicated = "dedicated"
	// RegimeShared is a cluster whose jobs share GPUs (Alibaba PAI, where
	// workers hold 20-50% of a GPU): the jitter is jitter.Default, fitted
	// to the PAI v2020 mini-batch times of such jobs, applied on top of
	// the job-level times as measured, with env.Workers' default burst
	// noise.
	RegimeShared = "shared"
	// RegimeAuto picks one from the workload and the cluster (AutoRegime).
	RegimeAuto = "auto"
)

// DedicatedBurstNoise is env.Workers.BurstNoise in the dedicated regime.
// It is calibrated with jitter.Dedicated's level to the dedicated
// regime's targets (drover calibrate): a typical multi-node job trains
// 1.3-1.7x as long as it would without stragglers (STRET, ICCCN 2025:
// "stragglers substantially inflate resource consumption and training
// time by ~50%" on homogeneous GPUs), and communication causes most of
// that delay ("primarily stemming from communication hurdles, compounded
// by computation delays").
const DedicatedBurstNoise = 0.1

// AutoRegime returns the regime a replay of workload format f on cluster
// c gets by default: RegimeShared for the Alibaba PAI pod list or a
// cluster built from a PAI node list (nodes that name their GPU type),
// whose jobs share GPUs; RegimeDedicated otherwise.
func AutoRegime(f datasets.Format, c *env.Cluster) string {
	if f == datasets.FormatAlibaba {
		return RegimeShared
	}
	if c != nil {
		for _, n := range c.Nodes {
			if n.GPUType != "" {
				return RegimeShared
			}
		}
	}
	return RegimeDedicated
}

// ParseRegime checks a regime name: RegimeDedicated, RegimeShared,
// RegimeAuto, or "" (auto).
func ParseRegime(s string) (string, error) {
	switch s {
	case "", RegimeAuto:
		return RegimeAuto, nil
	case RegimeDedicated, RegimeShared:
		return s, nil
	}
	return "", fmt.Errorf("trace: unknown regime %q (want %s, %s or %s)", s, RegimeAuto, RegimeDedicated, RegimeShared)
}

// referenceSamples is how many background draws a dedicated regime's
// reference takes.
const referenceSamples = 4096

// referenceSeed seeds the draws of the reference background.
const referenceSeed = 0x62676e64

// referenceLoads draws the reference conditions' background loads from
// src's law: for the fitted process, its stationary law (referenceSamples
// nodes of a fresh source, each at time 0); for a replay, the replayed
// machines at hourly points spread over the trace. The reference uses the
// background as fitted or recorded, not scaled by Stragglers.Load, so that
// a heavier load slows jobs against their measured times.
func referenceLoads(kind string, src background.Source, nodes int) ([]env.Usage, error) {
	out := make([]env.Usage, referenceSamples)
	if kind == "builtin" || kind == "" {
		s, err := background.NewStochastic(background.Default(), referenceSamples, referenceSeed)
		if err != nil {
			return nil, err
		}
		for k := range out {
			u := s.Stationary(k)
			out[k] = env.Usage{CPU: u.CPU, MemBW: u.MemBW, Net: u.Net}
		}
		return out, nil
	}
	r := rand.New(rand.NewPCG(referenceSeed, uint64(nodes)))
	for k := range out {
		u := src.At(r.IntN(nodes), float64(r.IntN(24*8))*3600)
		out[k] = env.Usage{CPU: u.CPU, MemBW: u.MemBW, Net: u.Net}
	}
	return out, nil
}

// newJitter returns an env.Workers jitter factory drawing from p.
func newJitter(p jitter.Params) func(int, rand.Source) env.Jitter {
	if err := p.Validate(); err != nil {
		panic(err) // the embedded params are validated when embedded
	}
	return func(workers int, r rand.Source) env.Jitter {
		q, err := jitter.New(p, workers, r)
		if err != nil {
			panic(err)
		}
		return q
	}
}
