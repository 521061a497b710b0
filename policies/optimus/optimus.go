package optimus

import (
	"fmt"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
)

// Name is the policy's registry name.
const Name = "optimus"

// Optimus is the Optimus+Oracle policy.
type Optimus struct{}

var _ policies.Policy = (*Optimus)(nil)

// New returns an Optimus policy.
func New(policies.Config) (policies.Policy, error) { return &Optimus{}, nil }

// Schedule implements policies.Policy. When v.Done is closed it stops
// before the next job or replica it weighs and returns env.ErrCancelled.
func (*Optimus) Schedule(v *env.View) ([]env.Decision, error) {
	if len(v.Active) == 0 {
		return nil, nil
	}
	if v.Cancelled() {
		return nil, env.ErrCancelled
	}
	o, ok := v.Model.(env.Oracle)
	if !ok {
		return nil, fmt.Errorf("optimus: model %s has no oracle", v.Model.Name())
	}
	gpn := 0
	for _, n := range v.Cluster.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	n := len(v.Active)
	remaining := make([]float64, n)
	maxRep := make([]int, n)
	replicas := make([]int, n)
	gain := make([]float64, n)
	for i, j := range v.Active {
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		remaining[i] = o.RemainingIterations(j)
		maxRep[i] = o.MaxReplicas(j)
	}
	marginal := func(i int) float64 {
		j := v.Active[i]
		return (o.StepTime(j, replicas[i], gpn) - o.StepTime(j, replicas[i]+1, gpn)) * remaining[i]
	}
	gpus := v.Cluster.TotalGPUs()
	for i := range v.Active {
		if gpus < 1 {
			continue
		}
		replicas[i] = 1
		gpus--
		if replicas[i]+1 <= maxRep[i] && gpus >= 1 {
			gain[i] = marginal(i)
		}
	}
	for gpus > 0 {
		if v.Cancelled() {
			return nil, env.ErrCancelled
		}
		best := 0
		for i := range gain {
			if gain[i] > gain[best] {
				best = i
			}
		}
		if !(gain[best] > 0) {
			break
		}
		replicas[best]++
		if replicas[best]+1 > maxRep[best] || gpus < 1 {
			gain[best] = 0
		} else {
			gain[best] = marginal(best)
		}
		gpus--
	}
	// Placements: keep unchanged sizes, pack the rest smallest first.
	free := make([]int, len(v.Cluster.Nodes))
	for i, nd := range v.Cluster.Nodes {
		free[i] = nd.GPUs
	}
	want := make(map[int][]int, n)
	for i, j := range v.Active {
		if len(j.Alloc) > 0 && len(j.Alloc) == replicas[i] {
			want[j.ID] = j.Alloc
			for _, nd := range j.Alloc {
				free[nd]--
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return replicas[a] - replicas[b] })
	for _, i := range order {
		j := v.Active[i]
		if replicas[i] > 0 && len(want[j.ID]) == 0 {
			want[j.ID] = env.PackMostFree(free, replicas[i])
		}
	}
	return policies.Diff(v, want), nil
}
