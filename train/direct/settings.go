package direct

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
)

// Setting is one training environment: a cluster, a workload drawn per
// episode seed, and the straggler regime of the per-worker model.
type Setting struct {
	// Name labels the setting in logs.
	Name string
	// Cluster is the cluster.
	Cluster env.Cluster
	// NewJobs returns the episode's jobs for a seed.
	NewJobs func(seed uint64) []env.JobSpec
	// Regime is trace.RegimeDedicated or trace.RegimeShared.
	Regime string
	// Profiles are the models' throughput profiles.
	Profiles map[string]env.Profile

	ref *env.Reference // the dedicated regime's reference, shared by the setting's runs
}

// NewModel returns the per-worker model of an episode with seed: the
// built-in background and the regime's jitter, seeded by seed, with the
// cluster's node size as the packed reference's (Cluster.MaxNodeGPUs).
func (s *Setting) NewModel(seed uint64) env.Model {
	st := trace.Stragglers{Seed: seed, Regime: s.Regime, Reference: s.ref}
	w, err := st.Workers(len(s.Cluster.Nodes))
	if err != nil {
		panic(fmt.Sprintf("direct: setting %s: %v", s.Name, err)) // checked by prepare
	}
	return &env.Drover{Profiles: s.Profiles, GPUsPerNode: s.Cluster.MaxNodeGPUs(), Workers: w}
}

// prepare checks the setting and builds its shared reference.
func (s *Setting) prepare() error {
	if len(s.Cluster.Nodes) == 0 || s.NewJobs == nil || s.Profiles == nil {
		return fmt.Errorf("direct: setting %q needs a cluster, a workload and profiles", s.Name)
	}
	if s.ref != nil {
		return nil
	}
	ref, err := trace.Stragglers{Regime: s.Regime}.NewReference(len(s.Cluster.Nodes))
	if err != nil {
		return fmt.Errorf("direct: setting %s: %w", s.Name, err)
	}
	s.ref = ref
	return nil
}

// synthetic returns fresh Philly-fitted synthetic workloads for a cluster
// of gpus GPUs (jobs up to the cluster's size, arrivals scaled with it),
// each episode's at an offered load drawn uniformly in [lo, hi] from its
// seed.
func synthetic(gpus int, lo, hi float64) func(seed uint64) []env.JobSpec {
	p := datasets.DefaultParams()
	p.MaxGPUs = min(gpus, 64)
	p.RateScale *= float64(gpus) / float64(datasets.DefaultMaxGPUs)
	return func(seed uint64) []env.JobSpec {
		w := datasets.Synthetic(p, datasets.DefaultJobs, rand.NewPCG(seed, seed))
		rho := lo + (hi-lo)*rand.New(rand.NewPCG(seed, 0x726f)).Float64()
		w.ScaleLoad(gpus, rho)
		return trace.Specs(w)
	}
}

// DefaultSettings are the training environments, none of them a
// held-out workload: fresh Philly-fitted synthetic workloads on the
// built-in 16 x 4 GPU cluster and on 22 x 8 GPUs (the shape of the
// Helios and Philly evaluations, with other jobs) in the dedicated regime,
// and, when the PAI node list is at trace.PAINodeList, on 64 nodes of its
// GPU node types (trace's "synth:64") in the shared regime. Offered loads
// vary per episode between 0.8 and 1.2.
func DefaultSettings() ([]Setting, error) {
	prof, _, err := trace.Profiles("builtin", "")
	if err != nil {
		return nil, err
	}
	out := []Setting{
		{Name: "synthetic 16x4", Cluster: env.Homogeneous(16, 4), NewJobs: synthetic(64, 0.8, 1.2), Regime: trace.RegimeDedicated, Profiles: prof},
		{Name: "synthetic 22x8", Cluster: env.Homogeneous(22, 8), NewJobs: synthetic(176, 0.8, 1.2), Regime: trace.RegimeDedicated, Profiles: prof},
	}
	if _, err := os.Stat(trace.PAINodeList); err == nil {
		c, _, err := trace.LoadCluster(trace.SynthPrefix+"64", 0, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, Setting{Name: "synthetic on 64 PAI-type nodes", Cluster: c, NewJobs: synthetic(c.TotalGPUs(), 0.8, 1.2), Regime: trace.RegimeShared, Profiles: prof})
	}
	return out, nil
}
