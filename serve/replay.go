package serve

import (
	"context"
	"fmt"
	"sync"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
	"github.com/drover-sched/drover/policies/direct"
)

// replayCache keeps what the replays of successive evaluations share: the
// profiles, and the per-worker model's reference of the last cluster size
// and regime.
type replayCache struct {
	mu       sync.Mutex
	profiles map[string]env.Profile
	ref      *env.Reference
	refNodes int
	regime   string
}

// replayWorkload turns arrivals into the replay's workload: each job at
// its arrival's offset from the first, with its run time taken from the
// reports (finish minus start; else the reported JCT), else the request's
// expected duration, else def. Jobs of a model the profiles do not know,
// or larger than the cluster, are left out; the second result counts them.
func replayWorkload(arrivals []arrival, profiles map[string]env.Profile, gpus int, def float64) (*datasets.Workload, int) {
	w := &datasets.Workload{Name: "served arrivals"}
	left := 0
	for _, a := range arrivals {
		if _, ok := profiles[a.spec.Model]; !ok || a.spec.GPUs > gpus {
			left++
			continue
		}
		j := datasets.Job{Name: a.id, Submit: a.at.Sub(arrivals[0].at).Seconds(), GPUs: a.spec.GPUs, Model: a.spec.Model,
			BatchSize: a.spec.BatchSize, Duration: a.spec.Duration}
		switch {
		case !a.finished.IsZero() && !a.started.IsZero() && a.finished.After(a.started):
			j.Duration = a.finished.Sub(a.started).Seconds()
		case a.jct > 0:
			j.Duration = a.jct
		}
		if !(j.Duration > 0) {
			j.Duration = def
		}
		if a.spec.Arch == env.PS {
			j.Arch, j.PSShards = datasets.ArchPS, a.spec.PSShards
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w, left
}

// replayCosts replays the arrivals on cluster (every node free) under the
// per-worker straggler model, once per seed under the heuristic and under
// v, and returns each run's cost (SwitchConfig.Metric), learned then
// heuristic, paired by seed, the costs of v's teacher on the same seeds
// (replayed too unless it is the heuristic), and a note on left-out jobs. A run that does
// not finish every job is an error.
func (k *Core) replayCosts(ctx context.Context, v *Version, arrivals []arrival, cluster env.Cluster) (learned, base []float64, tc teacherCosts, note string, err error) {
	cfg := k.sw.cfg
	rc := &k.sw.rep
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.profiles == nil {
		if cfg.Profiles != nil {
			rc.profiles = cfg.Profiles
		} else if rc.profiles, _, err = trace.Profiles("", ""); err != nil {
			return nil, nil, tc, "", err
		}
	}
	if len(cluster.Nodes) == 0 {
		return nil, nil, tc, "", fmt.Errorf("no cluster seen")
	}
	for i := range cluster.Nodes {
		if cluster.Nodes[i].Name == "" {
			cluster.Nodes[i].Name = fmt.Sprintf("node-%d", i)
		}
	}
	w, left := replayWorkload(arrivals, rc.profiles, cluster.TotalGPUs(), cfg.DefaultDuration)
	if left > 0 {
		note = fmt.Sprintf(" (%d arrivals of unknown models or larger than the cluster left out)", left)
	}
	if len(w.Jobs) < cfg.MinArrivals {
		return nil, nil, tc, "", fmt.Errorf("%d replayable arrivals of %d, want %d", len(w.Jobs), len(arrivals), cfg.MinArrivals)
	}
	regime := trace.AutoRegime(w.Format, &cluster)
	if rc.ref == nil || rc.refNodes != len(cluster.Nodes) || rc.regime != regime {
		ref, err := trace.Stragglers{Regime: regime}.NewReference(len(cluster.Nodes))
		if err != nil {
			return nil, nil, tc, "", err
		}
		rc.ref, rc.refNodes, rc.regime = ref, len(cluster.Nodes), regime
	}
	run := func(p policies.Policy, seed uint64) (float64, error) {
		c := cluster
		c.Nodes = append([]env.Node(nil), cluster.Nodes...)
		res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: rc.profiles, Policy: p, Cluster: &c,
			RestartDelay: -1, Interval: -1, Stragglers: &trace.Stragglers{Seed: seed, Regime: regime, Reference: rc.ref}})
		if err != nil {
			return 0, err
		}
		if res.Summary.Finished < len(w.Jobs) {
			return 0, fmt.Errorf("finished %d of %d jobs", res.Summary.Finished, len(w.Jobs))
		}
		if cfg.Metric == MetricJCT {
			return res.Summary.AvgJCT, nil
		}
		// Seconds trained per target reached: the average TTA when
		// every job reached its target, and a policy that makes jobs
		// miss theirs pays for their training.
		return res.Summary.TTAPerTarget, nil
	}
	tc, newTeacher := k.teacherFactory(v)
	for i := range cfg.Seeds {
		if err := ctx.Err(); err != nil {
			return nil, nil, tc, "", err
		}
		seed := cfg.Seed + uint64(i)
		h, err := k.heuristic(policies.Config{Seed: seed})
		if err != nil {
			return nil, nil, tc, "", err
		}
		hc, err := run(h, seed)
		if err != nil {
			return nil, nil, tc, "", fmt.Errorf("%s, seed %d: %w", k.heurPolicy, seed, err)
		}
		lc, err := run(v.NewPolicy(), seed)
		if err != nil {
			return nil, nil, tc, "", &learnedFailed{fmt.Errorf("learned@%s, seed %d: %w", v.Name, seed, err)}
		}
		learned, base = append(learned, lc), append(base, hc)
		if newTeacher != nil && tc.err == nil {
			var t policies.Policy
			if t, tc.err = newTeacher(policies.Config{Seed: seed}); tc.err == nil {
				var c float64
				if c, tc.err = run(t, seed); tc.err == nil {
					tc.costs = append(tc.costs, c)
				}
			}
			if tc.err != nil {
				tc.err, tc.costs = fmt.Errorf("teacher %s, seed %d: %w", tc.name, seed, tc.err), nil
			}
		}
	}
	if tc.name != "" && tc.name == k.heurName {
		tc.costs = base // the teacher is the heuristic
	}
	return learned, base, tc, note, nil
}

// teacherCosts are the replay costs of a learned policy's teacher
// (policies/direct.TeacherOf), paired with the learned policy's: name ""
// when it has none; costs nil, with err saying why, when its replay
// failed (which is no evidence against the learned policy).
type teacherCosts struct {
	name  string
	costs []float64
	err   error
}

// teacherFactory returns the name of v's teacher and, when it is not the
// heuristic itself, its factory (policies/builtin); a teacher the registry
// does not know is reported as an error in tc.
func (k *Core) teacherFactory(v *Version) (tc teacherCosts, f policies.Factory) {
	tc.name = direct.TeacherOf(v.Meta.Env)
	if tc.name == "" || tc.name == k.heurName {
		return tc, nil
	}
	f, tc.err = builtin.Registry().Factory(tc.name)
	return tc, f
}

// learnedFailed is a replay error of the learned policy (not of the
// heuristic or the setup): evidence against it.
type learnedFailed struct{ err error }

func (e *learnedFailed) Error() string { return e.err.Error() }
func (e *learnedFailed) Unwrap() error { return e.err }
