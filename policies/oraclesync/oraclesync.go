package oraclesync

import (
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the rule's name in a composed policy name,
// "<placement>+oracle-sync".
const Name = "oracle-sync"

// Defaults of the Oracle fields, used where a field is zero.
const (
	// DefaultWorkerCPU is the share of a node's CPUs one worker keeps busy
	// (env.Workers' default, 1/16).
	DefaultWorkerCPU = 1.0 / 16
	// DefaultWorkerMemBW is the share of a node's memory bandwidth one
	// worker uses (env.Workers' default).
	DefaultWorkerMemBW = 0.08
)

// DefaultSyncs are the strategies the oracle weighs, in order of
// preference on exact ties: BSP, ASP, SSP with staleness 3, local SGD with
// period 4, 8 and 16. They hold STRN's four (BSP, SSP(3), ASP, local
// SGD(8)) and the local-SGD periods on either side of STRN's. Under the
// fitted convergence model local SGD reaches its target in BSP's
// iterations (no source measures its curves), so the longest period wins
// whenever communication costs anything: the oracle trades accuracy
// (0.09 points per step of period on the fallback family) for time.
var DefaultSyncs = []env.Sync{
	{Kind: env.BSP},
	{Kind: env.ASP},
	{Kind: env.SSP, Staleness: 3},
	{Kind: env.LocalSGD, Period: 4},
	{Kind: env.LocalSGD, Period: 8},
	{Kind: env.LocalSGD, Period: 16},
}

// Oracle is the oracle sync rule: it gives every placed job the strategy
// of least expected time to accuracy on its actual placement and its
// nodes' actual loads (see the package documentation). The zero value is
// usable; it is not safe for concurrent use.
type Oracle struct {
	// Syncs lists the candidate strategies, preferred first on exact ties
	// (DefaultSyncs).
	Syncs []env.Sync
	// WorkerCPU and WorkerMemBW are the load one worker adds to its node,
	// to count the jobs placed earlier in the same call
	// (DefaultWorkerCPU, DefaultWorkerMemBW).
	WorkerCPU, WorkerMemBW float64

	load  []env.Usage
	top   []bool                // this job's undominated nodes
	probe map[env.Usage]float64 // this job and strategy: probe by node load
}

var _ policies.SyncRule = (*Oracle)(nil)

// New returns the oracle sync rule with the default settings (the seed is
// ignored).
func New(policies.Config) (policies.SyncRule, error) { return &Oracle{}, nil }

// Assign implements policies.SyncRule: each decision that places a job of
// two or more GPUs gets the strategy Expected ranks first (the earlier
// in Syncs on exact ties); one-GPU jobs, and every job when the model
// cannot probe, keep BSP.
func (o *Oracle) Assign(v *env.View, ds []env.Decision) error {
	if o.Syncs == nil {
		o.Syncs = DefaultSyncs
	}
	if o.WorkerCPU == 0 {
		o.WorkerCPU = DefaultWorkerCPU
	}
	if o.WorkerMemBW == 0 {
		o.WorkerMemBW = DefaultWorkerMemBW
	}
	pr, ok := v.Model.(env.Prober)
	if !ok || len(o.Syncs) == 0 {
		for i := range ds {
			ds[i].Sync = env.Sync{}
		}
		return nil
	}
	loaded := false
	for i := range ds {
		d := &ds[i]
		if len(d.Nodes) == 0 {
			continue
		}
		j := policies.ActiveJob(v, d.Job)
		if j == nil {
			return fmt.Errorf("oraclesync: decision for job %d, which is not active", d.Job)
		}
		if !loaded {
			o.load = policies.NodeLoads(v, o.load)
			loaded = true
		}
		nodes, take := policies.NodeShares(d.Nodes)
		d.Sync = env.Sync{}
		if len(d.Nodes) >= 2 {
			loads := make([]env.Usage, len(nodes))
			speeds := make([]float64, len(nodes))
			for k, n := range nodes {
				loads[k] = o.load[n]
				speeds[k] = v.Cluster.Nodes[n].Speed
			}
			o.top = undominated(loads, speeds, o.top)
			best := math.Inf(1)
			for _, s := range o.Syncs {
				if t := o.expected(pr, j, s, take, loads, speeds, o.top); t < best {
					d.Sync, best = s, t
				}
			}
		}
		policies.BookLoad(o.load, nodes, take, o.WorkerCPU, o.WorkerMemBW)
	}
	return nil
}

// Expected returns the expected seconds of j's training per iteration of
// work under strategy s, iterations to target included: the iteration
// time Combine makes of per-node probes, times the iterations to target
// the convergence model believes (env.Believed(pr).Factor; +Inf for a
// strategy that never reaches it). take is
// the GPUs on each node of the placement, loads each node's background
// (telemetry) and speeds each node's GPU speed (0: 1). It is NaN when a
// probe is unusable.
func Expected(pr env.Prober, j *env.Job, s env.Sync, take []int, loads []env.Usage, speeds []float64) float64 {
	return (&Oracle{}).expected(pr, j, s, take, loads, speeds, undominated(loads, speeds, nil))
}

func (o *Oracle) expected(pr env.Prober, j *env.Job, s env.Sync, take []int, loads []env.Usage, speeds []float64, top []bool) float64 {
	job := *j
	job.Sync = s
	if o.probe == nil {
		o.probe = make(map[env.Usage]float64)
	}
	clear(o.probe)
	per := make([]float64, 0, len(take))
	sub := make([]int, 0, len(take))
	w := 0
	for k := range take {
		w += take[k]
		if s.Kind != env.ASP && !top[k] {
			continue // another node is at least as slow
		}
		t, ok := o.probe[loads[k]]
		if !ok {
			t = pr.Probe(&job, take, loads[k], true)
			o.probe[loads[k]] = t
		}
		if sp := speeds[k]; sp > 0 && sp < 1 {
			t /= sp
		}
		per = append(per, t)
		sub = append(sub, take[k])
	}
	return Combine(s, sub, per) * env.Believed(pr).Factor(j.Spec.Model, s, w)
}

// undominated marks the nodes no other node dominates: one with every
// load at least as high and a GPU speed at least as low (and, among equal
// ones, an earlier index). A probe is non-decreasing in every load
// component, so the dominated nodes are never the slowest and the
// strategies that wait for the slowest need only the others' probes. It
// reuses dst.
func undominated(loads []env.Usage, speeds []float64, dst []bool) []bool {
	dst = slices.Grow(dst[:0], len(loads))[:len(loads)]
	slow := func(k int) float64 {
		if sp := speeds[k]; sp > 0 && sp < 1 {
			return 1 / sp
		}
		return 1
	}
	for k, a := range loads {
		dst[k] = true
		for l, b := range loads {
			if l == k || b.CPU < a.CPU || b.MemBW < a.MemBW || b.Net < a.Net || slow(l) < slow(k) {
				continue
			}
			if b != a || slow(l) != slow(k) || l < k {
				dst[k] = false
				break
			}
		}
	}
	return dst
}

// Combine turns per-node iteration times into the job's: per[k] is the
// iteration time the job would have if every node were loaded like node k
// (which holds take[k] workers). BSP, SSP and local SGD wait, in the long
// run, for the slowest worker (SSP and local SGD only absorb transient
// differences), so they take the largest; under ASP every worker updates
// at its own pace, so w updates take w / sum_k take[k] / per[k]. It is NaN
// when any time is not positive and finite.
func Combine(s env.Sync, take []int, per []float64) float64 {
	if len(per) == 0 {
		return math.NaN()
	}
	worst, rate, w := 0.0, 0.0, 0
	for k, t := range per {
		if !(t > 0) || math.IsInf(t, 0) {
			return math.NaN()
		}
		worst = max(worst, t)
		rate += float64(take[k]) / t
		w += take[k]
	}
	if s.Kind == env.ASP {
		return float64(w) / rate
	}
	return worst
}
