package policies

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/drover-sched/drover/env"
)

// Policy decides, at each decision point of a simulation (or of a live
// cluster), which jobs run on which nodes: Schedule(*env.View) returns the
// allocation changes to make now. It is env.Scheduler (an alias, the same
// type) under the name the rest of Drover uses: the simulator and its
// drivers define the interface they call, so that env imports no policy.
type Policy = env.Scheduler

// Deviator is a policy that chooses among a heuristic's candidates (a
// learned variant) and counts its choices: of the choices it made with
// more than one candidate, how many were not the heuristic's own. drover
// eval reports the share, which says how far a learned variant strays
// from its heuristic on a workload.
type Deviator interface {
	// Deviations returns the choices that differed from the heuristic's
	// own and the choices made among two or more candidates so far.
	Deviations() (deviated, choices int)
}

// Config is what every policy constructor receives.
type Config struct {
	// Seed seeds the policy's random choices (policies without any ignore it).
	Seed uint64
}

// Factory builds a fresh policy for one run.
type Factory func(cfg Config) (Policy, error)

// ErrUnknownPolicy is returned by Registry.New for a name not registered.
var ErrUnknownPolicy = errors.New("policies: unknown policy")

// Registry maps policy names to factories. It also holds the sync rules
// (RegisterSyncRule) that composed names "<policy>+<sync>" refer to; use
// Factory or New, not the map, to look a name up.
type Registry map[string]Factory

// Register adds a factory under name; a name may be registered once and
// may not contain "+", which composes a policy with a sync strategy (see
// Factory).
func (r Registry) Register(name string, f Factory) error {
	if name == "" || strings.Contains(name, "+") {
		return fmt.Errorf("policies: policy name %q: want a non-empty name without %q", name, "+")
	}
	if _, ok := r[name]; ok {
		return fmt.Errorf("policies: %q registered twice", name)
	}
	r[name] = f
	return nil
}

// New builds the policy a name stands for: a registered policy or a
// composed "<policy>+<sync>" (see Factory).
func (r Registry) New(name string, cfg Config) (Policy, error) {
	f, err := r.Factory(name)
	if err != nil {
		return nil, err
	}
	return f(cfg)
}

// Names returns the registered policies' names, sorted (not the sync
// rules: SyncRuleNames).
func (r Registry) Names() []string {
	var names []string
	for _, k := range r.keys() {
		if !strings.HasPrefix(k, ruleKey) {
			names = append(names, k)
		}
	}
	return names
}

// keys returns the map's keys, sorted.
func (r Registry) keys() []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ActiveJob returns the active job of v with ID id, or nil.
func ActiveJob(v *env.View, id int) *env.Job {
	for _, j := range v.Active {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// NodeShares returns the distinct nodes of an allocation in order of first
// appearance and the workers on each: the placement (GPUs per node) that a
// sync rule probes.
func NodeShares(alloc []int) (nodes, workers []int) {
	for _, n := range alloc {
		if k := slices.Index(nodes, n); k >= 0 {
			workers[k]++
			continue
		}
		nodes = append(nodes, n)
		workers = append(workers, 1)
	}
	return nodes, workers
}

// NodeLoads fills dst (reused) with each node's load at v's decision
// point, one entry per node of v's cluster: v.Model's env.Telemetry
// reading, or idle when the model has none.
func NodeLoads(v *env.View, dst []env.Usage) []env.Usage {
	tel, _ := v.Model.(env.Telemetry)
	dst = slices.Grow(dst[:0], len(v.Cluster.Nodes))[:len(v.Cluster.Nodes)]
	for n := range dst {
		dst[n] = env.Usage{}
		if tel != nil {
			dst[n] = tel.NodeLoad(n, v.Now)
		}
	}
	return dst
}

// BookLoad adds to loads what a placement puts on its nodes (as
// NodeShares gives them): cpu and memBW per worker, and, when it spans
// more than one node, one more NIC flow on each (half a NIC in env's
// units), so later choices at the same decision point see it.
func BookLoad(loads []env.Usage, nodes, workers []int, cpu, memBW float64) {
	for k, n := range nodes {
		loads[n].CPU += cpu * float64(workers[k])
		loads[n].MemBW += memBW * float64(workers[k])
		if len(nodes) > 1 {
			loads[n].Net += 0.5
		}
	}
}

// Diff turns a desired allocation for every active job (missing or empty:
// no GPUs) into the decisions that change the current one.
func Diff(v *env.View, want map[int][]int) []env.Decision {
	var ds []env.Decision
	for _, j := range v.Active {
		w := want[j.ID]
		if !slices.Equal(w, j.Alloc) {
			ds = append(ds, env.Decision{Job: j.ID, Nodes: w})
		}
	}
	return ds
}

// WithSync returns p with every placement it makes using sync strategy s,
// for policies that do not choose one themselves.
func WithSync(p Policy, s env.Sync) Policy { return withSync{p, s} }

type withSync struct {
	p Policy
	s env.Sync
}

func (w withSync) Schedule(v *env.View) ([]env.Decision, error) {
	ds, err := w.p.Schedule(v)
	for i := range ds {
		if len(ds[i].Nodes) > 0 {
			ds[i].Sync = w.s
		}
	}
	return ds, err
}
