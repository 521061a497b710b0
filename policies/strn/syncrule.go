package strn

import (
	"fmt"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// SyncRuleName is the name of STRN's sync rule in a composed policy name,
// "<placement>+strn-sync".
const SyncRuleName = "strn-sync"

// SyncRule is STRN's sync choice without STRN's placement: for every job
// another policy places, the strategy ChooseSync picks on that placement,
// as STRN would pick it had STRN placed the job there. Each node's load is
// its env.Telemetry reading (idle without telemetry) plus WorkerCPU and
// WorkerMemBW per worker, and half a NIC per multi-node job, of the jobs
// placed earlier in the same call; the job is probed at the peak of its
// nodes' loads. The zero value is usable (every zero field takes STRN's
// default); it is not safe for concurrent use.
type SyncRule struct {
	// WorkerCPU and WorkerMemBW are the load one worker is assumed to add
	// to its node (DefaultWorkerCPU, DefaultWorkerMemBW).
	WorkerCPU, WorkerMemBW float64
	// SyncMargin is the gain a strategy needs over an earlier one
	// (DefaultSyncMargin; negative: none).
	SyncMargin float64
	// Syncs lists the candidate strategies, preferred first
	// (DefaultSyncs).
	Syncs []env.Sync

	load []env.Usage
}

var _ policies.SyncRule = (*SyncRule)(nil)

// NewSyncRule returns STRN's sync rule with the default settings (the
// seed is ignored).
func NewSyncRule(policies.Config) (policies.SyncRule, error) { return &SyncRule{}, nil }

// Assign implements policies.SyncRule. A decision that moves a running
// job (STRN never makes one) is probed on loads that still count the job's
// old workers.
func (r *SyncRule) Assign(v *env.View, ds []env.Decision) error {
	if r.WorkerCPU == 0 {
		r.WorkerCPU = DefaultWorkerCPU
	}
	if r.WorkerMemBW == 0 {
		r.WorkerMemBW = DefaultWorkerMemBW
	}
	if r.SyncMargin == 0 {
		r.SyncMargin = DefaultSyncMargin
	}
	if r.Syncs == nil {
		r.Syncs = DefaultSyncs
	}
	pr, _ := v.Model.(env.Prober)
	loaded := false
	for i := range ds {
		d := &ds[i]
		if len(d.Nodes) == 0 {
			continue
		}
		j := policies.ActiveJob(v, d.Job)
		if j == nil {
			return fmt.Errorf("strn: sync rule: decision for job %d, which is not active", d.Job)
		}
		if !loaded {
			r.load = policies.NodeLoads(v, r.load)
			loaded = true
		}
		nodes, take := policies.NodeShares(d.Nodes)
		var peak env.Usage
		for _, n := range nodes {
			u := r.load[n]
			peak = env.Usage{CPU: max(peak.CPU, u.CPU), MemBW: max(peak.MemBW, u.MemBW), Net: max(peak.Net, u.Net)}
		}
		d.Sync, _ = ChooseSync(pr, j, take, peak, r.Syncs, r.SyncMargin)
		// Book the job's load as STRN's Commit does.
		policies.BookLoad(r.load, nodes, take, r.WorkerCPU, r.WorkerMemBW)
	}
	return nil
}
