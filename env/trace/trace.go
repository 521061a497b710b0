package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/profile"
)

// Model names accepted by Options.Model.
const (
	ModelPollux = "pollux"
	ModelDrover = "drover"
)

// Options configures one replay.
type Options struct {
	// Workload is the job list to replay.
	Workload *datasets.Workload
	// Model is the throughput model: ModelPollux or ModelDrover.
	Model string
	// Profiles maps model names to profiles (see Profiles).
	Profiles map[string]env.Profile
	// Policy schedules the jobs: a policies.Policy (the same interface as
	// env.Scheduler, which this package names so as to import no policy).
	Policy env.Scheduler
	// Nodes and GPUsPerNode size a homogeneous cluster (used when Cluster
	// is nil).
	Nodes, GPUsPerNode int
	// Cluster, when set, is the cluster to simulate.
	Cluster *env.Cluster
	// Interval is the scheduling interval in seconds; negative picks the
	// model's default (60 s for pollux, event-driven for drover).
	Interval float64
	// RestartDelay is the seconds every placement costs; negative picks
	// env.DefaultRestartDelay.
	RestartDelay float64
	// Log records the event log.
	Log bool
	// Progress, when set, is called with finished and total job counts.
	Progress func(done, total int)
	// Stragglers, when set, turns on the drover model's per-worker model.
	Stragglers *Stragglers
	// LazyAdvance advances running jobs only when needed
	// (env.Config.LazyAdvance): large runs' events then cost the same
	// whatever the number of running jobs, at the price of last-digit
	// differences from the eager zero value, the reference the tests
	// compare it with. drover sim sets it by default.
	LazyAdvance bool
}

// Result is the outcome of a replay.
type Result struct {
	// Summary summarises the run.
	Summary env.Summary
	// Jobs holds each job's outcome in arrival order.
	Jobs []env.JobResult
	// Events is the event log (when Options.Log was set).
	Events []env.Event
	// Sim is the finished simulation, for further inspection.
	Sim *env.Sim
}

// Specs converts a workload's jobs into simulator job specs, PS jobs
// (datasets.ArchPS) with their shard counts.
func Specs(w *datasets.Workload) []env.JobSpec {
	specs := make([]env.JobSpec, len(w.Jobs))
	for i, j := range w.Jobs {
		specs[i] = env.JobSpec{
			Name:      j.Name,
			Submit:    j.Submit,
			GPUs:      j.GPUs,
			Duration:  j.Duration,
			Model:     j.Model,
			BatchSize: j.BatchSize,
		}
		if j.Arch == datasets.ArchPS {
			specs[i].Arch, specs[i].PSShards = env.PS, j.PSShards
		}
	}
	return specs
}

// NewModel returns the named throughput model over profiles.
func NewModel(name string, profiles map[string]env.Profile, gpusPerNode int) (env.Model, error) {
	switch name {
	case ModelPollux:
		return &env.Pollux{Profiles: profiles, GPUsPerNode: gpusPerNode}, nil
	case ModelDrover:
		return &env.Drover{Profiles: profiles, GPUsPerNode: gpusPerNode}, nil
	}
	return nil, fmt.Errorf("trace: unknown model %q (want %s or %s)", name, ModelPollux, ModelDrover)
}

// BuiltinProfiles is what Profiles says of the embedded fitted profiles.
const BuiltinProfiles = "builtin (fitted)"

// Profiles loads model profiles. With dir set it loads the measured
// profiles under dir (one subdirectory per model, as in pollux_apps). With
// dir empty it looks for a pollux_apps directory near workloadPath (the
// workload's directory and up to three levels above it, also under a
// traces/ subdirectory) and else returns the embedded fitted profiles. The
// second result says where the profiles came from. The profiles are safe
// for concurrent use (the measured ones memoize answers under a lock), so
// parallel runs can share one set.
func Profiles(dir, workloadPath string) (map[string]env.Profile, string, error) {
	return ProfilesFor(dir, workloadPath, nil)
}

// ProfilesFor is Profiles for the named models only (all of them when
// models is nil), so that a run reads and builds only what its workload's
// jobs use: see Models.
func ProfilesFor(dir, workloadPath string, models []string) (map[string]env.Profile, string, error) {
	if dir == "" && workloadPath != "" && workloadPath != "builtin" {
		dir = findProfiles(workloadPath)
	}
	if dir == "" || dir == "builtin" {
		ps := map[string]env.Profile{}
		for _, n := range profile.BuiltinNames() {
			if models != nil && !slices.Contains(models, n) {
				continue
			}
			p, err := profile.Builtin(n)
			if err != nil {
				return nil, "", err
			}
			ps[n] = p
		}
		return ps, BuiltinProfiles, nil
	}
	ms, err := profile.LoadModels(dir, models)
	if err != nil {
		return nil, "", fmt.Errorf("load profiles: %w", err)
	}
	ps := make(map[string]env.Profile, len(ms))
	for n, m := range ms {
		ps[n] = m
		if f, err := profile.Builtin(n); err == nil {
			ps[n] = &fallback{Measured: m, fit: f, miss: map[missKey][2]float64{}}
		}
	}
	return ps, dir, nil
}

// Models returns the distinct models of w's jobs, sorted: what
// ProfilesFor needs to load for w.
func Models(w *datasets.Workload) []string {
	var ms []string
	for _, j := range w.Jobs {
		if !slices.Contains(ms, j.Model) {
			ms = append(ms, j.Model)
		}
	}
	slices.Sort(ms)
	return ms
}

// fallback is a measured profile that answers throughput questions beyond
// its measurements (more GPUs per node, or more nodes, than were measured)
// from the fitted parameters instead of failing. Where the measurements
// answer, it is exactly the measured profile, so Pollux fidelity is intact.
// Like Measured, it is safe for concurrent use.
type fallback struct {
	*profile.Measured
	fit  *profile.Fitted
	mu   sync.Mutex
	miss map[missKey][2]float64 // fitted answers, by placement and batch
}

// missKey identifies a placement (GPUs per node, up to 16 nodes) and batch.
type missKey struct {
	placement [16]uint8
	nodes     int
	bsz       int
}

// Throughput implements env.Profile.
func (f *fallback) Throughput(placement []int, localBsz int) (step, sync float64) {
	k := missKey{nodes: len(placement), bsz: localBsz}
	cacheable := len(placement) <= len(k.placement)
	if cacheable {
		for i, g := range placement {
			if g > 255 {
				cacheable = false
				break
			}
			k.placement[i] = uint8(g)
		}
	}
	if cacheable {
		f.mu.Lock()
		v, ok := f.miss[k]
		f.mu.Unlock()
		if ok {
			return v[0], v[1]
		}
	}
	if st, sy, reason := f.Measured.TryThroughput(placement, localBsz); reason == "" {
		return st, sy
	}
	step, sync = f.fit.Throughput(placement, localBsz)
	if cacheable {
		f.mu.Lock()
		f.miss[k] = [2]float64{step, sync}
		f.mu.Unlock()
	}
	return step, sync
}

func findProfiles(workloadPath string) string {
	d := filepath.Dir(workloadPath)
	for range 4 {
		for _, c := range []string{filepath.Join(d, "pollux_apps"), filepath.Join(d, "traces", "pollux_apps")} {
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				return c
			}
		}
		d = filepath.Dir(d)
	}
	return ""
}

// Run replays o.Workload under o.Policy.
func Run(o Options) (*Result, error) {
	if o.Workload == nil || len(o.Workload.Jobs) == 0 {
		return nil, errors.New("trace: empty workload")
	}
	if o.Policy == nil {
		return nil, errors.New("trace: no policy")
	}
	var c env.Cluster
	if o.Cluster != nil {
		c = *o.Cluster
	} else {
		if o.Nodes <= 0 || o.GPUsPerNode <= 0 {
			return nil, fmt.Errorf("trace: cluster of %d nodes x %d GPUs", o.Nodes, o.GPUsPerNode)
		}
		c = env.Homogeneous(o.Nodes, o.GPUsPerNode)
	}
	m, err := NewModel(o.Model, o.Profiles, c.MaxNodeGPUs())
	if err != nil {
		return nil, err
	}
	if o.Stragglers != nil {
		d, ok := m.(*env.Drover)
		if !ok {
			return nil, fmt.Errorf("trace: the per-worker straggler model needs the %s model, not %s", ModelDrover, o.Model)
		}
		st := *o.Stragglers
		if st.Regime, err = ParseRegime(st.Regime); err != nil {
			return nil, err
		}
		if st.Regime == RegimeAuto {
			st.Regime = AutoRegime(o.Workload.Format, &c)
		}
		if d.Workers, err = st.Workers(len(c.Nodes)); err != nil {
			return nil, err
		}
	}
	iv := o.Interval
	if iv < 0 {
		iv = 0
		if o.Model == ModelPollux {
			iv = 60
		}
	}
	rd := o.RestartDelay
	if rd < 0 {
		rd = env.DefaultRestartDelay
	}
	s, err := env.New(env.Config{Cluster: c, Model: m, Interval: iv, RestartDelay: rd, Log: o.Log, LazyAdvance: o.LazyAdvance}, Specs(o.Workload))
	if err != nil {
		return nil, err
	}
	if err := s.Run(o.Policy, o.Progress); err != nil {
		return nil, err
	}
	return &Result{Summary: s.Summary(), Jobs: s.Results(), Events: s.Events(), Sim: s}, nil
}
